-------------------------------- MODULE Toy --------------------------------
\* A toy spec for the tests of package tlc: processes increment a counter and
\* append to a log. Like the real spec it has an event variable describing
\* each step and an action with a parameter. It has an invariant that holds
\* and two that do not, a temporal property violated by a lasso and one
\* violated by stuttering, and terminal states when Reset is left out.
EXTENDS Naturals, Sequences

CONSTANTS Procs, Max

VARIABLES x, log, event

vars == <<x, log, event>>

Init == /\ x = 0
        /\ log = <<>>
        /\ event = [act |-> "Init"]

Inc(p) == /\ x < Max
          /\ x' = x + 1
          /\ log' = Append(log, [p |-> p, v |-> x + 1,
                                 note |-> "a note long enough to make TLC wrap"])
          /\ event' = [act |-> "Inc", p |-> p, seq |-> x]

Reset == /\ x = Max
         /\ x' = 0
         /\ log' = <<>>
         /\ event' = [act |-> "Reset"]

Next == (\E p \in Procs : Inc(p)) \/ Reset

Spec == Init /\ [][Next]_vars /\ WF_vars(Next)

\* Without Reset, the states where x = Max have no successor.
NoResetSpec == Init /\ [][\E p \in Procs : Inc(p)]_vars

TypeOK == x \in 0..Max /\ Len(log) = x
Small == x < Max
Started == x > 0
StaysAtMax == <>[](x = Max)
PassesMax == <>(x > Max)
=============================================================================
