----------------------------- MODULE TraceWire -----------------------------
(***************************************************************************)
(* TLC trace validation of a trace of the wire (kcheck proxy): the broker *)
(* side of IdempotentProducer held to every answer a real broker gave.     *)
(*                                                                         *)
(* A proxy sees a client's attempts and the broker's answers, not the      *)
(* client's own steps (its epoch bumps, delivery timeouts, which rules it  *)
(* follows).  So the client's attempts are taken as given -- each SendNew  *)
(* or Resend line puts an attempt (epoch, base sequence, record count) on  *)
(* its connection -- and what TLC explores is the broker: for each answer, *)
(* every broker state the earlier answers leave possible, and whether the  *)
(* broker's producer state for the partition (ProducerStateManager's entry *)
(* and the log's end offset) explains it.                                  *)
(*                                                                         *)
(* `kcheck verify --tlc` writes TraceData.tla next to this module (checker *)
(* /tv/wire.go): TraceLog, the trace's lines as records; WParts, WConns,   *)
(* WKeys (the batches, numbered 1..n over (partition, batch id)), KeyPart  *)
(* (each batch's partition) and WNoStateRule (the header's no_state_rule). *)
(*                                                                         *)
(* The broker's rules are IdempotentProducer's (Verdict, NewState, DupOf,  *)
(* HandleProduce, RejectBeforeAppend, AppendThenFail, ExpireProducerState) *)
(* restated for real batches: a batch carries n records with sequences     *)
(* seq .. seq+n-1 (wrapping at 2^31-1 as DefaultRecordBatch.               *)
(* incrementSequence does), de-duplication matches (epoch, first, last)    *)
(* exactly, and offsets count records.  IdempotentProducer's one-record    *)
(* batches are the case n = 1.  Partitions are independent, as in Kafka    *)
(* (one ProducerStateManager and log per partition), so the broker state   *)
(* is a function of the partition.                                         *)
(*                                                                         *)
(* What the wire does not show is the broker's choice, and every choice  *)
(* is kept: bk[p] is the SET of broker states for p that explain the      *)
(* answers so far (the subset construction of the broker's nondeterminism; *)
(* partitions are independent, so a behaviour explains the trace iff each *)
(* partition's set stays non-empty, and keeping sets per partition avoids  *)
(* TLC's product of every partition's choices).  The choices, folded into  *)
(* the step that needs them (an answer of the partition):                  *)
(*  - an attempt whose answer never came (lost with its connection, or     *)
(*    superseded by the same batch sent on another connection) may have    *)
(*    been handled or not (Resolved);                                      *)
(*  - producer-state expiry (the header's state-expiry fault: the real     *)
(*    broker's producer.id.expiration.ms, unseen), just before an attempt  *)
(*    the translation flags: sent at least the fault's delay after the     *)
(*    partition's last attempt answered as appended (Expired);             *)
(*  - a real broker's own retriable error (a leader election, replicas out *)
(*    of sync) may have come before the append or after it (Outs).         *)
(* The broker handles a partition's answered attempts in the order their   *)
(* answers were passed to the client (the Go mirror, checker/replay, takes *)
(* the same order).                                                        *)
(*                                                                         *)
(* TLC 2.18 has no POSTCONDITION: the state constraint TraceFurthest       *)
(* prints "kcheck-accepted" and stops TLC when the last line is explained, *)
(* and each new furthest line otherwise (as TraceIdempotentProducer).      *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets, TLC, TraceData

ASSUME WNoStateRule \in {"pre25", "v25to44", "v45", "kafka19880"}

\* ProducerStateEntry.NUM_BATCHES_TO_RETAIN.
DedupWindow == 5
MaxInt == 2147483647

VARIABLES
    l,      \* the next line of TraceLog to explain
    pid,    \* the producer id (numbered by the translation) InitProducerId gave; 0: none yet
    out,    \* out[c]: the produce requests outstanding on client connection c, oldest first:
            \*   [req, left (the batches not yet answered), begun (part of its answer came)]
    cur,    \* cur[k]: batch k's latest attempt [st, c, req, ep, seq, n], for the batches in
            \*   flight only (the function's domain; Cur(k) is NoAttempt for any other: never
            \*   sent, or acknowledged); st: "sent" | "retry" (its attempt ended without a
            \*   success: the client may send it again).  Only the batches in flight, so that
            \*   a state's size, and a step's cost, does not grow with the trace
    bk,     \* bk[p]: every state of the broker for p that explains the answers so far; a state
            \*   is our producer's entry (none: no state; else ep and win, the retained batches
            \*   [fst, lst, off], oldest first) and len, the log end offset
    unc,    \* unc[p]: attempts of p the broker may or may not have handled, in the order sent
    flt     \* flt[p]: injected faults [ep, seq, kind, err] waiting for the attempt they hit

wvars == <<l, pid, out, cur, bk, unc, flt>>

NoBroker(len) == [none |-> TRUE, ep |-> -1, win |-> <<>>, len |-> len]
NoAttempt == [st |-> "none", c |-> -1, req |-> -1, ep |-> -1, seq |-> -1, n |-> 0]
NoFault == [kind |-> "", err |-> ""]

Min(S) == CHOOSE i \in S : \A j \in S : i <= j

\* DefaultRecordBatch.incrementSequence: sequences wrap to 0 after Integer.MAX_VALUE.
NextSeq(s, n) == IF s > MaxInt - n THEN n - (MaxInt - s) - 1 ELSE s + n
LastSeq(a) == NextSeq(a.seq, a.n - 1)

-----------------------------------------------------------------------------
(* The broker's rules, for an attempt a = [ep, seq, n] on partition state s. *)

\* ProducerStateEntry.findDuplicateBatch: same epoch, same first and last sequence
\* as one of the retained batches (IdempotentProducer's DupOf).
Dups(s, a) == {i \in 1..Len(s.win) : ~s.none /\ s.ep = a.ep /\ s.win[i].fst = a.seq /\ s.win[i].lst = LastSeq(a)}

\* The offset a duplicate is answered with: the original batch's (the oldest match).
DupOff(s, a) == s.win[Min(Dups(s, a))].off

\* IdempotentProducer's Verdict: UnifiedLog.analyzeAndValidateProducerState looks for
\* a duplicate first, then ProducerAppendInfo.checkProducerEpoch, then
\* ProducerAppendInfo.checkSequence (storage/src/main/java/org/apache/kafka/storage/
\* internals/log/).  With no entry for the producer the rule differs by version
\* (IdempotentProducer's NoStateRule).
Verdict(s, a) ==
    IF Dups(s, a) # {} THEN "DUPLICATE"
    ELSE IF s.none THEN
        CASE a.seq = 0                                 -> "APPEND"
          [] WNoStateRule = "v25to44"                  -> "APPEND"
          [] WNoStateRule = "v45" /\ s.len = 0         -> "OUT_OF_ORDER_SEQUENCE_NUMBER"
          [] WNoStateRule = "v45"                      -> "APPEND"
          [] WNoStateRule \in {"pre25", "kafka19880"}  -> "UNKNOWN_PRODUCER_ID"
    ELSE IF a.ep < s.ep THEN "INVALID_PRODUCER_EPOCH"
    ELSE IF a.ep > s.ep THEN
        \* A new epoch must start at sequence 0 (checkSequence, currentEntry epoch check).
        IF a.seq = 0 THEN "APPEND" ELSE "OUT_OF_ORDER_SEQUENCE_NUMBER"
    ELSE IF a.seq = NextSeq(s.win[Len(s.win)].lst, 1) THEN "APPEND"
    ELSE "OUT_OF_ORDER_SEQUENCE_NUMBER"

\* IdempotentProducer's NewState, and the log's end offset: a appended at offset off
\* (ProducerAppendInfo.appendDataBatch, ProducerStateEntry.addBatch: a new epoch starts
\* a new window; at most DedupWindow batches are retained).
Apply(s, a, off) ==
    LET w   == [fst |-> a.seq, lst |-> LastSeq(a), off |-> off]
        win == IF ~s.none /\ s.ep = a.ep THEN Append(s.win, w) ELSE <<w>>
    IN [none |-> FALSE, ep |-> a.ep, win |-> IF Len(win) > DedupWindow THEN Tail(win) ELSE win,
        len |-> off + a.n]

\* The broker's side of an answer e to attempt a, handled on partition state s, with
\* the injected fault f (if any) that hit it: the states after it that explain e
\* ({} if s cannot).
\*  - HandleProduce: the verdict's answer; an append at the offset answered, which is
\*    the log end offset or later (another producer may have written in between); a
\*    duplicate answered with the original offset, or DUPLICATE_SEQUENCE_NUMBER
\*    (which clients take as success);
\*  - RejectBeforeAppend (an injected error before the append: nothing written);
\*  - AppendThenFail (an injected error in place of the broker's answer: the broker
\*    handled the attempt as usual, appending it if the verdict says so);
\*  - a real broker's own retriable error (e.own: Partition.appendRecordsToLeader's
\*    NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS; DelayedProduce's REQUEST_TIMED_OUT),
\*    before the append or after it: both;
\*  - kfake keeps one epoch per producer id (kfake 00_produce.go): its
\*    INVALID_PRODUCER_EPOCH to an attempt below the highest epoch sent (e.kstale)
\*    changes nothing.
Outs(s, a, f, e) ==
    LET v == Verdict(s, a) IN
    IF e.kstale THEN {s}
    ELSE CASE f.kind = "RejectBeforeAppend" -> IF e.err = f.err THEN {s} ELSE {}
           [] f.kind = "AppendThenFail" ->
                 IF e.err = f.err THEN {IF v = "APPEND" THEN Apply(s, a, s.len) ELSE s} ELSE {}
           [] e.own -> {s} \cup (IF v = "APPEND" THEN {Apply(s, a, s.len)} ELSE {})
           [] v = "APPEND" -> IF e.err = "NONE" /\ e.off >= s.len THEN {Apply(s, a, e.off)} ELSE {}
           [] v = "DUPLICATE" ->
                 IF \/ e.err = "DUPLICATE_SEQUENCE_NUMBER"
                    \/ e.err = "NONE" /\ e.off = DupOff(s, a)
                 THEN {s} ELSE {}
           [] OTHER -> IF e.err = v THEN {s} ELSE {}

\* What the wire does not show, before an answered attempt of a partition whose
\* possible states are S is handled:
\*  - Resolved: the attempts U whose answers never came (lost with their connection,
\*    or superseded by the same batch sent on another connection), in the order sent,
\*    each handled (appended if the verdict says so) or not, since any of them may
\*    have been refused with its error answer lost: the attempts appended are any
\*    subsequence of U.  Requests of one connection are handled in order, and these
\*    were all sent before the attempt being answered.
\*  - Expired: producer-state expiry (ProducerStateManager.removeExpiredProducers:
\*    isProducerExpired once producer.id.expiration.ms has passed since the entry's
\*    lastTimestamp, the max timestamp of the last batch appended), or not yet (the
\*    check runs every producer.id.expiration.check.interval.ms).  The log keeps its
\*    end offset.
RECURSIVE Resolved(_, _)
Resolved(S, U) ==
    IF U = <<>> THEN S
    ELSE Resolved(S \cup {Apply(s, Head(U), s.len) : s \in {t \in S : Verdict(t, Head(U)) = "APPEND"}}, Tail(U))

Expired(S) == S \cup {NoBroker(s.len) : s \in S}

-----------------------------------------------------------------------------
(* The lines. *)

Ev == TraceLog[l]

TraceInit ==
    /\ l = 1
    /\ pid = 0
    /\ out = [c \in WConns |-> <<>>]
    /\ cur = <<>>
    /\ bk = [p \in WParts |-> {NoBroker(0)}]
    /\ unc = [p \in WParts |-> <<>>]
    /\ flt = [p \in WParts |-> <<>>]

Cur(k) == IF k \in DOMAIN cur THEN cur[k] ELSE NoAttempt

Begun(c, req) == \E i \in 1..Len(out[c]) : out[c][i].req = req /\ out[c][i].begun

\* InitProducerId: the producer id the broker gave.  A new producer id (e.new) has no
\* state on any partition (ProducerStateManager keys its entries by producer id); the
\* requests and batches of the old one are forgotten, and what the old id's
\* unanswered attempts may have written is kept in the logs' end offsets (Resolve
\* runs first).
Init ==
    /\ Ev.ev = "Init"
    /\ pid' = Ev.pid
    /\ IF Ev.new
       THEN /\ bk' = [p \in WParts |-> {NoBroker(s.len) : s \in Resolved(bk[p], unc[p])}]
            /\ unc' = [p \in WParts |-> <<>>]
            /\ out' = [c \in WConns |-> <<>>]
            /\ cur' = <<>>
            /\ flt' = [p \in WParts |-> <<>>]
       ELSE UNCHANGED <<bk, unc, out, cur, flt>>

\* An attempt on the wire (SendNew for a batch's first, Resend for any later one),
\* taken as given: it joins request e.req on connection e.c.  A batch is sent new only
\* when it is not in flight, with as many record ids as records; a retry keeps its
\* record count.  A batch sent again while its last attempt is still outstanding (on
\* another connection, before the proxy saw the old one close) leaves that attempt
\* handled or not (unc), unless part of its request's answer came: a response
\* answers every partition of its request at once.
Send ==
    LET e  == Ev
        k  == e.k
        cb == Cur(k)
        oc == out[e.c]
        at == {i \in 1..Len(oc) : oc[i].req = e.req}
    IN /\ e.ev = "Send"
       /\ e.pid = pid
       /\ e.n >= 1
       /\ e.new => e.nrecs = e.n /\ cb.st = "none"
       /\ cb.st = "sent" => ~Begun(cb.c, cb.req)
       /\ cb.st = "retry" => cb.n = e.n
       /\ unc' = IF cb.st = "sent"
                 THEN [unc EXCEPT ![e.p] = Append(@, [ep |-> cb.ep, seq |-> cb.seq, n |-> cb.n])]
                 ELSE unc
       /\ cur' = (k :> [st |-> "sent", c |-> e.c, req |-> e.req, ep |-> e.ep, seq |-> e.seq, n |-> e.n]) @@ cur
       /\ out' = [out EXCEPT ![e.c] =
                    IF at # {} THEN [i \in 1..Len(oc) |-> IF i \in at THEN [oc[i] EXCEPT !.left = @ \cup {k}] ELSE oc[i]]
                    ELSE Append(oc, [req |-> e.req, left |-> {k}, begun |-> FALSE])]
       /\ UNCHANGED <<pid, bk, flt>>

\* An answer, as the proxy passed it to the client: for the batch's latest attempt,
\* in the oldest request outstanding on its connection (SocketServer mutes a
\* connection while one of its requests is handled, so a broker answers a
\* connection's requests one at a time, in the order sent); the partitions of one
\* response in any order.  The broker's handling of the attempt happens here, as
\* late as it can be (nothing else reads the partition's state in between): the
\* attempts of p whose answers never came first (Resolved), then an expiry the
\* translation flags (e.expire), then the attempt on every state still possible.
\* Some state must explain the answer.
Receive ==
    LET e  == Ev
        k  == e.k
        p  == e.p
        c  == e.c
        cb == Cur(k)
        a  == [ep |-> cb.ep, seq |-> cb.seq, n |-> cb.n]
        fi == {i \in 1..Len(flt[p]) : flt[p][i].ep = a.ep /\ flt[p][i].seq = a.seq}
        f  == IF fi = {} THEN NoFault ELSE flt[p][Min(fi)]
        h  == Head(out[c])
        S  == LET R == Resolved(bk[p], unc[p]) IN IF e.expire THEN Expired(R) ELSE R
        T  == UNION {Outs(s, a, f, e) : s \in S}
    IN /\ e.ev = "Receive"
       /\ e.pid = pid
       /\ cb.st = "sent" /\ cb.req = e.req
       /\ e.ep = cb.ep /\ e.seq = cb.seq
       /\ out[c] # <<>> /\ h.req = e.req /\ k \in h.left
       /\ T # {}
       /\ bk' = [bk EXCEPT ![p] = T]
       /\ unc' = [unc EXCEPT ![p] = <<>>]
       /\ out' = [out EXCEPT ![c] = IF h.left = {k} THEN Tail(out[c])
                                     ELSE <<[h EXCEPT !.left = @ \ {k}, !.begun = TRUE]>> \o Tail(out[c])]
       /\ flt' = IF fi = {} THEN flt
                 ELSE [flt EXCEPT ![p] = [i \in 1..(Len(flt[p]) - 1) |-> IF i < Min(fi) THEN flt[p][i] ELSE flt[p][i + 1]]]
       /\ cur' = IF e.ack THEN [x \in DOMAIN cur \ {k} |-> cur[x]] ELSE [cur EXCEPT ![k].st = "retry"]
       /\ UNCHANGED pid

\* IdempotentProducer's Disconnect: the connection is lost with its requests; their
\* batches may or may not have been handled (unc), except an attempt cut as it
\* arrived (a DropConnection fault naming it: never forwarded).  e.lost is the
\* translation's list of the batches lost, in the order sent; TLC holds it to the
\* batches whose latest attempt is outstanding on c.  A connection cannot be lost
\* between the partitions of one response.  Faults waiting for a lost attempt are
\* forgotten: its answer, whatever it was, is lost.
Disconnect ==
    LET e == Ev
        c == e.c
        lostSet == {k \in DOMAIN cur : cur[k].st = "sent" /\ cur[k].c = c}
        L == e.lost
        ofP(q) == LET isQ(x) == x.p = q /\ ~x.cut IN SelectSeq(L, isQ)
        keep(q) == LET kept(f) == ~\E i \in 1..Len(L) : L[i].p = q /\ L[i].ep = f.ep /\ L[i].seq = f.seq
                   IN SelectSeq(flt[q], kept)
    IN /\ e.ev = "Disconnect"
       /\ \A i \in 1..Len(out[c]) : ~out[c][i].begun
       /\ {L[i].k : i \in 1..Len(L)} = lostSet
       /\ \A i \in 1..Len(L) : L[i].ep = cur[L[i].k].ep /\ L[i].seq = cur[L[i].k].seq /\ L[i].n = cur[L[i].k].n
       /\ out' = [out EXCEPT ![c] = <<>>]
       /\ cur' = [k \in DOMAIN cur |-> IF k \in lostSet THEN [cur[k] EXCEPT !.st = "retry"] ELSE cur[k]]
       /\ unc' = [q \in WParts |-> unc[q] \o ofP(q)]
       /\ flt' = [q \in WParts |-> keep(q)]
       /\ UNCHANGED <<pid, bk>>

\* An injected fault on the attempt (e.ep, e.seq) of p as it arrived: the proxy's
\* RejectBeforeAppend or AppendThenFail (IdempotentProducer's actions of those
\* names), applied when that attempt's answer is handled.
Fault ==
    /\ Ev.ev = "Fault"
    /\ flt' = [flt EXCEPT ![Ev.p] = Append(@, [ep |-> Ev.ep, seq |-> Ev.seq, kind |-> Ev.kind, err |-> Ev.err])]
    /\ UNCHANGED <<pid, out, cur, bk, unc>>

\* IdempotentProducer's ExpireProducerState, injected: ProducerStateManager.
\* removeExpiredProducers drops the entry; only while p has nothing in flight.
ExpireState ==
    /\ Ev.ev = "ExpireState"
    /\ \A k \in DOMAIN cur : KeyPart[k] # Ev.p
    /\ bk' = [bk EXCEPT ![Ev.p] = {NoBroker(s.len) : s \in bk[Ev.p]}]
    /\ UNCHANGED <<pid, out, cur, unc, flt>>

\* The run is over: every request was answered or lost with its connection.
ReadBack ==
    /\ Ev.ev = "ReadBack"
    /\ \A c \in WConns : out[c] = <<>>
    /\ UNCHANGED <<pid, out, cur, bk, unc, flt>>

Logged ==
    /\ l <= Len(TraceLog)
    /\ l' = l + 1
    /\ Init \/ Send \/ Receive \/ Disconnect \/ Fault \/ ExpireState \/ ReadBack

\* Every line is a step; what the trace does not show is folded into the steps that
\* need it (Receive, and Init of a new producer id), over sets of broker states.
TraceNext == Logged

TraceSpec == TraceInit /\ [][TraceNext]_wvars

TraceFinished == l > Len(TraceLog)

\* As in TraceIdempotentProducer: report each new furthest line and acceptance.
TraceFurthest ==
    /\ \/ l <= TLCGet(1)
       \/ TLCSet(1, l) /\ PrintT(<<"kcheck-furthest", l>>)
    /\ \/ ~TraceFinished
       \/ PrintT(<<"kcheck-accepted", l>>) /\ TLCSet("exit", TRUE)

ASSUME TLCSet(1, 0)
=============================================================================
