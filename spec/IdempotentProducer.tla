------------------------- MODULE IdempotentProducer -------------------------
(***************************************************************************)
(* Sequence assignment in Kafka's idempotent producer and the broker's     *)
(* producer state, with the faults that make them disagree.                *)
(*                                                                         *)
(* One producer writes NumBatches batches to each partition in Partitions. *)
(* Partition p is led by the broker at the other end of connection         *)
(* ConnOf[p] (the model-checking configurations put every partition on one *)
(* connection); on a connection requests are handled in the order they     *)
(* were sent and responses come back in that order (SocketServer mutes a   *)
(* connection while one of its requests is being handled).  A request      *)
(* carries one batch and a batch holds one record, so a batch's sequence   *)
(* range is a single number; the broker's de-duplication still matches     *)
(* (epoch, first, last) exactly against the batches it retained.           *)
(*                                                                         *)
(* Client rules are those of the Java client 4.x                           *)
(*   clients/src/main/java/org/apache/kafka/clients/producer/internals/    *)
(*     RecordAccumulator.java, Sender.java, TransactionManager.java        *)
(* and broker rules those of                                               *)
(*   storage/src/main/java/org/apache/kafka/storage/internals/log/         *)
(*     UnifiedLog.java, ProducerStateManager.java, ProducerStateEntry.java,*)
(*     ProducerAppendInfo.java                                             *)
(* The first-ack rule is KAFKA-14359 (apache/kafka PR #23853).             *)
(*                                                                         *)
(* What is left out, and why the properties survive it, is in README.md.   *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets, TLC

CONSTANTS
    Partitions,          \* the topic's partitions (model values)
    ConnOf,              \* ConnOf[p]: the connection to p's leader (OneConnection in the configs)
    NumBatches,          \* batches the application sends to each partition
    MaxInFlight,         \* max.in.flight.requests.per.connection (<= 5 with idempotence)
    DedupWindow,         \* ProducerStateEntry.NUM_BATCHES_TO_RETAIN (5 in Kafka)
    FirstAckRule,        \* TRUE: the KAFKA-14359 first-ack rule is on
    HoldWhileRetrying,   \* TRUE: no new sequence while a retried batch of the partition is
                         \*   unacknowledged (kcheck's producer; not in the Java client)
    NoStateRule,         \* the broker's answer to a producer it has no state for:
                         \*   "pre25"      before 2.5: seq # 0 gets UNKNOWN_PRODUCER_ID
                         \*   "v25to44"    2.5 to 4.4: any seq is accepted
                         \*   "v45"        4.5 (KAFKA-15591): seq # 0 gets OUT_OF_ORDER_SEQUENCE_NUMBER
                         \*                only on a log that never held a record
                         \*   "kafka19880" the KAFKA-19880 proposal (PR #22619): seq # 0 gets
                         \*                UNKNOWN_PRODUCER_ID, the client bumps its epoch
    PreWritten,          \* TRUE: each log already holds another producer's record
    ErrorsBeforeAppend,  \* errors a produce may fail with before the append
    ErrorsAfterAppend,   \* errors a produce may get after its batch was appended
    Disconnects,         \* TRUE: the connection may be lost (all outstanding requests)
    MaxFaults,           \* bound on injected produce faults and disconnects
    DeliveryTimeout,     \* TRUE: delivery.timeout.ms may fail a batch waiting to be retried
    StateExpiry,         \* TRUE: the broker may expire the producer's state (producer.id.expiration.ms)
    MaxExpiries,         \* bound on producer-state expiries
    AppResends           \* TRUE: the application produces a batch failed by OUT_OF_ORDER_SEQUENCE_NUMBER again

ASSUME NoStateRule \in {"pre25", "v25to44", "v45", "kafka19880"}
ASSUME MaxInFlight \in Nat \ {0} /\ DedupWindow \in Nat \ {0} /\ NumBatches \in Nat \ {0}

\* Error names are Kafka's (org.apache.kafka.common.protocol.Errors).  The
\* configurations inject NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS and
\* REQUEST_TIMED_OUT before the append, REQUEST_TIMED_OUT and NOT_LEADER_OR_FOLLOWER
\* after it; trace validation injects what the trace shows.
\* Fatal are the errors a produce can get that the client does not retry.
Fatal == {"INVALID_PRODUCER_EPOCH", "INVALID_RECORD", "MESSAGE_TOO_LARGE", "RECORD_LIST_TOO_LARGE",
          "INVALID_REQUIRED_ACKS", "TOPIC_AUTHORIZATION_FAILED", "UNKNOWN_SERVER_ERROR"}
ASSUME ErrorsBeforeAppend \subseteq STRING /\ ErrorsAfterAppend \subseteq STRING

Batches == 1..NumBatches
Conns   == {ConnOf[p] : p \in Partitions}
\* Every partition led by one broker, over one connection: ConnOf <- OneConnection.
OneConnection == [p \in Partitions |-> 0]
NoSeq   == -1          \* a batch not yet drained; also "no acknowledged sequence"
Other   == 0           \* the batch id of another producer's record (PreWritten)
NoState == [ep |-> -1, win |-> <<>>]   \* the broker holds nothing for our producer

VARIABLES
    \* --- client (TransactionManager / TxnPartitionEntry) ---
    epoch,       \* the producer's current epoch (producerIdAndEpoch)
    pEpoch,      \* pEpoch[p]: the epoch p's sequences belong to (lags epoch until p is idle, KAFKA-12152)
    nextSeq,     \* nextSeq[p]: the sequence the next drained batch gets
    lastAcked,   \* lastAcked[p]: highest acknowledged sequence in pEpoch[p], or NoSeq
    bumpReq,     \* bumpReq[p]: an epoch bump was requested for p (requestEpochBumpForPartition)
    unresolved,  \* unresolved[p]: a batch of p expired in retry (markSequenceUnresolved)
    batch,       \* batch[p][b]: [st, seq, ep, reset, ooo, off]
                 \*   st: "unsent" | "sent" (in an outstanding request) | "retry" (reenqueued)
                 \*       | "acked" | "failed" (to the application)
                 \*   reset: its sequence was rewritten by an epoch bump (sequenceHasBeenReset)
                 \*   retried: an attempt of it failed (it has been reenqueued)
                 \*   ooo: it has been answered OUT_OF_ORDER_SEQUENCE_NUMBER
                 \*   off: the offset it was acknowledged with
    \* --- the connection ---
    reqs,        \* reqs[c]: requests sent on connection c, not yet handled by the broker, oldest first
    resps,       \* resps[c]: responses produced on c and not yet read by the client, oldest first
    \* --- broker ---
    log,         \* log[p]: the partition's records, offset i-1 at index i
    pstate,      \* pstate[p]: our producer's entry: [ep, win], win the retained batches [seq, off]
    \* --- bounds and bookkeeping ---
    faults,      \* produce faults and disconnects injected so far
    expiries,    \* producer-state expiries so far
    event        \* the step just taken, for counterexamples and trace validation

client == <<epoch, pEpoch, nextSeq, lastAcked, bumpReq, unresolved, batch>>
broker == <<log, pstate>>
vars   == <<client, reqs, resps, broker, faults, expiries, event>>

Max(a, b) == IF a > b THEN a ELSE b

-----------------------------------------------------------------------------
(* Helpers over the client's batches. *)

\* Batches of p that Java keeps in inflightBatchesBySequence: drained, not done.
InFlight(p) == {b \in Batches : batch[p][b].st \in {"sent", "retry"}}
\* Batches of p in an outstanding request.
Outstanding(p) == {b \in Batches : batch[p][b].st = "sent"}
\* The batch at the head of p's queue that has never been drained.
Unsent(p) == {b \in Batches : batch[p][b].st = "unsent"}
Lowest(S) == CHOOSE b \in S : \A c \in S : b <= c

\* The first-ack rule: p's first batch of its current epoch is in flight and unacknowledged.
\* (TransactionManager.isAwaitingFirstAck in PR #23853.)
AwaitingFirstAck(p) == lastAcked[p] = NoSeq /\ InFlight(p) # {}

\* kcheck's producer: a batch of p whose attempt failed is still unacknowledged.
\* While it is, new batches could push it out of the broker's dedup window.
Retrying(p) == \E b \in InFlight(p) : batch[p][b].retried

\* Requests sent on connection c whose responses the client has not read yet.
Pending(c) == Len(reqs[c]) + Len(resps[c])

-----------------------------------------------------------------------------
(* Helpers over the broker's state. *)

\* Records of our producer in p's log, by index.
Ours(p) == {i \in 1..Len(log[p]) : log[p][i].b # Other}
LastSeq(p) == pstate[p].win[Len(pstate[p].win)].seq

\* ProducerStateEntry.findDuplicateBatch: same epoch, same first and last sequence
\* as one of the retained batches.  The retry is answered with the original offset.
DupOf(p, r) == {i \in 1..Len(pstate[p].win) :
                    pstate[p].ep = r.ep /\ pstate[p].win[i].seq = r.seq}

\* The broker's verdict for request r on p, with no fault: "APPEND" or an error.
\* UnifiedLog.analyzeAndValidateProducerState checks for a duplicate first, then
\* ProducerAppendInfo.checkProducerEpoch, then ProducerAppendInfo.checkSequence.
Verdict(p, r) ==
    IF DupOf(p, r) # {} THEN "DUPLICATE"
    ELSE IF pstate[p] = NoState THEN
        \* No entry for the producer: the rule differs by version (see NoStateRule).
        CASE r.seq = 0                                   -> "APPEND"
          [] NoStateRule = "v25to44"                     -> "APPEND"
          [] NoStateRule = "v45" /\ Len(log[p]) = 0      -> "OUT_OF_ORDER_SEQUENCE_NUMBER"
          [] NoStateRule = "v45"                         -> "APPEND"
          [] NoStateRule \in {"pre25", "kafka19880"}     -> "UNKNOWN_PRODUCER_ID"
    ELSE IF r.ep < pstate[p].ep THEN "INVALID_PRODUCER_EPOCH"
    ELSE IF r.ep > pstate[p].ep THEN
        \* A new epoch must start at sequence 0.
        IF r.seq = 0 THEN "APPEND" ELSE "OUT_OF_ORDER_SEQUENCE_NUMBER"
    ELSE IF r.seq = LastSeq(p) + 1 THEN "APPEND"
    ELSE "OUT_OF_ORDER_SEQUENCE_NUMBER"

\* The producer entry after appending r at offset off: a new epoch starts a new
\* window; at most DedupWindow batches are retained (ProducerStateEntry.addBatch).
NewState(p, r, off) ==
    LET win == IF pstate[p] # NoState /\ pstate[p].ep = r.ep
               THEN Append(pstate[p].win, [seq |-> r.seq, off |-> off])
               ELSE <<[seq |-> r.seq, off |-> off]>>
    IN [ep |-> r.ep, win |-> IF Len(win) > DedupWindow THEN Tail(win) ELSE win]

Respond(r, err, off) == [p |-> r.p, b |-> r.b, ep |-> r.ep, seq |-> r.seq, err |-> err, off |-> off]

-----------------------------------------------------------------------------
Init ==
    /\ epoch = 0
    /\ pEpoch = [p \in Partitions |-> 0]
    /\ nextSeq = [p \in Partitions |-> 0]
    /\ lastAcked = [p \in Partitions |-> NoSeq]
    /\ bumpReq = [p \in Partitions |-> FALSE]
    /\ unresolved = [p \in Partitions |-> FALSE]
    /\ batch = [p \in Partitions |-> [b \in Batches |->
                  [st |-> "unsent", seq |-> NoSeq, ep |-> -1, reset |-> FALSE, retried |-> FALSE, ooo |-> FALSE, off |-> -1]]]
    /\ reqs = [c \in Conns |-> <<>>]
    /\ resps = [c \in Conns |-> <<>>]
    /\ log = [p \in Partitions |->
                IF PreWritten THEN <<[b |-> Other, ep |-> -1, seq |-> 0]>> ELSE <<>>]
    /\ pstate = [p \in Partitions |-> NoState]
    /\ faults = 0
    /\ expiries = 0
    /\ event = [act |-> "Init"]

-----------------------------------------------------------------------------
(* Client actions *)

\* Drain a new batch of p into a request and send it.
\* RecordAccumulator.drainBatchesForOneNode assigns the sequence at drain time:
\* maybeUpdateProducerIdAndEpoch resets p to sequence 0 in the new epoch once p has
\* nothing in flight; shouldStopDrainBatchesForPartition holds back an unsequenced
\* batch while p has stale-epoch batches in flight or an unresolved sequence, and
\* while a retry is queued ahead of it (the retry is at the head of the deque).
\* With FirstAckRule, a partition awaiting its first ack of the epoch gets no new
\* sequence (the drain skips it with `continue`, so other partitions still drain).
\* With HoldWhileRetrying (kcheck's producer), neither does a partition with a
\* retried batch unacknowledged, so that no more than MaxInFlight - 1 later batches
\* are ever appended before the retry arrives (KAFKA-18905).
SendNew(p) ==
    /\ Pending(ConnOf[p]) < MaxInFlight
    /\ Unsent(p) # {}
    /\ \A b \in Batches : batch[p][b].st # "retry"
    /\ ~bumpReq[p] /\ ~unresolved[p]
    /\ pEpoch[p] # epoch => InFlight(p) = {}
    /\ LET stale == pEpoch[p] # epoch
           seq   == IF stale THEN 0 ELSE nextSeq[p]
           acked == IF stale THEN NoSeq ELSE lastAcked[p]
           b     == Lowest(Unsent(p))
       IN /\ ~(FirstAckRule /\ acked = NoSeq /\ InFlight(p) # {})
          /\ ~(HoldWhileRetrying /\ Retrying(p))
          /\ pEpoch' = [pEpoch EXCEPT ![p] = epoch]
          /\ lastAcked' = [lastAcked EXCEPT ![p] = acked]
          /\ nextSeq' = [nextSeq EXCEPT ![p] = seq + 1]
          /\ batch' = [batch EXCEPT ![p][b].st = "sent", ![p][b].seq = seq, ![p][b].ep = epoch]
          /\ reqs' = [reqs EXCEPT ![ConnOf[p]] = Append(@, [p |-> p, b |-> b, ep |-> epoch, seq |-> seq])]
          /\ event' = [act |-> "SendNew", p |-> p, b |-> b, ep |-> epoch, seq |-> seq]
    /\ UNCHANGED <<epoch, bumpReq, unresolved, resps, broker, faults, expiries>>

\* Send a reenqueued batch again with the sequence it already has.
\* RecordAccumulator.reenqueue puts it back in sequence order; the drain sends a
\* retry only when it is the lowest sequence in flight (one retry at a time).
\* A partition waiting for an epoch bump sends nothing until the bump.
Resend(p) ==
    /\ Pending(ConnOf[p]) < MaxInFlight
    /\ ~bumpReq[p]
    /\ \E b \in Batches :
        /\ batch[p][b].st = "retry"
        /\ \A c \in InFlight(p) : batch[p][c].ep = batch[p][b].ep => batch[p][b].seq <= batch[p][c].seq
        /\ batch' = [batch EXCEPT ![p][b].st = "sent"]
        /\ reqs' = [reqs EXCEPT ![ConnOf[p]] = Append(@, [p |-> p, b |-> b, ep |-> batch[p][b].ep, seq |-> batch[p][b].seq])]
        /\ event' = [act |-> "Resend", p |-> p, b |-> b, ep |-> batch[p][b].ep, seq |-> batch[p][b].seq]
    /\ UNCHANGED <<epoch, pEpoch, nextSeq, lastAcked, bumpReq, unresolved, resps, broker, faults, expiries>>

\* Read the oldest response (Sender.handleProduceResponse, Sender.completeBatch).
\*  - success, or a duplicate answered with the original offset: the batch is done
\*    (TransactionManager.handleCompletedBatch raises lastAcked);
\*  - UNKNOWN_PRODUCER_ID: the idempotent producer bumps its epoch and retries
\*    (TransactionManager.canRetry; the log start offset is always 0 here);
\*  - OUT_OF_ORDER_SEQUENCE_NUMBER: TransactionManager.canRetry retries WITHOUT a bump
\*    when nothing is unresolved and the batch is not the next one (its sequence is not
\*    lastAcked + 1) or was reset by a bump -- the KAFKA-14359 loop; otherwise it
\*    requests a bump and retries;
\*  - Fatal errors (INVALID_PRODUCER_EPOCH, INVALID_RECORD, ...): not retriable, the
\*    batch fails to the application and its sequence is unresolved (kcheck's
\*    producer; TransactionManager.handleFailedBatch);
\*  - every other error here is retriable: the batch is reenqueued, sequence kept.
Receive(c) ==
    /\ resps[c] # <<>>
    /\ LET r   == Head(resps[c])
           p   == r.p
           bt  == batch[p][r.b]
           cur == r.ep = pEpoch[p]
           isNext == r.seq = lastAcked[p] + 1
       IN /\ resps' = [resps EXCEPT ![c] = Tail(@)]
          /\ event' = [act |-> "Receive", p |-> p, b |-> r.b, ep |-> r.ep, seq |-> r.seq, err |-> r.err, off |-> r.off]
          /\ unresolved' = IF bt.st = "sent" /\ bt.ep = r.ep /\ bt.seq = r.seq /\ r.err \in Fatal
                           THEN [unresolved EXCEPT ![p] = TRUE] ELSE unresolved
          /\ CASE bt.st # "sent" \/ bt.ep # r.ep \/ bt.seq # r.seq ->
                    \* A stale response for a batch that moved on: ignored.
                    UNCHANGED <<batch, lastAcked, bumpReq>>
               [] r.err \in {"NONE", "DUPLICATE_SEQUENCE_NUMBER"} ->
                    /\ batch' = [batch EXCEPT ![p][r.b].st = "acked", ![p][r.b].off = r.off]
                    /\ lastAcked' = IF cur THEN [lastAcked EXCEPT ![p] = Max(@, r.seq)] ELSE lastAcked
                    /\ UNCHANGED bumpReq
               [] r.err = "UNKNOWN_PRODUCER_ID" ->
                    /\ batch' = [batch EXCEPT ![p][r.b].st = "retry", ![p][r.b].retried = TRUE]
                    /\ bumpReq' = IF bt.reset THEN bumpReq ELSE [bumpReq EXCEPT ![p] = TRUE]
                    /\ UNCHANGED lastAcked
               [] r.err = "OUT_OF_ORDER_SEQUENCE_NUMBER" ->
                    /\ batch' = [batch EXCEPT ![p][r.b].st = "retry", ![p][r.b].retried = TRUE, ![p][r.b].ooo = TRUE]
                    /\ bumpReq' =
                         IF ~unresolved[p] /\ (bt.reset \/ ~isNext) THEN bumpReq
                         ELSE IF ~unresolved[p] \/ isNext THEN [bumpReq EXCEPT ![p] = TRUE]
                         ELSE bumpReq
                    /\ UNCHANGED lastAcked
               [] r.err \in Fatal ->
                    /\ batch' = [batch EXCEPT ![p][r.b].st = "failed"]
                    /\ UNCHANGED <<lastAcked, bumpReq>>
               [] OTHER ->
                    /\ batch' = [batch EXCEPT ![p][r.b].st = "retry", ![p][r.b].retried = TRUE]
                    /\ UNCHANGED <<lastAcked, bumpReq>>
    /\ UNCHANGED <<epoch, pEpoch, nextSeq, reqs, broker, faults, expiries>>

\* KIP-360 local epoch bump (TransactionManager.bumpIdempotentProducerEpoch, called
\* from Sender.runOnce via bumpIdempotentEpochAndResetIdIfNeeded): epoch + 1 with no
\* RPC, and startSequencesAtBeginning renumbers p's in-flight batches from 0 in
\* sequence order and forgets lastAcked.  The model waits until p has no outstanding
\* request (Java rewrites in-flight batches at once and sorts out their responses
\* with sequenceHasBeenReset; see README.md).
Bump(p) ==
    /\ bumpReq[p]
    /\ Outstanding(p) = {}
    /\ LET order(b) == Cardinality({c \in InFlight(p) : batch[p][c].seq < batch[p][b].seq})
       IN batch' = [batch EXCEPT ![p] = [b \in Batches |->
                      IF b \in InFlight(p)
                      THEN [@[b] EXCEPT !.seq = order(b), !.ep = epoch + 1, !.reset = TRUE]
                      ELSE @[b]]]
    /\ epoch' = epoch + 1
    /\ pEpoch' = [pEpoch EXCEPT ![p] = epoch + 1]
    /\ nextSeq' = [nextSeq EXCEPT ![p] = Cardinality(InFlight(p))]
    /\ lastAcked' = [lastAcked EXCEPT ![p] = NoSeq]
    /\ bumpReq' = [bumpReq EXCEPT ![p] = FALSE]
    /\ unresolved' = [unresolved EXCEPT ![p] = FALSE]
    /\ event' = [act |-> "Bump", p |-> p, ep |-> epoch + 1]
    /\ UNCHANGED <<reqs, resps, broker, faults, expiries>>

\* delivery.timeout.ms ends a batch waiting to be retried: the application gets a
\* TimeoutException (Sender.getExpiredInflightBatches / failBatch) and the sequence
\* is marked unresolved (TransactionManager.markSequenceUnresolved).  A batch in an
\* outstanding request does not expire here: request.timeout.ms < delivery.timeout.ms,
\* so its attempt ends first (as a response or a disconnect).
ExpireBatch(p) ==
    /\ DeliveryTimeout
    /\ \E b \in Batches :
        /\ batch[p][b].st = "retry"
        /\ batch' = [batch EXCEPT ![p][b].st = "failed"]
        /\ event' = [act |-> "ExpireBatch", p |-> p, b |-> b, ep |-> batch[p][b].ep, seq |-> batch[p][b].seq]
    /\ unresolved' = [unresolved EXCEPT ![p] = TRUE]
    /\ UNCHANGED <<epoch, pEpoch, nextSeq, lastAcked, bumpReq, reqs, resps, broker, faults, expiries>>

\* TransactionManager.maybeResolveSequences: once p has nothing in flight, an
\* unresolved sequence is resolved if nextSeq = lastAcked + 1 (later batches got
\* through); otherwise the producer bumps its epoch.
ResolveSequences(p) ==
    /\ unresolved[p]
    /\ InFlight(p) = {}
    /\ unresolved' = [unresolved EXCEPT ![p] = FALSE]
    /\ bumpReq' = IF nextSeq[p] = lastAcked[p] + 1 THEN bumpReq ELSE [bumpReq EXCEPT ![p] = TRUE]
    /\ event' = [act |-> "ResolveSequences", p |-> p, bump |-> nextSeq[p] # lastAcked[p] + 1]
    /\ UNCHANGED <<epoch, pEpoch, nextSeq, lastAcked, batch, reqs, resps, broker, faults, expiries>>

-----------------------------------------------------------------------------
(* Broker actions *)

\* The leader handles the oldest request on the connection (KafkaApis.handleProduceRequest,
\* ReplicaManager.appendRecords, UnifiedLog.append) and answers it.
HandleProduce(c) ==
    /\ reqs[c] # <<>>
    /\ LET r == Head(reqs[c])
           p == r.p
           v == Verdict(p, r)
           off == Len(log[p])
       IN /\ reqs' = [reqs EXCEPT ![c] = Tail(@)]
          /\ CASE v = "APPEND" ->
                    /\ log' = [log EXCEPT ![p] = Append(@, [b |-> r.b, ep |-> r.ep, seq |-> r.seq])]
                    /\ pstate' = [pstate EXCEPT ![p] = NewState(p, r, off)]
                    /\ resps' = [resps EXCEPT ![c] = Append(@, Respond(r, "NONE", off))]
               [] v = "DUPLICATE" ->
                    \* Answered as success with the original offset, not appended again.
                    /\ resps' = [resps EXCEPT ![c] = Append(@, Respond(r, "NONE", pstate[p].win[Lowest(DupOf(p, r))].off))]
                    /\ UNCHANGED <<log, pstate>>
               [] OTHER ->
                    /\ resps' = [resps EXCEPT ![c] = Append(@, Respond(r, v, -1))]
                    /\ UNCHANGED <<log, pstate>>
          /\ event' = [act |-> "HandleProduce", p |-> p, b |-> r.b, ep |-> r.ep, seq |-> r.seq,
                       err |-> IF v \in {"APPEND", "DUPLICATE"} THEN "NONE" ELSE v]
    /\ UNCHANGED <<client, faults, expiries>>

\* Fault: the produce fails before the append.  NOT_LEADER_OR_FOLLOWER comes from
\* Partition.appendRecordsToLeader when the broker is not (or no longer) the leader;
\* NOT_ENOUGH_REPLICAS when the ISR is below min.insync.replicas, checked before the append;
\* REQUEST_TIMED_OUT stands for a request that timed out before the broker appended it
\* (the answer a proxy in front of a stalled broker gives: kcheck proxy's
\* timeout-before-append).
RejectBeforeAppend(c) ==
    /\ faults < MaxFaults
    /\ reqs[c] # <<>>
    /\ \E err \in ErrorsBeforeAppend :
        LET r == Head(reqs[c]) IN
        /\ reqs' = [reqs EXCEPT ![c] = Tail(@)]
        /\ resps' = [resps EXCEPT ![c] = Append(@, Respond(r, err, -1))]
        /\ event' = [act |-> "RejectBeforeAppend", p |-> r.p, b |-> r.b, ep |-> r.ep, seq |-> r.seq, err |-> err]
    /\ faults' = faults + 1
    /\ UNCHANGED <<client, broker, expiries>>

\* Fault: the broker handles the request as usual (it may append it, find it a
\* duplicate, or reject it) but the client is told it failed: REQUEST_TIMED_OUT
\* (DelayedProduce expired waiting for acks=all: a duplicate waits too while its
\* original is not yet replicated), NOT_LEADER_OR_FOLLOWER (leadership lost after
\* the append, Partition.checkEnoughReplicasReachOffset), or
\* NOT_ENOUGH_REPLICAS_AFTER_APPEND.  A rejected request answered this way stands
\* for its answer being lost: the client cannot tell what the broker did.
AppendThenFail(c) ==
    /\ faults < MaxFaults
    /\ reqs[c] # <<>>
    /\ LET r == Head(reqs[c])
           p == r.p
           v == Verdict(p, r)
           off == Len(log[p])
       IN /\ \E err \in ErrorsAfterAppend :
                /\ resps' = [resps EXCEPT ![c] = Append(@, Respond(r, err, -1))]
                /\ event' = [act |-> "AppendThenFail", p |-> p, b |-> r.b, ep |-> r.ep, seq |-> r.seq, err |-> err]
          /\ reqs' = [reqs EXCEPT ![c] = Tail(@)]
          /\ IF v = "APPEND"
             THEN /\ log' = [log EXCEPT ![p] = Append(@, [b |-> r.b, ep |-> r.ep, seq |-> r.seq])]
                  /\ pstate' = [pstate EXCEPT ![p] = NewState(p, r, off)]
             ELSE UNCHANGED <<log, pstate>>
    /\ faults' = faults + 1
    /\ UNCHANGED <<client, expiries>>

\* Fault: the connection is lost (or request.timeout.ms closes it).  Requests the
\* broker has not handled are not written; responses not yet read are lost, so their
\* batches may or may not be in the log.  NetworkClient fails every outstanding
\* request and the Sender reenqueues their batches with their sequences.
Disconnect(c) ==
    /\ Disconnects
    /\ faults < MaxFaults
    /\ Pending(c) > 0
    /\ reqs' = [reqs EXCEPT ![c] = <<>>]
    /\ resps' = [resps EXCEPT ![c] = <<>>]
    /\ batch' = [p \in Partitions |-> [b \in Batches |->
                   IF batch[p][b].st = "sent" /\ ConnOf[p] = c THEN [batch[p][b] EXCEPT !.st = "retry", !.retried = TRUE] ELSE batch[p][b]]]
    /\ faults' = faults + 1
    /\ event' = [act |-> "Disconnect", c |-> c]
    /\ UNCHANGED <<epoch, pEpoch, nextSeq, lastAcked, bumpReq, unresolved, broker, expiries>>

\* The broker drops the producer's entry (ProducerStateManager.removeExpiredProducers)
\* once producer.id.expiration.ms passed since its last batch.  That is far longer
\* than delivery.timeout.ms, so p has nothing in flight when it happens.
ExpireProducerState(p) ==
    /\ StateExpiry
    /\ expiries < MaxExpiries
    /\ pstate[p] # NoState
    /\ InFlight(p) = {}
    /\ pstate' = [pstate EXCEPT ![p] = NoState]
    /\ expiries' = expiries + 1
    /\ event' = [act |-> "ExpireProducerState", p |-> p]
    /\ UNCHANGED <<client, reqs, resps, log, faults>>

\* Not a Kafka rule but the application's answer to a failed send: told that a
\* batch failed after OUT_OF_ORDER_SEQUENCE_NUMBER answers, it produces the same
\* records again (what an application that must not lose data does with the
\* exception its callback gets).  The batch goes back to the partition's buffer
\* with no sequence, and is drained as a new batch.  If the broker had in fact
\* written it (the false failure of KAFKA-18905), it is now written twice.
\* Only when the constant AppResends is TRUE.
ResendByApp(p) ==
    /\ AppResends
    /\ \E b \in Batches :
        /\ batch[p][b].st = "failed" /\ batch[p][b].ooo
        /\ batch' = [batch EXCEPT ![p][b] = [st |-> "unsent", seq |-> NoSeq, ep |-> -1, reset |-> FALSE,
                                             retried |-> FALSE, ooo |-> FALSE, off |-> -1]]
        /\ event' = [act |-> "ResendByApp", p |-> p, b |-> b]
    /\ UNCHANGED <<epoch, pEpoch, nextSeq, lastAcked, bumpReq, unresolved, reqs, resps, broker, faults, expiries>>

-----------------------------------------------------------------------------
Next ==
    \/ \E p \in Partitions :
        \/ SendNew(p) \/ Resend(p) \/ Bump(p) \/ ExpireBatch(p) \/ ResolveSequences(p)
        \/ ExpireProducerState(p) \/ ResendByApp(p)
    \/ \E c \in Conns :
        \/ Receive(c) \/ HandleProduce(c)
        \/ RejectBeforeAppend(c) \/ AppendThenFail(c) \/ Disconnect(c)

\* Fairness: the Sender thread, the broker's request handlers and the network keep
\* working, so every step they can take is eventually taken while it stays possible
\* (weak fairness).  Faults, delivery timeouts and producer-state expiry are the
\* environment's choices and get no fairness: a run is allowed to never have them.
\* Weak fairness is enough: SendNew and Resend can be disabled only by Pending
\* reaching MaxInFlight, which the fair HandleProduce and Receive undo; every other
\* fair action stays enabled until taken.
Fairness ==
    /\ \A p \in Partitions :
        /\ WF_vars(SendNew(p)) /\ WF_vars(Resend(p))
        /\ WF_vars(Bump(p)) /\ WF_vars(ResolveSequences(p))
    /\ \A c \in Conns : WF_vars(Receive(c)) /\ WF_vars(HandleProduce(c))

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* Properties *)

TypeOK ==
    /\ epoch \in Nat
    /\ \A p \in Partitions :
        /\ nextSeq[p] \in Nat /\ lastAcked[p] \in Int /\ pEpoch[p] \in Nat
        /\ \A b \in Batches : batch[p][b].st \in {"unsent", "sent", "retry", "acked", "failed"}
    /\ \A c \in Conns : Pending(c) <= MaxInFlight

\* Each batch is written at most once (Jepsen: duplicate).
NoDuplicate ==
    \A p \in Partitions : \A i, j \in Ours(p) :
        i # j => log[p][i].b # log[p][j].b

\* Batches appear in the log in the order the application sent them (Jepsen:
\* nonmonotonic-send), and within an epoch in sequence order.
NoReorder ==
    \A p \in Partitions : \A i, j \in Ours(p) :
        i < j => log[p][i].b < log[p][j].b

\* A sequence in the log implies every lower sequence of its epoch is there: the
\* KAFKA-14359 loss is a gap at the start of the epoch.
NoGap ==
    \A p \in Partitions : \A i \in Ours(p) :
        \A k \in 0..(log[p][i].seq - 1) :
            \E j \in Ours(p) : log[p][j].ep = log[p][i].ep /\ log[p][j].seq = k

\* An acknowledged batch is in the log at the offset it was acknowledged with
\* (Jepsen: lost-write and inconsistent-offsets).
AckedInLog ==
    \A p \in Partitions : \A b \in Batches :
        batch[p][b].st = "acked" =>
            /\ batch[p][b].off \in 0..(Len(log[p]) - 1)
            /\ log[p][batch[p][b].off + 1].b = b

\* The seed's symptom as the application sees it: no batch is failed after
\* OUT_OF_ORDER_SEQUENCE_NUMBER retries while it is missing from the log and a later
\* sequence of its epoch was written.  (A batch that times out with nothing written
\* after it is an honest failure: the producer bumps its epoch and nothing is skipped.)
NoOutOfOrderLoss ==
    \A p \in Partitions : \A b \in Batches :
        LET bt == batch[p][b] IN
        (bt.st = "failed" /\ bt.ooo /\ ~\E i \in Ours(p) : log[p][i].b = b) =>
            ~\E i \in Ours(p) : log[p][i].ep = bt.ep /\ log[p][i].seq > bt.seq

\* The broker never answers OUT_OF_ORDER_SEQUENCE_NUMBER to a batch that is already
\* in its log: that answer is a false failure (KAFKA-18905), and an application that
\* resends the batch writes it twice.
NoFalseOutOfOrder ==
    \A c \in Conns : \A i \in 1..Len(resps[c]) :
        LET r == resps[c][i] IN
        r.err = "OUT_OF_ORDER_SEQUENCE_NUMBER" => ~\E j \in Ours(r.p) : log[r.p][j].b = r.b

\* Liveness (the stall): every batch is eventually acknowledged; none is retried
\* forever on OUT_OF_ORDER_SEQUENCE_NUMBER.  Checked with DeliveryTimeout = FALSE,
\* since the timeout turns the endless loop into a failure (NoOutOfOrderLoss).
EventuallyAcked ==
    \A p \in Partitions : \A b \in Batches : <>(batch[p][b].st = "acked")

=============================================================================
