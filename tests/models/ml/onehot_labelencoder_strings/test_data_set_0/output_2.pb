(2setosa2setosa2setosa2unknown2setosa2setosa2setosa2setosa2setosa2setosa2setosa2setosa2
versicolor2
versicolor2
versicolor2
versicolor2
versicolor2
versicolor2
versicolor2
versicolor2
versicolor2
versicolor2
versicolor2
versicolor2
versicolor2
versicolor2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginicaBback