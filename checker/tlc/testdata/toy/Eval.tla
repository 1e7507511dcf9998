---- MODULE Eval ----
\* A module with a single variable whose invariant fails to evaluate.
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x < 3 /\ x' = x + 1
Inv == 6 \div (2 - x) > 0
====
