------------------------- MODULE TraceTransactional -------------------------
(***************************************************************************)
(* TLC trace validation of a transactional trace: the coordinator and the  *)
(* leaders of TransactionalProducer held to every transactional answer a   *)
(* real broker gave, then TransactionalProducer's properties evaluated on  *)
(* the log the run left.                                                   *)
(*                                                                         *)
(* Like TraceWire, it is the broker's side: the client's requests are      *)
(* taken as given (what it sent, with which epoch, is on the lines), so    *)
(* it serves our producer's traces and kcheck proxy's alike.  What it      *)
(* explains:                                                               *)
(*  - the coordinator's answers (TransactionalProducer's CoordAnswer and   *)
(*    CoordHandles, through its own coord and markersDue): InitProducerId  *)
(*    (the first gives the epoch; TV1's KIP-360 bump after an abort), each *)
(*    AddPartitionsToTxn answer (TV1), each EndTxn answer and, under TV2,  *)
(*    the epoch it returned;                                               *)
(*  - under TV2, a produce answered as written (NONE or                    *)
(*    DUPLICATE_SEQUENCE_NUMBER): its leader added the partition to the    *)
(*    transaction (CoordCheck: the coordinator's epoch, no decision being  *)
(*    written), or it was in it already;                                   *)
(*  - the markers in the read-back: on each partition, in offset order,    *)
(*    one for each decision of the coordinator that included it, in the    *)
(*    order decided, with the decision's type and epoch (WriteMarker), and *)
(*    none other; a decision may still have markers due when the run ends  *)
(*    (a hanging transaction), and then every later one on that partition  *)
(*    too;                                                                 *)
(*  - each ReadCommitted line (format 6): every record a read_committed    *)
(*    consumer returned is Visible in the log read back.                   *)
(* A line nothing explains stops TLC there (rejected at that line).        *)
(*                                                                         *)
(* The idempotent side of each produce answer (de-duplication, sequences,  *)
(* offsets) is not judged here: that is IdempotentProducer's, which the Go *)
(* mirror holds the trace to (checker/replay).  Which transaction a record *)
(* belongs to is the translation's (checker/tv, txn.go): the one its batch *)
(* was sent in, the batches sent after the previous transaction's end and  *)
(* before its own EndTxn (tracer/FORMAT.md); a record's b is that number,  *)
(* so that TransactionalProducer's TxnOf(b) is it (NumBatches = NumTxns).  *)
(*                                                                         *)
(* What the trace does not show is the broker's choice, taken where an     *)
(* answer needs it, as silent steps (l unchanged):                         *)
(*  - the coordinator's marker sender writing the markers due (the ones    *)
(*    the read-back holds): MarkersWritten, which completes the            *)
(*    transaction once none is due;                                        *)
(*  - transaction.timeout.ms aborting an ongoing transaction               *)
(*    (TransactionalProducer's CoordTimeout), only where the read-back     *)
(*    holds that abort's markers.                                          *)
(*                                                                         *)
(* Once every line is explained the properties are evaluated in the final  *)
(* state and each one violated is printed (<<"kcheck-violated", name>>)    *)
(* before "kcheck-accepted": a trace can be accepted by the rules and      *)
(* violate NoWriteInOtherTxn, as KAFKA-17754 is under TV1.                 *)
(*                                                                         *)
(* `kcheck verify --tlc` writes TraceData.tla next to this module          *)
(* (checker/tv/txn.go): TraceLog; TParts, the partitions; TTxns, the       *)
(* transactions (1..TTxns); TBegun, the highest transaction begun;         *)
(* TMarkers[p], our producer's markers read back from p, in offset order   *)
(* ([ctl, ep]); TSent[t], the record ids sent in transaction t.  The      *)
(* configuration sets TV from the header, and NumBatches = NumTxns = TTxns.*)
(***************************************************************************)
EXTENDS TransactionalProducer, TraceData, TLC

VARIABLES
    l,      \* the next line of TraceLog to explain
    mk,     \* mk[p]: the index in TMarkers[p] of the next marker not yet written
    ended   \* the transactions whose EndTxn the coordinator answered NONE

tvars == <<l, mk, ended>>

Ev == TraceLog[l]

\* The fields of a record of the read-back and of a coordinator request.
CtlOf(st) == IF st \in {"PrepareCommit", "CompleteCommit"} THEN "COMMIT" ELSE "ABORT"

\* The marker read back next on p is the one the coordinator's decision writes
\* (WriteMarker: the decision's type, the coordinator's epoch).  Under TV2 kfake
\* writes the transaction's epoch rather than the bumped one (its EndTxn bumps
\* after the markers); both are taken.
MarkerEps == IF TV = "TV2" THEN {coord.ep, coord.ep - 1} ELSE {coord.ep}
NextMarkerIs(p, ctl, eps) ==
    /\ mk[p] <= Len(TMarkers[p])
    /\ TMarkers[p][mk[p]].ctl = ctl
    /\ TMarkers[p][mk[p]].ep \in eps

-----------------------------------------------------------------------------
(* Silent steps: the broker's choices the trace does not show. *)

\* TransactionalProducer's WriteMarker for every partition of markersDue whose
\* marker the read-back holds, at once (their order does not matter to any
\* answer: the coordinator waits for all of them), and the transaction's
\* completion once none is due (TransactionMetadata.prepareComplete).  A
\* marker the read-back does not hold is never written: it stays due.
MarkersWritten ==
    LET W == {p \in markersDue : NextMarkerIs(p, CtlOf(coord.st), MarkerEps)} IN
    /\ coord.st \in Preparing
    /\ W # {}
    /\ mk' = [p \in Partitions |-> IF p \in W THEN mk[p] + 1 ELSE mk[p]]
    /\ markersDue' = markersDue \ W
    /\ coord' = IF markersDue = W
                THEN [st |-> IF coord.st = "PrepareCommit" THEN "CompleteCommit" ELSE "CompleteAbort",
                      ep |-> coord.ep, parts |-> {}]
                ELSE coord
    /\ UNCHANGED <<vars, txn, creqs, cresps, lateP, lateC, ongoing, decided, told, l, ended>>

\* TransactionalProducer's CoordTimeout (transaction.timeout.ms: abort with the
\* epoch + 1), where the read-back holds that abort's markers on every partition
\* of the transaction: a timeout that wrote nothing explains nothing.
Timeout ==
    /\ coord.parts # {}
    /\ \A p \in coord.parts :
          NextMarkerIs(p, "ABORT", IF TV = "TV2" THEN {coord.ep + 1, coord.ep} ELSE {coord.ep + 1})
    /\ CoordTimeout
    /\ UNCHANGED tvars

-----------------------------------------------------------------------------
(* The lines. *)

\* InitProducerId with the transactional id.  The first (or a new producer id:
\* the coordinator's state for it starts afresh) gives the epoch; one with the
\* same producer id is the client's request with its epoch (TV1, KIP-360: after
\* an abort that needs a bump), which the coordinator must answer NONE with
\* this epoch (CoordAnswer, CoordHandles: prepareIncrementProducerEpoch).
InitLine ==
    /\ Ev.ev = "Init"
    /\ IF Ev.new
       THEN /\ coord' = [st |-> "Empty", ep |-> Ev.ep, parts |-> {}]
            /\ markersDue' = {}
       ELSE LET r == [api |-> "InitPid", p |-> AnyPartition, ep |-> epoch, commit |-> FALSE] IN
            /\ CoordAnswer(r).err = "NONE"
            /\ CoordAnswer(r).ep = Ev.ep
            /\ CoordHandles(r)
    /\ epoch' = Ev.ep
    /\ UNCHANGED <<log, ongoing, decided, told, ended, mk>>

\* TV1: the coordinator's answer to AddPartitionsToTxn for p
\* (TransactionCoordinator.handleAddPartitionsToTransaction).
AddPartitionsLine ==
    LET r == [api |-> "AddPartitions", p |-> Ev.p, ep |-> Ev.ep, commit |-> FALSE] IN
    /\ Ev.ev = "AddPartitions"
    /\ CoordAnswer(r).err = Ev.err
    /\ CoordHandles(r)
    /\ UNCHANGED <<log, ongoing, epoch, decided, told, ended, mk>>

\* TV2: a produce to p answered as written.  Its leader added p to the
\* transaction first (ReplicaManager.appendRecords with transaction
\* verification, AddPartitionsToTxn v5: TransactionalProducer's CoordCheck and
\* LeaderHandles), or p was in it already at this epoch (the leader's open
\* transaction: no check).
AppendedLine ==
    LET r == [p |-> Ev.p, ep |-> Ev.ep] IN
    /\ Ev.ev = "Appended"
    /\ \/ /\ coord.st = "Ongoing" /\ Ev.p \in coord.parts /\ Ev.ep = coord.ep
          /\ UNCHANGED <<coord, markersDue>>
       \/ /\ CoordCheck(Ev.p, r) = "OK"
          /\ coord' = [coord EXCEPT !.st = "Ongoing", !.parts = @ \cup {Ev.p}]
          /\ UNCHANGED markersDue
    /\ UNCHANGED <<log, ongoing, epoch, decided, told, ended, mk>>

\* The coordinator's answer to EndTxn (TransactionCoordinator.endTransaction):
\* CoordAnswer's error, and under TV2 its epoch; a decision (Decide, through
\* CoordHandles) puts its markers due.  Answered NONE: the transaction ended,
\* as the application asked (decided); under TV2 the client's epoch is the
\* answer's.
EndTxnLine ==
    LET r == [api |-> "EndTxn", p |-> AnyPartition, ep |-> Ev.ep, commit |-> Ev.commit] IN
    /\ Ev.ev = "EndTxnReceive"
    /\ CoordAnswer(r).err = Ev.err
    /\ (TV = "TV2" /\ Ev.err = "NONE") => Ev.nep = CoordAnswer(r).ep
    /\ CoordHandles(r)
    /\ IF Ev.err = "NONE"
       THEN /\ decided' = [decided EXCEPT ![Ev.tx] = IF Ev.commit THEN "commit" ELSE "abort"]
            /\ ended' = ended \cup {Ev.tx}
            /\ epoch' = IF TV = "TV2" THEN Ev.nep ELSE epoch
       ELSE UNCHANGED <<decided, ended, epoch>>
    /\ UNCHANGED <<log, ongoing, told, mk>>

\* What the application was told of transaction tx (TxnTold): committed or
\* aborted is also what it decided.
ToldLine ==
    /\ Ev.ev = "TxnTold"
    /\ told' = [told EXCEPT ![Ev.tx] = CASE Ev.res = "committed" -> "committed"
                                         [] Ev.res = "aborted"   -> "aborted"
                                         [] Ev.res = "failed"    -> IF @ = "none" THEN "fatal" ELSE @
                                         [] OTHER                -> @]
    /\ decided' = [decided EXCEPT ![Ev.tx] = CASE Ev.res = "committed" -> "commit"
                                             [] Ev.res = "aborted"   -> "abort"
                                             [] OTHER                -> @]
    /\ UNCHANGED <<log, ongoing, coord, markersDue, epoch, ended, mk>>

\* Partition p's log read back: our producer's data records (b: the
\* transaction each was sent in) and markers, in offset order.  Every marker
\* read back must have been written by a decision (mk past the last), and the
\* leader's open transaction is the first record no marker closes
\* (currentTxnFirstOffset, for LSO).
ReadBackLine ==
    LET p == Ev.p
        open == {i \in 1..Len(Ev.log) : Ev.log[i].ctl = "DATA" /\
                   ~\E j \in (i + 1)..Len(Ev.log) : Ev.log[j].ctl # "DATA"}
    IN /\ Ev.ev = "ReadBack"
       /\ mk[p] = Len(TMarkers[p]) + 1
       /\ log' = [log EXCEPT ![p] = Ev.log]
       /\ ongoing' = [ongoing EXCEPT ![p] = IF open = {} THEN 0 ELSE Min(open)]
       /\ UNCHANGED <<coord, markersDue, epoch, decided, told, ended, mk>>

\* A read_committed consumer's records of p (format 6), as indices of the log
\* read back (0: a record the read-back does not hold): each must be Visible
\* (below the last stable offset, closed by a commit marker; the fetch stops at
\* the LSO and the consumer drops the aborted transactions' records).
ReadCommittedLine ==
    /\ Ev.ev = "ReadCommitted"
    /\ \A k \in 1..Len(Ev.idx) : Ev.idx[k] # 0 /\ Visible(Ev.p, Ev.idx[k])
    /\ UNCHANGED <<coord, markersDue, epoch, log, ongoing, decided, told, ended, mk>>

\* Every line moves l on by one; IdempotentProducer's and TransactionalProducer's
\* variables no line names stay as TraceInit set them.
Logged ==
    /\ l <= Len(TraceLog)
    /\ l' = l + 1
    /\ InitLine \/ AddPartitionsLine \/ AppendedLine \/ EndTxnLine \/ ToldLine
       \/ ReadBackLine \/ ReadCommittedLine
    /\ UNCHANGED <<pEpoch, nextSeq, lastAcked, bumpReq, unresolved, lastOk, aged, batch,
                   reqs, resps, pstate, pold, faults, expiries, event,
                   txn, creqs, cresps, lateP, lateC>>

TraceInit ==
    /\ l = 1
    /\ mk = [p \in Partitions |-> 1]
    /\ ended = {}
    \* TransactionalProducer's state: the coordinator before the first
    \* InitProducerId, empty logs until the read-back, nothing decided or told.
    /\ coord = [st |-> "Empty", ep |-> -1, parts |-> {}]
    /\ markersDue = {}
    /\ log = [p \in Partitions |-> <<>>]
    /\ ongoing = [p \in Partitions |-> 0]
    /\ decided = [t \in Txns |-> "none"]
    /\ told = [t \in Txns |-> "none"]
    /\ epoch = -1
    \* The client's side, the produce connections and the leaders' producer
    \* entries are IdempotentProducer's, which the Go mirror checks: constant here.
    /\ pEpoch = <<>> /\ nextSeq = <<>> /\ lastAcked = <<>> /\ bumpReq = <<>> /\ unresolved = <<>>
    /\ lastOk = <<>> /\ aged = <<>> /\ batch = <<>> /\ reqs = <<>> /\ resps = <<>>
    /\ pstate = <<>> /\ pold = <<>> /\ faults = 0 /\ expiries = 0 /\ event = <<>>
    /\ txn = <<>> /\ creqs = <<>> /\ cresps = <<>> /\ lateP = {} /\ lateC = {}

TraceNext == Logged \/ MarkersWritten \/ Timeout

-----------------------------------------------------------------------------
(* The properties, in the final state: TransactionalProducer's, and the final  *)
(* state's reading of the two that are not invariants of the log alone.       *)

\* AckedCommitInLog for real batches: every record sent in a transaction the
\* application was told committed is in the log, committed, once no marker is
\* due.  (The spec's own form quantifies over every partition and its model
\* batches; a real transaction writes to the partitions it chose.)
TraceAckedCommitInLog ==
    LET committed == UNION {{log[p][i].id : i \in {j \in Data(p) : Fate(p, j) = "COMMIT"}} : p \in Partitions} IN
    \A t \in Txns : told[t] = "committed" /\ markersDue = {} => TSent[t] \subseteq committed

\* LSOAdvances, as the end of a run can show it: no record is still open whose
\* transaction the coordinator ended (EndTxn answered NONE) or that a later
\* transaction followed; such a transaction never closes (KAFKA-14402).
TraceLSOAdvances ==
    \A p \in Partitions : \A i \in Data(p) :
        Fate(p, i) = "OPEN" => log[p][i].b \notin ended /\ log[p][i].b >= TBegun

Holds(n) ==
    CASE n = "NoAbortedRead"       -> NoAbortedRead
      [] n = "CommittedAtomically" -> CommittedAtomically
      [] n = "NoWriteInOtherTxn"   -> NoWriteInOtherTxn
      [] n = "AckedCommitInLog"    -> TraceAckedCommitInLog
      [] n = "LSOAdvances"         -> TraceLSOAdvances

Violated ==
    {n \in {"NoAbortedRead", "CommittedAtomically", "NoWriteInOtherTxn", "AckedCommitInLog", "LSOAdvances"} : ~Holds(n)}

TraceFinished == l > Len(TraceLog)

\* As in TraceIdempotentProducer: report each new furthest line; once every
\* line is explained, the properties violated, then acceptance.  The
\* read-back lines come last and fix the final state (every marker the
\* read-back holds written), so the first state past the last line is the one.
PrintViolated == \A n \in Violated : PrintT(<<"kcheck-violated", n>>)

TraceFurthest ==
    /\ \/ l <= TLCGet(1)
       \/ TLCSet(1, l) /\ PrintT(<<"kcheck-furthest", l>>)
    /\ \/ ~TraceFinished
       \/ PrintViolated /\ PrintT(<<"kcheck-accepted", l>>) /\ TLCSet("exit", TRUE)

ASSUME TLCSet(1, 0)
=============================================================================
