------------------------- MODULE TraceTransactional -------------------------
(***************************************************************************)
(* TLC trace validation of a transactional trace: the coordinator and the  *)
(* leaders of TransactionalProducer held to every transactional answer a   *)
(* real broker gave, then TransactionalProducer's properties read on the   *)
(* log the run left.                                                       *)
(*                                                                         *)
(* Like TraceWire, it is the broker's side: the client's requests are      *)
(* taken as given (what it sent, with which epoch, is on the lines), so it *)
(* serves our producer's traces and kcheck proxy's alike.  It explains:    *)
(*  - the coordinator's answers (TransactionalProducer's CoordAnswer and   *)
(*    CoordHandles, on its own coord and markersDue): InitProducerId (the  *)
(*    first gives the epoch; TV1's KIP-360 bump after an abort), each      *)
(*    AddPartitionsToTxn answer (TV1), each EndTxn answer and, under TV2,  *)
(*    the epoch it returned;                                               *)
(*  - under TV2, a produce answered as written (NONE or                    *)
(*    DUPLICATE_SEQUENCE_NUMBER): its leader added the partition to the    *)
(*    transaction (CoordCheck), or it was in it already;                   *)
(*  - the markers read back: on each partition, in offset order, one for   *)
(*    each decision that included it, in the order decided, with the       *)
(*    decision's epoch, and none other (MarkersWritten says why a marker's *)
(*    type is taken as read); a decision may still have markers due when   *)
(*    the run ends (a hanging transaction);                                *)
(*  - each ReadCommitted line (format 6): read_committed returned exactly  *)
(*    the Visible records.                                                 *)
(* A line nothing explains stops TLC there (rejected at that line).        *)
(*                                                                         *)
(* The idempotent side of each produce answer (de-duplication, sequences,  *)
(* offsets) is not judged here: the Go mirror holds the trace to it        *)
(* (checker/replay).  Which transaction a record belongs to is the         *)
(* translation's (checker/tv, txn.go): the one its batch was sent in       *)
(* (tracer/FORMAT.md); a record's b is that number, so that                *)
(* TransactionalProducer's TxnOf(b) is it (NumBatches = NumTxns).          *)
(*                                                                         *)
(* What the trace does not show is the broker's choice, taken as silent    *)
(* steps (l unchanged): the marker sender writing the markers due          *)
(* (MarkersWritten), and transaction.timeout.ms aborting an ongoing        *)
(* transaction (TransactionalProducer's CoordTimeout), only where the      *)
(* read-back holds that abort's markers.                                   *)
(*                                                                         *)
(* Once every line is explained, each property violated is printed         *)
(* (<<"kcheck-violated", name>>) before "kcheck-accepted": a trace can be  *)
(* accepted by the rules and violate NoWriteInOtherTxn, as KAFKA-17754 is  *)
(* under TV1.  The read-back is judged one window at a time (SegmentLine)  *)
(* so that the evaluation stays linear in the log.                         *)
(*                                                                         *)
(* `kcheck verify --tlc` writes TraceData.tla next to this module: TraceLog *)
(* (each line a record, written as an operator's application, as TraceWire *)
(* does); TParts, the partitions; TTxns, the transactions (1..TTxns);      *)
(* TBegun, the highest transaction begun; TRead, the partitions read back; *)
(* TMarkers[p], our producer's markers read back from p in offset order    *)
(* ([ctl, ep]); TSent[t], the ids of the records sent in transaction t to  *)
(* a partition read back.  The configuration sets TV from the header,      *)
(* NumBatches = NumTxns = TTxns, and the other constants as the Java       *)
(* client's (TransactionalProducer's ASSUMEs).                              *)
(***************************************************************************)
EXTENDS TransactionalProducer, TraceData, TLC

VARIABLES
    l,      \* the next line of TraceLog to explain
    mk,     \* mk[p]: the index in TMarkers[p] of the next marker not yet written
    ended,  \* the transactions whose EndTxn the coordinator answered NONE
    \* --- the read-back, window by window (SegmentLine) ---
    viol,   \* the properties a window violated
    fates,  \* fates[t]: the fates ("COMMIT", "ABORT", "OPEN") t's records met
    cids,   \* the ids of the records read back committed
    judge   \* a window is loaded in log, to be judged (Judge)

tvars == <<l, mk, ended, viol, fates, cids, judge>>

Ev == TraceLog[l]

\* The marker a decision being written writes.
CtlOf(st) == IF st \in {"PrepareCommit", "CompleteCommit"} THEN "COMMIT" ELSE "ABORT"

\* The marker read back next on p is the one the coordinator's decision writes
\* (WriteMarker: the decision's type, the coordinator's epoch).  Under TV2 kfake
\* writes the transaction's epoch rather than the bumped one (its EndTxn bumps
\* after the markers); both are taken.
MarkerEps == IF TV = "TV2" THEN {coord.ep, coord.ep - 1} ELSE {coord.ep}
\* A partition the trace did not read back (a run cut off before its
\* read-back) shows no marker: any may have been written.
NextMarkerIs(p, ctls, eps) ==
    \/ p \notin TRead
    \/ /\ mk[p] <= Len(TMarkers[p])
       /\ TMarkers[p][mk[p]].ctl \in ctls
       /\ TMarkers[p][mk[p]].ep \in eps

-----------------------------------------------------------------------------
(* Silent steps: the broker's choices the trace does not show. *)

\* TransactionalProducer's WriteMarker for every partition of markersDue whose
\* marker the read-back holds, at once (their order does not matter to any
\* answer: the coordinator waits for all of them), and the transaction's
\* completion once none is due (TransactionMetadata.prepareComplete).  A
\* marker the read-back does not hold is never written: it stays due.
\* The marker's place (the next of its partition, one per decision that
\* included the partition, in the order decided) and its epoch are the
\* decision's; its type is taken as the read-back shows it.  WriteMarker
\* writes the decision's type (CtlOf(coord.st)), so a marker of the other
\* type breaks no rule of the coordinator's that a later answer could show,
\* only the log's properties: an aborted transaction committed
\* (NoAbortedRead), a commit torn (CommittedAtomically) or lost
\* (AckedCommitInLog), which the final state names, rather than a rejection
\* that names nothing.
MarkersWritten ==
    LET W == {p \in markersDue : NextMarkerIs(p, {"COMMIT", "ABORT"}, MarkerEps)} IN
    /\ coord.st \in Preparing
    /\ W # {}
    /\ mk' = [p \in Partitions |-> IF p \in W THEN mk[p] + 1 ELSE mk[p]]
    /\ markersDue' = markersDue \ W
    /\ coord' = IF markersDue = W
                THEN [st |-> IF coord.st = "PrepareCommit" THEN "CompleteCommit" ELSE "CompleteAbort",
                      ep |-> coord.ep, parts |-> {}]
                ELSE coord
    /\ UNCHANGED <<vars, txn, creqs, cresps, lateP, lateC, ongoing, decided, told, l, ended, viol, fates, cids, judge>>

\* TransactionalProducer's CoordTimeout (transaction.timeout.ms: abort with the
\* epoch + 1), where the read-back holds that abort's markers on every partition
\* of the transaction: a timeout that wrote nothing explains nothing.
Timeout ==
    /\ coord.parts # {}
    /\ \A p \in coord.parts :
          NextMarkerIs(p, {"ABORT"}, IF TV = "TV2" THEN {coord.ep + 1, coord.ep} ELSE {coord.ep + 1})
    /\ CoordTimeout
    /\ UNCHANGED tvars

-----------------------------------------------------------------------------
(* The properties, read on the log the run left: TransactionalProducer's,  *)
(* and the end of a run's reading of the two that are not invariants of    *)
(* the log alone.                                                          *)

\* AckedCommitInLog for real batches: every record sent in a transaction the
\* application was told committed is in the log, committed, once no marker is
\* due.  (The spec's own form quantifies over every partition and its model
\* batches; a real transaction writes to the partitions it chose.)
TraceAckedCommitInLog ==
    \A t \in Txns : told[t] = "committed" /\ markersDue = {} => TSent[t] \subseteq cids

\* LSOAdvances, as the end of a run can show it: no record is still open whose
\* transaction the coordinator ended (EndTxn answered NONE) or that a later
\* transaction followed; such a transaction never closes (KAFKA-14402).
TraceLSOAdvances ==
    \A p \in Partitions : \A i \in Data(p) :
        Fate(p, i) = "OPEN" => log[p][i].b \notin ended /\ log[p][i].b >= TBegun

\* The properties read in one window of the read-back (SegmentLine).
WindowHolds(n) ==
    CASE n = "NoAbortedRead"     -> NoAbortedRead
      [] n = "NoWriteInOtherTxn" -> NoWriteInOtherTxn
      [] n = "LSOAdvances"       -> TraceLSOAdvances

\* Every property violated, once the read-back is in: the windows', and the
\* two read at the end (EndLine's log of fates).
Violated ==
    viol \cup (IF CommittedAtomically THEN {} ELSE {"CommittedAtomically"})
         \cup (IF TraceAckedCommitInLog THEN {} ELSE {"AckedCommitInLog"})

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
    /\ UNCHANGED <<log, ongoing, decided, told, ended, mk, viol, fates, cids>>

\* TV1: the coordinator's answer to AddPartitionsToTxn for p
\* (TransactionCoordinator.handleAddPartitionsToTransaction).
AddPartitionsLine ==
    LET r == [api |-> "AddPartitions", p |-> Ev.p, ep |-> Ev.ep, commit |-> FALSE] IN
    /\ Ev.ev = "AddPartitions"
    /\ CoordAnswer(r).err = Ev.err
    /\ CoordHandles(r)
    /\ UNCHANGED <<log, ongoing, epoch, decided, told, ended, mk, viol, fates, cids>>

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
    /\ UNCHANGED <<log, ongoing, epoch, decided, told, ended, mk, viol, fates, cids>>

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
    /\ UNCHANGED <<log, ongoing, told, mk, viol, fates, cids>>

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
    /\ UNCHANGED <<log, ongoing, coord, markersDue, epoch, ended, mk, viol, fates, cids>>

\* The read-back comes one window at a time.  With one producer, our records
\* between two of its markers on p are closed by the later one (EndOf), and
\* those after its last marker are open: every property but
\* CommittedAtomically and AckedCommitInLog reads a record's window only
\* (NoWriteInOtherTxn compares records with the same EndOf, NoAbortedRead and
\* LSOAdvances one record, its Fate and its place against the LSO, which is
\* where the open window starts).  So each Segment line is one window of p,
\* its records reduced to one per transaction (b, with the ids of the records
\* it stands for) followed by its marker (none for the open one); log holds
\* that window alone, and the window's violations are kept (viol).  This
\* keeps a state as small as a window, and the evaluation linear in the log
\* rather than cubic in it (TransactionalProducer's EndOf scans the log).
\* For CommittedAtomically the fates each transaction's records met are
\* kept (fates); for AckedCommitInLog the ids found committed (cids).  The
\* last window of p also checks that every marker read back from p was
\* written by a decision (mk past the last).
Window(p, w, open) ==
    /\ log' = [q \in Partitions |-> IF q = p THEN w ELSE <<>>]
    \* The leader's open transaction starts the open window (currentTxnFirstOffset).
    /\ ongoing' = [q \in Partitions |-> IF q = p /\ open /\ w # <<>> THEN 1 ELSE 0]

\* A window comes in two steps on its line: Load puts it in log, Judge reads
\* it there (the properties are TransactionalProducer's operators on log) and
\* moves l on.
Load ==
    /\ ~judge
    /\ l <= Len(TraceLog)
    /\ Ev.ev \in {"Segment", "ReadCommitted", "ReadCommittedSkipped"}
    /\ Ev.ev = "Segment" /\ Ev.last => mk[Ev.p] = Len(TMarkers[Ev.p]) + 1
    /\ Window(Ev.p, Ev.log, Ev.open)
    /\ judge' = TRUE
    /\ UNCHANGED <<coord, markersDue, epoch, decided, told, ended, mk, viol, fates, cids, l>>
    /\ UNCHANGED <<pEpoch, nextSeq, lastAcked, bumpReq, unresolved, lastOk, aged, batch,
                   reqs, resps, pstate, pold, faults, expiries, event,
                   txn, creqs, cresps, lateP, lateC>>

\* A window of the read-back (Segment): its violations, its records' fates,
\* its committed ids.
JudgeSegment ==
    LET p == Ev.p IN
    /\ Ev.ev = "Segment"
    /\ viol' = viol \cup {n \in {"NoAbortedRead", "NoWriteInOtherTxn", "LSOAdvances"} : ~WindowHolds(n)}
    /\ fates' = [t \in Txns |-> fates[t] \cup {Fate(p, i) : i \in {j \in Data(p) : log[p][j].b = t}}]
    /\ cids' = cids \cup UNION {log[p][i].ids : i \in {j \in Data(p) : Fate(p, j) = "COMMIT"}}

\* What a read_committed consumer returned of p (format 6), against one
\* window, each record as the index of the record standing for it (0: a
\* record the read-back does not hold).  It returns exactly the Visible ones
\* (below the last stable offset, closed by a commit marker: the fetch stops
\* at the LSO and the consumer drops the aborted transactions' records,
\* FetchCollector): ReadCommitted lists those of the window it returned,
\* each Visible; ReadCommittedSkipped those it did not, none Visible.  One
\* line of the trace is such lines for each window it touches.
JudgeReadCommitted ==
    /\ \/ Ev.ev = "ReadCommitted" /\ \A k \in 1..Len(Ev.idx) : Ev.idx[k] # 0 /\ Visible(Ev.p, Ev.idx[k])
       \/ Ev.ev = "ReadCommittedSkipped" /\ \A k \in 1..Len(Ev.idx) : ~Visible(Ev.p, Ev.idx[k])
    /\ UNCHANGED <<viol, fates, cids>>

Judge ==
    /\ judge
    /\ l' = l + 1
    /\ judge' = FALSE
    /\ JudgeSegment \/ JudgeReadCommitted
    /\ UNCHANGED <<coord, markersDue, epoch, decided, told, ended, mk, log, ongoing>>
    /\ UNCHANGED <<pEpoch, nextSeq, lastAcked, bumpReq, unresolved, lastOk, aged, batch,
                   reqs, resps, pstate, pold, faults, expiries, event,
                   txn, creqs, cresps, lateP, lateC>>

\* The end of the read-back: for CommittedAtomically, log becomes the fates
\* each transaction met, one record for each (a transaction and a fate), in
\* one log: its committed records, a commit marker, its aborted ones, an abort
\* marker, its open ones.
Reduced(f) ==
    LET has(t) == f \in fates[t]
        ts == SelectSeq([t \in Txns |-> t], has)
    IN [i \in 1..Len(ts) |-> [b |-> ts[i], ep |-> 0, seq |-> 0, ctl |-> "DATA", ids |-> {}]]
MarkerOf(ctl) == <<[b |-> Marker, ep |-> 0, seq |-> -1, ctl |-> ctl, ids |-> {}]>>

EndLine ==
    /\ Ev.ev = "End"
    /\ log' = [q \in Partitions |-> IF q = AnyPartition
                                   THEN Reduced("COMMIT") \o MarkerOf("COMMIT") \o Reduced("ABORT") \o MarkerOf("ABORT")
                                        \o Reduced("OPEN")
                                   ELSE <<>>]
    /\ ongoing' = [q \in Partitions |-> 0]
    /\ UNCHANGED <<coord, markersDue, epoch, decided, told, ended, mk, viol, fates, cids>>

\* Every line moves l on by one; IdempotentProducer's and TransactionalProducer's
\* variables no line names stay as TraceInit set them.
Logged ==
    /\ ~judge
    /\ l <= Len(TraceLog)
    /\ l' = l + 1
    /\ judge' = FALSE
    /\ InitLine \/ AddPartitionsLine \/ AppendedLine \/ EndTxnLine \/ ToldLine \/ EndLine
    /\ UNCHANGED <<pEpoch, nextSeq, lastAcked, bumpReq, unresolved, lastOk, aged, batch,
                   reqs, resps, pstate, pold, faults, expiries, event,
                   txn, creqs, cresps, lateP, lateC>>

TraceInit ==
    /\ l = 1
    /\ mk = [p \in Partitions |-> 1]
    /\ ended = {}
    /\ viol = {}
    /\ fates = [t \in Txns |-> {}]
    /\ cids = {}
    /\ judge = FALSE
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

TraceNext == Logged \/ Load \/ Judge \/ MarkersWritten \/ Timeout

\* What tells two states apart (the configuration's VIEW): all but event, which
\* CoordTimeout sets and no line reads, so that a transaction explained with
\* a timeout and without one, leaving the same coordinator, is one state.
TraceView == <<l, mk, ended, viol, fates, cids, judge, coord, markersDue, epoch, log, ongoing, decided, told>>

TraceFinished == l > Len(TraceLog) /\ ~judge

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
