---------------------- MODULE TraceIdempotentProducer ----------------------
(***************************************************************************)
(* TLC trace validation: IdempotentProducer constrained to follow one     *)
(* trace of a real run.                                                    *)
(*                                                                         *)
(* `kcheck verify --tlc` writes TraceData.tla next to this module: TraceLog *)
(* is the trace's events as records, in order, with batches numbered per   *)
(* partition, sequences numbered per batch within their epoch (the spec    *)
(* has one record per batch), and epochs counted from the first; and       *)
(* TraceConnOf maps each partition to the broker (connection) that led it. *)
(* The constants come from the trace's header in the generated .cfg.       *)
(*                                                                         *)
(* Each line must be explained by the spec action of the same name with    *)
(* the same parameters (l moves on by one).  What the broker does without  *)
(* a fault is not in the trace: HandleProduce may happen at any time, as a *)
(* silent step, and TLC tries every place it could go; so is the client's  *)
(* re-arm bound passing (BoundPasses), just before an expiry needs it.     *)
(*                                                                         *)
(* TLC 2.18 has no POSTCONDITION, so the state constraint TraceFurthest   *)
(* prints "kcheck-accepted" when some behaviour of the spec explains the   *)
(* whole trace, and stops TLC there; TLC ending without it means none      *)
(* does, and the furthest line printed is where every explanation broke.   *)
(* The runner uses one worker, breadth first, deadlock checking off.       *)
(***************************************************************************)
EXTENDS IdempotentProducer, TraceData, TLC

VARIABLE l   \* the next line of TraceLog to explain

traceVars == <<vars, l>>

TraceInit == Init /\ l = 1

Ev == TraceLog[l]

\* Not an action of the spec: the application closed the producer with batch b
\* of p still in flight; it fails to the application (outcome unknown).
Abandon(p, b) ==
    /\ batch[p][b].st \in {"sent", "retry"}
    /\ batch' = [batch EXCEPT ![p][b].st = "failed"]
    /\ event' = [act |-> "Abandon", p |-> p, b |-> b]
    /\ UNCHANGED <<epoch, pEpoch, nextSeq, lastAcked, bumpReq, unresolved, lastOk, aged, reqs, resps, broker, faults, expiries>>

\* Not an action of the spec: in a trace checked one part at a time (checker/tv,
\* Split), a partition of another part bumped the producer's epoch.  Bump(q) moves
\* only the producer's epoch and q's own state, and its enabling conditions read
\* only q's, which q's part checks; here the epoch moves as it did.
EpochMoves ==
    /\ Ev.ep = epoch + 1
    /\ epoch' = epoch + 1
    /\ event' = [act |-> "EpochMoves", ep |-> epoch + 1]
    /\ UNCHANGED <<pEpoch, nextSeq, lastAcked, bumpReq, unresolved, lastOk, aged, batch, reqs, resps, broker, faults, expiries>>

\* Not an action of the spec: batch b of p is done (acknowledged or failed) and no
\* request or response on any connection is for it, so no later step reads it.
\* The translator (checker/tv) writes this line then, and numbers batches by the
\* slot each takes when first sent: the lowest free one, which is the lowest
\* unsent batch SendNew drains (Lowest(Unsent(p))).  b's slot becomes unsent
\* again, for a batch the application produces later, and p's log keeps only
\* its last record: no step of trace validation reads more of a log than
\* whether it is empty (Verdict's v45 rule); offsets reach only responses'
\* off fields, which no line compares, and the invariants over the log are the
\* model checker's, not trace validation's.  So the states stay as small as
\* the batches in flight, however long the trace.  spec/README.md, "Trace
\* validation, one partition at a time", has the argument.
\* Some request or response on a connection is for batch b of p.  (A state
\* predicate, negated where it is used: TLC would otherwise take each true
\* disjunct of a \A over the requests as a separate successor.)
Referenced(p, b) ==
    \E c \in Conns : \/ \E i \in 1..Len(reqs[c]) : reqs[c][i].p = p /\ reqs[c][i].b = b
                    \/ \E i \in 1..Len(resps[c]) : resps[c][i].p = p /\ resps[c][i].b = b

Recycle(p, b) ==
    /\ batch[p][b].st \in {"acked", "failed"}
    /\ ~Referenced(p, b)
    /\ batch' = [batch EXCEPT ![p][b] = FreshBatch]
    /\ log' = [log EXCEPT ![p] = IF @ = <<>> THEN @ ELSE <<@[Len(@)]>>]
    /\ event' = [act |-> "Recycle", p |-> p, b |-> b]
    /\ UNCHANGED <<epoch, pEpoch, nextSeq, lastAcked, bumpReq, unresolved, lastOk, aged, reqs, resps, pstate, pold, faults, expiries>>

\* A logged step: the spec action the line names, with its parameters.
Logged ==
    /\ l <= Len(TraceLog)
    /\ l' = l + 1
    /\ CASE Ev.ev = "SendNew" ->
              SendNew(Ev.p) /\ event'.b = Ev.b /\ event'.ep = Ev.ep /\ event'.seq = Ev.seq
         [] Ev.ev = "Resend" ->
              Resend(Ev.p) /\ event'.b = Ev.b /\ event'.ep = Ev.ep /\ event'.seq = Ev.seq
         [] Ev.ev = "Receive" ->
              Receive(Ev.c) /\ event'.p = Ev.p /\ event'.b = Ev.b /\ event'.err = Ev.err
         [] Ev.ev = "Bump" ->
              Bump(Ev.p) /\ event'.ep = Ev.ep
         [] Ev.ev = "ExpireBatch" ->
              ExpireBatch(Ev.p) /\ event'.b = Ev.b
         [] Ev.ev = "ResolveSequences" ->
              ResolveSequences(Ev.p) /\ event'.bump = Ev.bump
         [] Ev.ev = "Disconnect" ->
              Disconnect(Ev.c)
         [] Ev.ev = "RejectBeforeAppend" ->
              RejectBeforeAppend(Ev.c) /\ event'.p = Ev.p /\ event'.ep = Ev.ep
                /\ event'.seq = Ev.seq /\ event'.err = Ev.err
         [] Ev.ev = "AppendThenFail" ->
              AppendThenFail(Ev.c) /\ event'.p = Ev.p /\ event'.ep = Ev.ep
                /\ event'.seq = Ev.seq /\ event'.err = Ev.err
         [] Ev.ev = "ExpireProducerState" ->
              ExpireProducerState(Ev.p)
         [] Ev.ev = "Abandon" ->
              Abandon(Ev.p, Ev.b)
         [] Ev.ev = "EpochMoves" ->
              EpochMoves
         [] Ev.ev = "Recycle" ->
              Recycle(Ev.p, Ev.b)

\* A broker step the trace does not show: an unfaulted produce being handled.
\* It is taken only when the next line needs it (lazily): a Receive on c with
\* no response waiting, a fault on c whose attempt is not at the head of c's
\* requests, or a Disconnect of c whose line says anyHandled (the broker may
\* have handled any prefix of c's requests before the connection went; the
\* translator says FALSE, nothing handled, when every batch lost is next
\* answered with success and nothing else happens to its partition first:
\* then no prefix explains more than the empty one).  Even then only prefixes
\* that end at a request of a partition in the line's matters are taken: for a
\* partition outside it (its lost batches are next answered with success, and
\* nothing else happens to it first) every prefix explains what follows exactly
\* when the empty one does, so a prefix that ends with its requests explains
\* no more than the shorter one before them.  Handling later rather than
\* earlier changes nothing the spec can observe: the broker handles each
\* connection's requests in order whenever it does, the client's rules never
\* look at the broker, and ExpireProducerState needs an idle partition.
NeedsHandling(c) ==
    /\ l <= Len(TraceLog)
    /\ Ev.ev \in {"Receive", "RejectBeforeAppend", "AppendThenFail", "Disconnect"}
    /\ Ev.c = c
    /\ CASE Ev.ev = "Receive" -> resps[c] = <<>>
         [] Ev.ev = "Disconnect" ->
              Ev.anyHandled /\ {i \in 1..Len(reqs[c]) : reqs[c][i].p \in Ev.matters} # {}
         [] OTHER -> reqs[c] # <<>> /\ (Head(reqs[c]).p # Ev.p \/ Head(reqs[c]).ep # Ev.ep
                                            \/ Head(reqs[c]).seq # Ev.seq)

\* The re-arm bound passing (BoundPasses) is not in a trace either: the client's
\* clock is not logged.  ExpireProducerState needs it, so it is a silent step too,
\* taken only when the next line is p's expiry and p is not aged yet: as late as it
\* can be.  That loses no behaviour while the configuration has RearmAfterIdle =
\* FALSE (checker/tv writes it so): then aged is read only by ExpireProducerState,
\* and an earlier BoundPasses could only be undone by an acknowledgement.
NeedsBound(p) ==
    /\ l <= Len(TraceLog)
    /\ Ev.ev = "ExpireProducerState"
    /\ Ev.p = p
    /\ ~aged[p]

Silent == \/ \E c \in Conns : NeedsHandling(c) /\ HandleProduce(c) /\ UNCHANGED l
          \/ \E p \in Partitions : NeedsBound(p) /\ BoundPasses(p) /\ UNCHANGED l

TraceNext == Logged \/ Silent

TraceSpec == TraceInit /\ [][TraceNext]_traceVars

\* The trace is accepted once every line is explained.
TraceFinished == l > Len(TraceLog)

\* A state constraint that only reports: each new furthest line reached
\* (register 1 holds the furthest so far), and acceptance, on which TLC stops
\* at once (TLCSet("exit")) rather than print a witness as long as the trace.
TraceFurthest ==
    /\ \/ l <= TLCGet(1)
       \/ TLCSet(1, l) /\ PrintT(<<"kcheck-furthest", l>>)
    /\ \/ ~TraceFinished
       \/ PrintT(<<"kcheck-accepted", l>>) /\ TLCSet("exit", TRUE)

ASSUME TLCSet(1, 0)
=============================================================================
