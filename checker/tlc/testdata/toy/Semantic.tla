---- MODULE Semantic ----
\* A module that refers to an undefined operator.
VARIABLE x
Init == x = 0
Next == x' = y
====
