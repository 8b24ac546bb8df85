(2setosa2setosa2setosa2rosa2setosa2setosa2setosa2setosa2setosa2setosa2setosa2setosa2
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
versicolor2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginica2	virginicaBS