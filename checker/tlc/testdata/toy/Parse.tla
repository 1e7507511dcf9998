---- MODULE Parse ----
\* A module with a syntax error.
VARIABLE x
Init == x = 0 /\
Next == x' = x
====
