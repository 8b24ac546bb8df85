(2setosa2setosa2setosa2setosa2setosa2setosa2setosa2setosa2setosa2setosa2setosa2setosa2
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
versicolor2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginicaBW