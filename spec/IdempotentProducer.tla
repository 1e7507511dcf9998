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
(* HoldWhileRetrying and RearmAfterIdle are rules of kcheck's own producer *)
(* (README.md, "The re-arm rule and time", for the clock RearmAfterIdle    *)
(* and producer-state expiry share).                                       *)
(* The constants HandBackOnError, ImplicitAck and PipelineAfterOk swap in  *)
(* rules of other clients (kafkajs, librdkafka, kgo), each commented with  *)
(* the client's file and function; README.md, "Client families".           *)
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
    RearmAfterIdle,      \* TRUE: with FirstAckRule, a partition idle for the client's re-arm bound
                         \*   (aged) awaits a first ack again (kcheck's producer; not in the Java client)
    NoStateRule,         \* the broker's answer to a producer it has no state for:
                         \*   "pre25"      before 2.5: seq # 0 gets UNKNOWN_PRODUCER_ID
                         \*   "v25to44"    2.5 to 4.4: any seq is accepted
                         \*   "v45"        4.5 (KAFKA-15591): seq # 0 gets OUT_OF_ORDER_SEQUENCE_NUMBER
                         \*                only on a log that never held a record
                         \*   "kafka19880" the KAFKA-19880 proposal (PR #22619): seq # 0 gets
                         \*                UNKNOWN_PRODUCER_ID, the client bumps its epoch
                         \*   "tansu"      not Kafka: the broker variant of tansu 0.6.0, whose
                         \*                producer-state rules all differ (TansuVerdict)
    PreWritten,          \* TRUE: each log already holds another producer's record
    ErrorsBeforeAppend,  \* errors a produce may fail with before the append
    ErrorsAfterAppend,   \* errors a produce may get after its batch was appended
    Disconnects,         \* TRUE: the connection may be lost (all outstanding requests)
    MaxFaults,           \* bound on injected produce faults and disconnects
    DeliveryTimeout,     \* TRUE: delivery.timeout.ms may fail a batch waiting to be retried
    StateExpiry,         \* TRUE: the broker may expire the producer's state (producer.id.expiration.ms)
    MaxExpiries,         \* bound on producer-state expiries
    AppResends,          \* TRUE: the application produces a batch failed by OUT_OF_ORDER_SEQUENCE_NUMBER again
    AppSerial,           \* TRUE: the application produces a partition's next batch only once the
                         \*   previous one was acknowledged or failed (it awaits each send)
    \* Client families: rules of other clients, each FALSE for the Java client.
    HandBackOnError,     \* TRUE: kafkajs 2.2.4: a request that fails hands its sequence back, and
                         \*   its retry draws a sequence again, after whatever was sent meanwhile
    ImplicitAck,         \* TRUE: librdkafka: a success for a later batch acknowledges the earlier
                         \*   batches of the partition waiting to be retried, with no offset
    PipelineAfterOk,     \* TRUE: franz-go (kgo): a second batch of a partition goes out only while
                         \*   the last answer to its oldest batch was a success (okOnSink)
    LateAnswerFails,     \* TRUE: the Java client: a retriable error answer read as the batch's
                         \*   delivery timeout passes fails it and asks for a bump at once
    BumpRule             \* what the client does when it bumps its epoch (KIP-360), and when:
                         \*   "java"     Java 4.x: per partition, after its requests are answered;
                         \*              the partition's unfinished batches renumbered from 0
                         \*   "drain"    librdkafka: producer-wide, after every request is
                         \*              answered; every unfinished batch renumbered from 0;
                         \*              a message timeout always bumps
                         \*   "failbump" sarama: a batch failed to the application bumps the
                         \*              epoch at once; nothing renumbered, retries keep theirs
                         \*   "none"     aiokafka: never; a batch sent is retried until it is
                         \*              answered, any non-retriable answer fails it alone
                         \*   "pin"      kgo: producer-wide, at once; a batch keeps the epoch and
                         \*              sequence it was first sent with unless the broker
                         \*              refused it for them; a partition renumbers from 0 when
                         \*              its oldest batch is one the broker refused
                         \*   "renew"    kafka-python: a new producer id from the broker, with no
                         \*              wait; nothing renumbered; a batch of the old id gets one
                         \*              more try; a timed-out retry leaves the producer with no id

ASSUME NoStateRule \in {"pre25", "v25to44", "v45", "kafka19880", "tansu"}
\* tansu 0.6.0 keeps a producer's state for as long as it runs (no producer.id.expiration.ms),
\* and its InitProducerId refuses a producer that already has an id (UNKNOWN_SERVER_ERROR:
\* tansu-storage/src/dynostore.rs, DynoStore::init_producer), which kafka-python's renewal
\* (BumpRule "renew") sends: neither is modelled on it.
ASSUME NoStateRule = "tansu" => ~StateExpiry /\ BumpRule # "renew"
ASSUME BumpRule \in {"java", "drain", "failbump", "none", "pin", "renew"}
ASSUME MaxInFlight \in Nat \ {0} /\ DedupWindow \in Nat \ {0} /\ NumBatches \in Nat \ {0}

\* Error names are Kafka's (org.apache.kafka.common.protocol.Errors).  The
\* configurations inject NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS and
\* REQUEST_TIMED_OUT before the append, REQUEST_TIMED_OUT and NOT_LEADER_OR_FOLLOWER
\* after it; trace validation injects what the trace shows.
\* Fatal are the errors a produce can get that the client does not retry.
Fatal == {"INVALID_PRODUCER_EPOCH", "INVALID_RECORD", "MESSAGE_TOO_LARGE", "RECORD_LIST_TOO_LARGE",
          "INVALID_REQUIRED_ACKS", "TOPIC_AUTHORIZATION_FAILED", "UNKNOWN_SERVER_ERROR"}
\* kafkajs does not retry these either (retriable: false in src/protocol/error.js): the
\* sequence and producer-id errors fail the send() too, DUPLICATE_SEQUENCE_NUMBER included.
NotRetriedByKafkajs == Fatal \cup {"OUT_OF_ORDER_SEQUENCE_NUMBER", "DUPLICATE_SEQUENCE_NUMBER", "UNKNOWN_PRODUCER_ID"}
\* The answers that leave kgo unsure whether the batch was written, for as long as the
\* batch lives (sink.go, handleReqRespBatch sets unsureIfProduced): its delivery timeout
\* never fails it after one.
UnsureErrors == {"REQUEST_TIMED_OUT", "NOT_ENOUGH_REPLICAS_AFTER_APPEND"}
\* The answers kgo takes as a refusal of the batch's epoch or sequence (sink.go,
\* handleReqRespBatch, one case for all three): the batch loses its pin, and the
\* producer bumps its epoch.
PinRefused == {"OUT_OF_ORDER_SEQUENCE_NUMBER", "UNKNOWN_PRODUCER_ID", "INVALID_PRODUCER_EPOCH"}
\* The answers a client takes as success: kafkajs fails a send on DUPLICATE_SEQUENCE_NUMBER.
Success == IF HandBackOnError THEN {"NONE"} ELSE {"NONE", "DUPLICATE_SEQUENCE_NUMBER"}
\* PRODUCER_FENCED: tansu's answer to a produce of an epoch other than the one its
\* InitProducerId gave (TansuVerdict); Apache Kafka answers it to a transactional
\* producer only, so no Kafka configuration sees it.  No client family retries it, and
\* each does what it does with a Fatal error: kcheck's producer fails the batch
\* (producer/core/seq.go, seqState.onError: not retriable, Fail; core.go, Core.answer marks
\* the sequence unresolved); kgo fails the partition's batches and bumps (sink.go,
\* handleReqRespBatch: not retriable, so finishBatch with the error); librdkafka fails
\* the batch and bumps (rdkafka_request.c, rd_kafka_handle_Produce_error: an error its
\* action table does not list is permanent, and a permanent error of an idempotent
\* producer without enable.gapless.guarantee starts rd_kafka_idemp_drain_epoch_bump);
\* sarama and aiokafka by their rule for every error they do not retry (Receive).  The
\* Java client alone makes it fatal to the producer (JavaFenced).  kafkajs never bumps
\* its epoch, so tansu never answers it so.  Kept out of Fatal, which checker/kafkaerr
\* mirrors for Kafka's answers.
NotRetried == Fatal \cup {"PRODUCER_FENCED"}
\* The Java client takes PRODUCER_FENCED as fatal to the producer: handleFailedBatch calls
\* TransactionManager.maybeTransitionToErrorState, which moves to the fatal error state for
\* a ProducerFencedException, idempotent or transactional, and Sender.runOnce then aborts
\* every incomplete batch (maybeAbortBatches: RecordAccumulator.abortBatches, sent or not)
\* and KafkaProducer.send refuses every new one.  LateAnswerFails is the constant only the
\* Java client's family sets (scenario/family.go): kcheck's producer with its rules off
\* has Java's other rules, and fails the fenced batch alone.
JavaFenced(err) == err = "PRODUCER_FENCED" /\ BumpRule = "java" /\ LateAnswerFails
ASSUME ErrorsBeforeAppend \subseteq STRING /\ ErrorsAfterAppend \subseteq STRING
ASSUME \A k \in {AppResends, AppSerial, HandBackOnError, ImplicitAck, PipelineAfterOk, RearmAfterIdle, LateAnswerFails} : k \in BOOLEAN
ASSUME LateAnswerFails => BumpRule = "java" /\ ~HandBackOnError
\* kafkajs holds a lock per broker from drawing a request's sequences until its answer
\* (eosManager acquireBrokerLock/releaseBrokerLock around sendMessages' produce call):
\* one request per connection, whatever maxInFlightRequests says.
ASSUME HandBackOnError => MaxInFlight = 1

Batches == 1..NumBatches
Conns   == {ConnOf[p] : p \in Partitions}
\* Every partition led by one broker, over one connection: ConnOf <- OneConnection.
OneConnection == [p \in Partitions |-> 0]
NoSeq   == -1          \* a batch not yet drained; also "no acknowledged sequence"
NoOffset == -1         \* acknowledged with no offset (librdkafka's RD_KAFKA_OFFSET_INVALID)
Other   == 0           \* the batch id of another producer's record (PreWritten)
NoState == [ep |-> -1, win |-> <<>>]   \* the broker holds nothing for our producer

VARIABLES
    \* --- client (TransactionManager / TxnPartitionEntry) ---
    epoch,       \* the producer's current epoch (producerIdAndEpoch)
    pEpoch,      \* pEpoch[p]: the epoch p's sequences belong to (lags epoch until p is idle, KAFKA-12152)
    nextSeq,     \* nextSeq[p]: the sequence the next drained batch gets
    lastAcked,   \* lastAcked[p]: highest acknowledged sequence in pEpoch[p], or NoSeq
    bumpReq,     \* bumpReq[p]: an epoch bump was requested for p (requestEpochBumpForPartition)
    unresolved,  \* unresolved[p]: a batch of p expired in retry (markSequenceUnresolved); with
                 \*   BumpRule "renew" (kafka-python), the expiry that cleared the producer id
    lastOk,      \* lastOk[p]: the last answer read for p's oldest unfinished batch was a
                 \*   success (kgo's okOnSink; kept only when PipelineAfterOk)
    aged,        \* aged[p]: on the client's clock, the re-arm bound has passed since the max
                 \*   record timestamp of p's last acknowledged batch (BoundPasses; cleared by
                 \*   an acknowledgement of p); only set when StateExpiry
    batch,       \* batch[p][b]: [st, seq, ep, reset, retried, ooo, off, sure]
                 \*   st: "unsent" | "sent" (in an outstanding request) | "retry" (reenqueued)
                 \*       | "acked" | "failed" (to the application)
                 \*   ep: the epoch of its sequence; -1 while it has none (never sent, or
                 \*       BumpRule "pin": refused for its epoch or sequence, to be renumbered)
                 \*   reset: its sequence was rewritten by an epoch bump (sequenceHasBeenReset)
                 \*   retried: an attempt of it failed (it has been reenqueued)
                 \*   ooo: it has been answered OUT_OF_ORDER_SEQUENCE_NUMBER
                 \*   off: the offset it was acknowledged with (NoOffset: none, ImplicitAck)
                 \*   sure: BumpRule "pin" (kgo) only, else always "yes": "lost" while its last
                 \*       attempt went unanswered (canFailFromLoadErrs false), "poison" once an
                 \*       answer left it unsure of being written (unsureIfProduced)
    \* --- the connection ---
    reqs,        \* reqs[c]: requests sent on connection c, not yet handled by the broker, oldest first
    resps,       \* resps[c]: responses produced on c and not yet read by the client, oldest first
    \* --- broker ---
    log,         \* log[p]: the partition's records, offset i-1 at index i
    pstate,      \* pstate[p]: our producer's entry: [ep, win], win the retained batches [seq, off]
    pold,        \* pold[p]: with BumpRule "renew", the entries of our earlier producer ids (each
                 \*   epoch of the model is then a producer id of its own); {} otherwise
    \* --- bounds and bookkeeping ---
    faults,      \* produce faults and disconnects injected so far
    expiries,    \* producer-state expiries so far
    event        \* the step just taken, for counterexamples and trace validation

client == <<epoch, pEpoch, nextSeq, lastAcked, bumpReq, unresolved, lastOk, batch, aged>>
broker == <<log, pstate, pold>>
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

\* kcheck's producer (RearmAfterIdle): p has been idle for the client's re-arm bound, so
\* the broker may have expired its producer state; p is treated as awaiting its first
\* ack again until a batch of it is acknowledged.
Rearmed(p) == RearmAfterIdle /\ aged[p]

\* The first-ack rule: p's first batch of its current epoch is in flight and unacknowledged.
\* (TransactionManager.isAwaitingFirstAck in PR #23853.)  With RearmAfterIdle, also a
\* batch of p in flight while p is Rearmed.  SendNew writes the same test with the
\* lastAcked the drain is about to use (NoSeq for a partition moving to a new epoch).
AwaitingFirstAck(p) == InFlight(p) # {} /\ (lastAcked[p] = NoSeq \/ Rearmed(p))

\* kcheck's producer: a batch of p whose attempt failed is still unacknowledged.
\* While it is, new batches could push it out of the broker's dedup window.
Retrying(p) == \E b \in InFlight(p) : batch[p][b].retried

\* kgo's gate (PipelineAfterOk): while the last answer to p's oldest unfinished batch was
\* not a success, p has at most one request outstanding (sink.go, sink.createReq: a
\* partition with a request in flight stages no other unless okOnSink).
GateClosed(p) == PipelineAfterOk /\ ~lastOk[p] /\ Outstanding(p) # {}

\* The oldest batch of p not yet done (acknowledged or failed): kgo's recBuf.batches[0].
Unfinished(p) == {b \in Batches : batch[p][b].st \in {"unsent", "sent", "retry"}}

\* librdkafka's acked_msgid for p: the highest batch acknowledged so far (0: none).
\* Batches are numbered in the order the application produced them, as msgids are.
\* A batch the application has produced and the client not drained yet.
FreshBatch == [st |-> "unsent", seq |-> NoSeq, ep |-> -1, reset |-> FALSE, retried |-> FALSE,
               ooo |-> FALSE, off |-> -1, sure |-> "yes"]

\* kgo (BumpRule "pin"): the last batch of p written with an epoch still pinned to it
\* is pinned to the current epoch (recBuf.failAllRecords asks for a bump with that
\* batch's epoch, and failProducerID acts only on the current one).  Batches are first
\* sent in order and the epoch only grows, so that is any of them.
PinnedNow(p) == \E b \in Batches : batch[p][b].st \in {"sent", "retry"} /\ batch[p][b].ep = epoch

\* kgo: every unfinished batch of p fails to the application (recBuf.failAllRecords).
FailAll(p) == [batch EXCEPT ![p] = [b \in Batches |->
                  IF batch[p][b].st \in {"unsent", "sent", "retry"} THEN [batch[p][b] EXCEPT !.st = "failed"]
                  ELSE batch[p][b]]]

AckedMsg(p) == LET A == {b \in Batches : batch[p][b].st = "acked"} \cup {0}
               IN CHOOSE m \in A : \A a \in A : a <= m

\* A bump is waiting, so p sends nothing: Java's is p's own (the Sender bumps for the
\* partitions that asked, TransactionManager.bumpIdempotentEpochAndResetIdIfNeeded);
\* librdkafka's drain stops every partition (rdkafka_idempotence.c,
\* rd_kafka_idemp_drain_epoch_bump0 sets the producer's state to DRAIN_BUMP and
\* rd_kafka_toppar_producer_serve sends nothing until it is ASSIGNED again); sarama's
\* bump is the producer's, done before anything else is sent (async_producer.go,
\* returnErrors calls bumpIdempotentProducerEpoch).  kafka-python sends nothing, new
\* or retried, and expires nothing, while its InitProducerId for a new id is pending or
\* after an expiry cleared its id (sender.py, run_once and _send_producer_data:
\* transaction_manager.py, bump_producer_id_and_epoch, reset_producer_id).
BumpWaits(p) == CASE BumpRule = "java"  -> bumpReq[p]
                  [] BumpRule = "renew" -> \E q \in Partitions : bumpReq[q] \/ unresolved[q]
                  [] OTHER              -> \E q \in Partitions : bumpReq[q]

\* librdkafka's fatal idempotence error (rdkafka_request.c, rd_kafka_idemp_set_fatal_error
\* from rd_kafka_handle_idempotent_Produce_error): the producer is unusable, every
\* message not yet acknowledged fails to the application (ERR__FATAL), sent or not;
\* answers to requests still outstanding are ignored.  b of p, whose answer was the
\* cause, is marked ooo if that answer was OUT_OF_ORDER_SEQUENCE_NUMBER.
Halted(p, b, ooo) ==
    [q \in Partitions |-> [c \in Batches |->
        IF batch[q][c].st \in {"unsent", "sent", "retry"}
        THEN [batch[q][c] EXCEPT !.st = "failed", !.ooo = (@ \/ (q = p /\ c = b /\ ooo))]
        ELSE batch[q][c]]]

\* Requests sent on connection c whose responses the client has not read yet.
Pending(c) == Len(reqs[c]) + Len(resps[c])

-----------------------------------------------------------------------------
(* Helpers over the broker's state. *)

\* Records of our producer in p's log, by index.
Ours(p) == {i \in 1..Len(log[p]) : log[p][i].b # Other}

\* The entry r is judged against: the producer's (ProducerStateManager.lastEntry by
\* producer id).  With BumpRule "renew" every epoch is a producer id of its own (the
\* broker's InitProducerId gives kafka-python a new id with epoch 0), so r's own id's
\* entry, current or earlier, or none.
Entry(p, r) ==
    IF BumpRule # "renew" \/ pstate[p] = NoState \/ pstate[p].ep = r.ep THEN pstate[p]
    ELSE IF \E e \in pold[p] : e.ep = r.ep THEN CHOOSE e \in pold[p] : e.ep = r.ep
    ELSE NoState
LastSeq(e) == e.win[Len(e.win)].seq

\* ProducerStateEntry.findDuplicateBatch: same epoch, same first and last sequence
\* as one of the retained batches.  The retry is answered with the original offset.
DupOf(p, r) == LET e == Entry(p, r) IN
               {i \in 1..Len(e.win) : e.ep = r.ep /\ e.win[i].seq = r.seq}

\* tansu 0.6.0's verdict (NoStateRule "tansu"), as its in-memory storage engine gives it
\* (tansu-storage/src/dynostore.rs, DynoStore::produce, the idempotent branch of a batch
\* outside a transaction; service/produce.rs, ProduceService::partition turns an error
\* into the partition's answer with base offset -1).  InitProducerId (DynoStore::
\* init_producer) records the producer with epoch 0 and an empty sequence map, and
\* nothing but a new InitProducerId changes that epoch; the model's epoch 0 is that one.
\* Each (producer, epoch, partition) has one counter, the next sequence it takes
\* (or_default: 0 for a partition not produced to yet), and no window of batches:
\*  - an epoch other than the recorded one is fenced (current.key() != producer_epoch:
\*    PRODUCER_FENCED), the client's own bump (KIP-360) included, while the recorded
\*    epoch is still taken;
\*  - the counter's sequence is appended, and the counter moves past the batch;
\*  - a sequence above it is OUT_OF_ORDER_SEQUENCE_NUMBER: a new producer's sequence 1
\*    too, so the seed's gap cannot open (no KAFKA-14359 no-state rule);
\*  - any sequence below it is DUPLICATE_SEQUENCE_NUMBER, with no offset (-1), however
\*    far back: no five-batch window, and no offset even for the last batch.
\* The counter is LastSeq of the producer's entry + 1 (NewState keeps the last batch
\* appended; only epoch 0 is ever appended), 0 while there is none.  Producer-state
\* expiry and an unknown producer id (UNKNOWN_PRODUCER_ID) do not arise: tansu keeps
\* the state while it runs, and the model's producer has the id InitProducerId gave.
TansuNext(p) == IF pstate[p] = NoState THEN 0 ELSE LastSeq(pstate[p]) + 1
TansuVerdict(p, r) ==
    IF r.ep # 0 THEN "PRODUCER_FENCED"
    ELSE IF r.seq = TansuNext(p) THEN "APPEND"
    ELSE IF r.seq > TansuNext(p) THEN "OUT_OF_ORDER_SEQUENCE_NUMBER"
    ELSE "DUPLICATE_SEQUENCE_NUMBER"

\* The broker's verdict for request r on p, with no fault: "APPEND" or an error.
\* UnifiedLog.analyzeAndValidateProducerState checks for a duplicate first, then
\* ProducerAppendInfo.checkProducerEpoch, then ProducerAppendInfo.checkSequence.
\* With NoStateRule "tansu", tansu's rules instead (TansuVerdict).
Verdict(p, r) ==
    LET e == Entry(p, r) IN
    IF NoStateRule = "tansu" THEN TansuVerdict(p, r)
    ELSE IF DupOf(p, r) # {} THEN "DUPLICATE"
    ELSE IF e = NoState THEN
        \* No entry for the producer: the rule differs by version (see NoStateRule).
        CASE r.seq = 0                                   -> "APPEND"
          [] NoStateRule = "v25to44"                     -> "APPEND"
          [] NoStateRule = "v45" /\ Len(log[p]) = 0      -> "OUT_OF_ORDER_SEQUENCE_NUMBER"
          [] NoStateRule = "v45"                         -> "APPEND"
          [] NoStateRule \in {"pre25", "kafka19880"}     -> "UNKNOWN_PRODUCER_ID"
    ELSE IF r.ep < e.ep THEN "INVALID_PRODUCER_EPOCH"
    ELSE IF r.ep > e.ep THEN
        \* A new epoch must start at sequence 0.
        IF r.seq = 0 THEN "APPEND" ELSE "OUT_OF_ORDER_SEQUENCE_NUMBER"
    ELSE IF r.seq = LastSeq(e) + 1 THEN "APPEND"
    ELSE "OUT_OF_ORDER_SEQUENCE_NUMBER"

\* The producer entry after appending r at offset off: a new epoch starts a new
\* window; at most DedupWindow batches are retained (ProducerStateEntry.addBatch).
NewState(p, r, off) ==
    LET e   == Entry(p, r)
        win == IF e # NoState /\ e.ep = r.ep
               THEN Append(e.win, [seq |-> r.seq, off |-> off])
               ELSE <<[seq |-> r.seq, off |-> off]>>
    IN [ep |-> r.ep, win |-> IF Len(win) > DedupWindow THEN Tail(win) ELSE win]

\* The broker keeps the entry after appending r at offset off.  With BumpRule "renew"
\* a batch of an earlier producer id updates that id's entry, and the first batch of
\* a new id moves the current entry among the earlier ones.
Record(p, r, off) ==
    IF BumpRule = "renew" /\ pstate[p] # NoState /\ r.ep < pstate[p].ep
    THEN /\ pold' = [pold EXCEPT ![p] = {e \in @ : e.ep # r.ep} \cup {NewState(p, r, off)}]
         /\ UNCHANGED pstate
    ELSE /\ pstate' = [pstate EXCEPT ![p] = NewState(p, r, off)]
         /\ pold' = IF BumpRule = "renew" /\ pstate[p] # NoState /\ pstate[p].ep # r.ep
                    THEN [pold EXCEPT ![p] = @ \cup {pstate[p]}]
                    ELSE pold

\* The broker's UNKNOWN_PRODUCER_ID answer carries the partition's log start
\* offset (produce v5 and later; Kafka's brokers always fill it in).  Without one
\* (-1: kfake's answer), TransactionManager.canRetry retries with no epoch bump:
\* it cannot tell an expired producer from a truncated log.  TRUE in every model
\* checking configuration; trace validation replaces it (checker/tv) with what
\* the trace's answers carried.
AnswersLogStart == TRUE

Respond(r, err, off) == [p |-> r.p, b |-> r.b, ep |-> r.ep, seq |-> r.seq, err |-> err, off |-> off]

-----------------------------------------------------------------------------
Init ==
    /\ epoch = 0
    /\ pEpoch = [p \in Partitions |-> 0]
    /\ nextSeq = [p \in Partitions |-> 0]
    /\ lastAcked = [p \in Partitions |-> NoSeq]
    /\ bumpReq = [p \in Partitions |-> FALSE]
    /\ unresolved = [p \in Partitions |-> FALSE]
    /\ lastOk = [p \in Partitions |-> FALSE]
    /\ aged = [p \in Partitions |-> FALSE]
    /\ batch = [p \in Partitions |-> [b \in Batches |-> FreshBatch]]
    /\ reqs = [c \in Conns |-> <<>>]
    /\ resps = [c \in Conns |-> <<>>]
    /\ log = [p \in Partitions |->
                IF PreWritten THEN <<[b |-> Other, ep |-> -1, seq |-> 0]>> ELSE <<>>]
    /\ pstate = [p \in Partitions |-> NoState]
    /\ pold = [p \in Partitions |-> {}]
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
\* With RearmAfterIdle (kcheck's producer, on top of FirstAckRule), a partition idle
\* for the client's re-arm bound (aged: no acknowledgement for that long, measured
\* from the acknowledged batch's record timestamp) awaits its first ack again: the
\* broker may have expired its producer state (ExpireProducerState), and then the
\* next batch is as exposed as the first of an epoch.  kcheck's drain: blocked if
\* firstAck and p has batches in flight and (nothing acknowledged, or now - stamp(p)
\* >= the bound), stamp(p) the least of the last acknowledged batch's and every
\* in-flight batch's max record timestamp.  The in-flight part only blocks more
\* often than aged does (README.md, "The re-arm rule and time").
\* With PipelineAfterOk (kgo), neither does a partition whose gate is closed
\* (GateClosed: sink.go, sink.createReq).
\* With HandBackOnError (kafkajs), a queued retry does not hold a new batch back:
\* kafkajs has no accumulator; each send() call draws its sequences itself once it
\* holds the broker's lock (sendMessages.js, createProducerRequests: getSequence and
\* updateSequence inside acquireBrokerLock), and the lock goes to the first send()
\* waiting for it (utils/lock.js, release), while a failed one waits out its retry
\* backoff (retry/index.js, scheduleRetry) before it asks for the lock again.  The
\* model's application already produces every batch at once (NumBatches concurrent
\* send() calls, queued in order: Lowest(Unsent(p))), as the kcheck driver does.
\* With AppSerial (the application, not a client rule), p's next batch is produced
\* only once nothing of p is in flight.
SendNew(p) ==
    /\ Pending(ConnOf[p]) < MaxInFlight
    /\ Unsent(p) # {}
    /\ HandBackOnError \/ \A b \in Batches : batch[p][b].st # "retry"
    /\ ~BumpWaits(p) /\ ~unresolved[p]
    /\ pEpoch[p] # epoch => InFlight(p) = {}
    /\ ~GateClosed(p)
    /\ ~(AppSerial /\ InFlight(p) # {})
    /\ LET stale == pEpoch[p] # epoch
           seq   == IF stale THEN 0 ELSE nextSeq[p]
           acked == IF stale THEN NoSeq ELSE lastAcked[p]
           b     == Lowest(Unsent(p))
       IN /\ ~(FirstAckRule /\ InFlight(p) # {} /\ (acked = NoSeq \/ Rearmed(p)))
          /\ ~(HoldWhileRetrying /\ Retrying(p))
          /\ pEpoch' = [pEpoch EXCEPT ![p] = epoch]
          /\ lastAcked' = [lastAcked EXCEPT ![p] = acked]
          /\ nextSeq' = [nextSeq EXCEPT ![p] = seq + 1]
          /\ batch' = [batch EXCEPT ![p][b].st = "sent", ![p][b].seq = seq, ![p][b].ep = epoch]
          /\ reqs' = [reqs EXCEPT ![ConnOf[p]] = Append(@, [p |-> p, b |-> b, ep |-> epoch, seq |-> seq])]
          /\ event' = [act |-> "SendNew", p |-> p, b |-> b, ep |-> epoch, seq |-> seq]
    /\ UNCHANGED <<epoch, bumpReq, unresolved, lastOk, aged, resps, broker, faults, expiries>>

\* Send a reenqueued batch again with the sequence it already has.
\* RecordAccumulator.reenqueue puts it back in sequence order; the drain sends a
\* retry only when it is the lowest sequence in flight (one retry at a time).
\* A partition waiting for an epoch bump sends nothing until the bump.
\* With PipelineAfterOk (kgo), the retry too waits for p's gate: kgo rewinds p to its
\* first pending batch (sink.go, recBuf.resetBatchDrainIdx) and createReq stages it only
\* once nothing of p is outstanding.
\* With HandBackOnError (kafkajs), the retry is the same send() asking for the lock again
\* after its backoff (sendMessages.js: the retrier runs createProducerRequests again),
\* and it draws its sequence again (getSequence, updateSequence): the next sequence of
\* p, which is no longer its own if another send() drew it meanwhile.  Its epoch is
\* the producer's (kafkajs never bumps it).
\* With BumpRule "pin" (kgo), a retry is drained from the head of p's buffer, oldest
\* batch first (sink.go, recBuf.resetBatchDrainIdx), with the epoch and sequence it was
\* first written with (AppendTo writes a pinned batch's own), whatever the producer's
\* epoch is now; a batch the broker refused for them waits for Bump(p), which
\* renumbers it.
Resend(p) ==
    /\ Pending(ConnOf[p]) < MaxInFlight
    /\ ~BumpWaits(p)
    /\ ~GateClosed(p)
    /\ \E b \in Batches :
        /\ batch[p][b].st = "retry"
        /\ BumpRule = "pin" => batch[p][b].ep # -1 /\ \A c \in Batches : c < b => batch[p][c].st # "retry"
        /\ HandBackOnError \/
             \A c \in InFlight(p) : batch[p][c].ep = batch[p][b].ep => batch[p][b].seq <= batch[p][c].seq
        /\ LET seq == IF HandBackOnError THEN nextSeq[p] ELSE batch[p][b].seq
               ep  == IF HandBackOnError THEN epoch ELSE batch[p][b].ep
           IN /\ batch' = [batch EXCEPT ![p][b].st = "sent", ![p][b].seq = seq, ![p][b].ep = ep]
              /\ nextSeq' = IF HandBackOnError THEN [nextSeq EXCEPT ![p] = seq + 1] ELSE nextSeq
              /\ reqs' = [reqs EXCEPT ![ConnOf[p]] = Append(@, [p |-> p, b |-> b, ep |-> ep, seq |-> seq])]
              /\ event' = [act |-> "Resend", p |-> p, b |-> b, ep |-> ep, seq |-> seq]
    /\ UNCHANGED <<epoch, pEpoch, lastAcked, bumpReq, unresolved, lastOk, aged, resps, broker, faults, expiries>>

\* Read the oldest response (Sender.handleProduceResponse, Sender.completeBatch).
\*  - success, or a duplicate answered with the original offset: the batch is done
\*    (TransactionManager.handleCompletedBatch raises lastAcked);
\*  - UNKNOWN_PRODUCER_ID: the idempotent producer bumps its epoch and retries
\*    (TransactionManager.canRetry), unless the answer carried no log start offset
\*    (AnswersLogStart FALSE): then it retries with no bump;
\*  - OUT_OF_ORDER_SEQUENCE_NUMBER: TransactionManager.canRetry retries WITHOUT a bump
\*    when nothing is unresolved and the batch is not the next one (its sequence is not
\*    lastAcked + 1) or was reset by a bump -- the KAFKA-14359 loop; otherwise it
\*    requests a bump and retries;
\*  - Fatal errors (INVALID_PRODUCER_EPOCH, INVALID_RECORD, ...): not retriable, the
\*    batch fails to the application and its sequence is unresolved (kcheck's
\*    producer; TransactionManager.handleFailedBatch);
\*  - PRODUCER_FENCED (tansu's, NotRetried): as a Fatal error for kcheck's producer
\*    and every family below; the Java client's is fatal to the producer
\*    (JavaFenced): every batch not acknowledged fails (Halted);
\*  - DUPLICATE_SEQUENCE_NUMBER (tansu's, with no offset): a success (Success) with no
\*    offset: Sender.completeBatch completes a batch so answered, and so do kcheck's
\*    producer (Core.answer), librdkafka (rd_kafka_handle_idempotent_Produce_error) and
\*    kgo (handleReqRespBatch); kafkajs fails the send() (NotRetriedByKafkajs);
\*  - every other error here is retriable: the batch is reenqueued, sequence kept.
\* Client families:
\*  - ImplicitAck (librdkafka): a success whose batch lies beyond the highest batch
\*    acknowledged so far plus one (rdkafka_request.c,
\*    rd_kafka_handle_idempotent_Produce_success: acked_msgid < first_msgid - 1) also
\*    acknowledges every earlier batch of p waiting in the partition's queues to be
\*    retried (rdkafka_broker.c, rd_kafka_dr_implicit_ack: delivery reports with
\*    NO_ERROR and no offset).  librdkafka assumes those were written, since a later
\*    sequence was accepted; a broker that accepted it with no state for the
\*    producer proves nothing of the kind.  Batches still in an outstanding request
\*    are not in those queues and are left to their own answers.
\*  - HandBackOnError (kafkajs): any error, including a lost connection, hands the
\*    request's sequences back (sendMessages.js, createProducerRequests: the catch
\*    around broker.produce calls updateSequence with minus the record count; the
\*    produce response's parse throws for a partition error, protocol/requests/
\*    produce/v3/response.js).  Retriable errors retry the send (sendMessages.js, the
\*    retrier's callback; retry/index.js), which draws a sequence again (Resend); the
\*    others (NotRetriedByKafkajs) fail it (bail), with no epoch bump: kafkajs gets
\*    its producer id and epoch once, at connect (eosManager, initProducerId).
\*  - BumpRule "drain" (librdkafka; rdkafka_request.c,
\*    rd_kafka_handle_idempotent_Produce_error and rd_kafka_handle_Produce_error):
\*    UNKNOWN_PRODUCER_ID to a batch's first attempt at the next expected sequence is
\*    retried after a drain and an epoch bump, any other is fatal (Halted);
\*    OUT_OF_ORDER_SEQUENCE_NUMBER to a batch beyond the next expected one (an earlier
\*    request failed) is retried after a drain and a bump, to the next expected one or
\*    an earlier one it is fatal ("sequence desynchronization", "rewound sequence");
\*    a fatal error fails the batch and bumps (the idempotent branch for a permanent
\*    error without enable.gapless.guarantee).  Nothing is unresolved.
\*  - BumpRule "failbump" (sarama; async_producer.go, brokerProducer.handleSuccess):
\*    only NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS(_AFTER_APPEND)
\*    and a few others are retried; every other error, the sequence and producer-id
\*    errors included, fails the batch (returnErrors), which bumps the epoch.
\*  - BumpRule "none" (aiokafka 0.14.0; producer/sender.py, the produce handler's
\*    answer handling): a retriable answer resends the batch as it is; any other
\*    (the sequence and producer-id errors, INVALID_PRODUCER_EPOCH, a fatal error)
\*    fails that batch alone: no bump, and the partition's next sequence is not
\*    taken back.
\*  - BumpRule "pin" (kgo; sink.go, handleReqRespBatch): OUT_OF_ORDER_SEQUENCE_NUMBER,
\*    UNKNOWN_PRODUCER_ID and INVALID_PRODUCER_EPOCH (PinRefused) unpin the batch (its
\*    epoch becomes -1: Bump(p) renumbers it) and retry it, and the producer bumps its
\*    epoch if the batch's was the current one (failProducerID, then producerID's local
\*    bump at the next drain, KIP-360; resetAllProducerSequences marks every partition,
\*    which pEpoch # epoch stands for here).  The defaults are kept: no
\*    StopProducerOnDataLossDetected, so no path fails the batch.  Any fatal error fails
\*    every unfinished batch of p (Client.finishBatch, recBuf.failAllRecords) and bumps
\*    (PinnedNow).  An answer in UnsureErrors poisons the batch (sure = "poison"): its
\*    delivery timeout never fails it.
\*  - BumpRule "renew" (kafka-python 3.0.12; sender.py, _dispatch_error and _can_retry;
\*    transaction_manager.py, classify_batch_error): OUT_OF_ORDER_SEQUENCE_NUMBER,
\*    UNKNOWN_PRODUCER_ID and INVALID_PRODUCER_EPOCH fail the batch and ask for a new
\*    producer id; any other non-retriable error is fatal to the producer (Halted:
\*    RecordAccumulator.abort_batches fails every unfinished batch); a retriable error
\*    retries the batch only while its producer id is still the producer's, and fails
\*    it otherwise (the partition's next sequence is not taken back).
\*  - PipelineAfterOk (kgo; sink.go, handleReqRespBatch and recBatch.isOwnersFirstBatch):
\*    an answer to a batch behind p's oldest unfinished one is skipped, a success too:
\*    kgo works only on a partition's first batch, and drains the batches behind a
\*    retried one again after it (recBuf.resetBatchDrainIdx), so the skipped batch is
\*    resent, with its epoch and sequence while it is pinned.
\*  - PipelineAfterOk (kgo): an answer to p's oldest unfinished batch opens p's gate
\*    if it is a success and closes it otherwise (sink.go, handleReqRespBatch:
\*    okOnSink cleared before the error is looked at, set on success; answers to
\*    later batches are skipped there and do not touch it).
\* An acknowledgement of p (a success for a live batch) clears aged[p]: the client's
\* idle clock for p restarts from the acknowledged batch (kcheck's producer keeps
\* its max record timestamp; BoundPasses may follow at once if that is old).  Kept
\* whatever RearmAfterIdle says: it is the clock ExpireProducerState reads too.
Receive(c) ==
    /\ resps[c] # <<>>
    /\ LET r   == Head(resps[c])
           p   == r.p
           bt  == batch[p][r.b]
           cur == r.ep = pEpoch[p]
           isNext == r.seq = lastAcked[p] + 1
           live == bt.st = "sent" /\ bt.ep = r.ep /\ bt.seq = r.seq
           skipped == PipelineAfterOk /\ live /\ r.b # Lowest(Unfinished(p))
           implicit == IF ImplicitAck /\ AckedMsg(p) < r.b - 1
                       THEN {b \in Batches : b < r.b /\ batch[p][b].st = "retry"}
                       ELSE {}
       IN /\ resps' = [resps EXCEPT ![c] = Tail(@)]
          /\ event' = [act |-> "Receive", p |-> p, b |-> r.b, ep |-> r.ep, seq |-> r.seq, err |-> r.err, off |-> r.off]
          /\ unresolved' = IF live /\ r.err \in NotRetried /\ ~JavaFenced(r.err) /\ ~HandBackOnError /\ BumpRule = "java"
                           THEN [unresolved EXCEPT ![p] = TRUE] ELSE unresolved
          /\ nextSeq' = IF HandBackOnError /\ live /\ r.err \notin Success
                        THEN [nextSeq EXCEPT ![p] = @ - 1] ELSE nextSeq
          /\ lastOk' = IF PipelineAfterOk /\ live /\ r.b = Lowest(Unfinished(p))
                       THEN [lastOk EXCEPT ![p] = r.err \in Success] ELSE lastOk
          /\ aged' = IF live /\ r.err \in Success THEN [aged EXCEPT ![p] = FALSE] ELSE aged
          /\ epoch' = IF BumpRule = "pin" /\ live /\ ~skipped /\ r.err \in PinRefused /\ r.ep = epoch THEN epoch + 1
                      ELSE IF BumpRule = "pin" /\ live /\ ~skipped /\ r.err \in NotRetried /\ PinnedNow(p) THEN epoch + 1
                      ELSE epoch
          /\ LET sure == IF r.err \in UnsureErrors \/ bt.sure = "poison" THEN "poison" ELSE "yes"
                 \* kgo's batch after this answer (the fields CASE below leaves alone).
                 kept == IF BumpRule = "pin" /\ live THEN [batch EXCEPT ![p][r.b].sure = sure] ELSE batch
             IN
             CASE ~live ->
                    \* A stale response for a batch that moved on: ignored.
                    UNCHANGED <<batch, lastAcked, bumpReq>>
               [] skipped ->
                    \* kgo: an answer to a batch behind the partition's oldest unfinished one,
                    \* success or error, is skipped; the batch is drained again after it.
                    /\ batch' = [batch EXCEPT ![p][r.b].st = "retry", ![p][r.b].retried = TRUE]
                    /\ UNCHANGED <<lastAcked, bumpReq>>
               [] r.err \in Success ->
                    /\ batch' = [batch EXCEPT ![p] = [b \in Batches |->
                                   IF b = r.b THEN [batch[p][b] EXCEPT !.st = "acked", !.off = r.off]
                                   ELSE IF b \in implicit THEN [batch[p][b] EXCEPT !.st = "acked", !.off = NoOffset]
                                   ELSE batch[p][b]]]
                    /\ lastAcked' = IF cur THEN [lastAcked EXCEPT ![p] = Max(@, r.seq)] ELSE lastAcked
                    /\ UNCHANGED bumpReq
               [] JavaFenced(r.err) ->
                    \* The Java client's fatal state: every batch not acknowledged fails.
                    /\ batch' = Halted(p, r.b, FALSE)
                    /\ UNCHANGED <<lastAcked, bumpReq>>
               [] HandBackOnError ->
                    /\ batch' = IF r.err \in NotRetriedByKafkajs
                                THEN [batch EXCEPT ![p][r.b].st = "failed",
                                                   ![p][r.b].ooo = (r.err = "OUT_OF_ORDER_SEQUENCE_NUMBER")]
                                ELSE [batch EXCEPT ![p][r.b].st = "retry", ![p][r.b].retried = TRUE]
                    /\ UNCHANGED <<lastAcked, bumpReq>>
               [] BumpRule \in {"failbump", "none"} /\ r.err \in NotRetried \cup {"OUT_OF_ORDER_SEQUENCE_NUMBER", "UNKNOWN_PRODUCER_ID"} ->
                    \* The batch fails alone; sarama's failure bumps the epoch, aiokafka's does not.
                    /\ batch' = [batch EXCEPT ![p][r.b].st = "failed",
                                       ![p][r.b].ooo = (r.err = "OUT_OF_ORDER_SEQUENCE_NUMBER")]
                    /\ bumpReq' = IF BumpRule = "failbump" THEN [bumpReq EXCEPT ![p] = TRUE] ELSE bumpReq
                    /\ UNCHANGED lastAcked
               [] BumpRule = "drain" /\ r.err = "UNKNOWN_PRODUCER_ID" ->
                    /\ IF ~bt.retried /\ isNext
                       THEN /\ batch' = [batch EXCEPT ![p][r.b].st = "retry", ![p][r.b].retried = TRUE]
                            /\ bumpReq' = [bumpReq EXCEPT ![p] = TRUE]
                       ELSE /\ batch' = Halted(p, r.b, FALSE)
                            /\ UNCHANGED bumpReq
                    /\ UNCHANGED lastAcked
               [] BumpRule = "drain" /\ r.err = "OUT_OF_ORDER_SEQUENCE_NUMBER" ->
                    /\ IF r.seq > lastAcked[p] + 1
                       THEN /\ batch' = [batch EXCEPT ![p][r.b].st = "retry", ![p][r.b].retried = TRUE, ![p][r.b].ooo = TRUE]
                            /\ bumpReq' = [bumpReq EXCEPT ![p] = TRUE]
                       ELSE /\ batch' = Halted(p, r.b, TRUE)
                            /\ UNCHANGED bumpReq
                    /\ UNCHANGED lastAcked
               [] BumpRule = "drain" /\ r.err \in NotRetried ->
                    /\ batch' = [batch EXCEPT ![p][r.b].st = "failed"]
                    /\ bumpReq' = [bumpReq EXCEPT ![p] = TRUE]
                    /\ UNCHANGED lastAcked
               [] BumpRule = "renew" /\ r.err \in PinRefused ->
                    /\ batch' = [batch EXCEPT ![p][r.b].st = "failed",
                                       ![p][r.b].ooo = (r.err = "OUT_OF_ORDER_SEQUENCE_NUMBER")]
                    /\ bumpReq' = [bumpReq EXCEPT ![p] = TRUE]
                    /\ UNCHANGED lastAcked
               [] BumpRule = "renew" /\ r.err \in Fatal ->
                    /\ batch' = Halted(p, r.b, FALSE)
                    /\ UNCHANGED <<lastAcked, bumpReq>>
               [] BumpRule = "renew" /\ r.ep # epoch ->
                    /\ batch' = [batch EXCEPT ![p][r.b].st = "failed"]
                    /\ UNCHANGED <<lastAcked, bumpReq>>
               [] BumpRule = "pin" /\ r.err \in PinRefused ->
                    /\ batch' = [kept EXCEPT ![p][r.b].st = "retry", ![p][r.b].retried = TRUE, ![p][r.b].ep = -1,
                                       ![p][r.b].ooo = (@ \/ r.err = "OUT_OF_ORDER_SEQUENCE_NUMBER")]
                    /\ UNCHANGED <<lastAcked, bumpReq>>
               [] BumpRule = "pin" /\ r.err \in NotRetried ->
                    /\ batch' = FailAll(p)
                    /\ UNCHANGED <<lastAcked, bumpReq>>
               [] r.err = "UNKNOWN_PRODUCER_ID" ->
                    /\ batch' = [batch EXCEPT ![p][r.b].st = "retry", ![p][r.b].retried = TRUE]
                    /\ bumpReq' = IF bt.reset \/ ~AnswersLogStart THEN bumpReq ELSE [bumpReq EXCEPT ![p] = TRUE]
                    /\ UNCHANGED lastAcked
               [] r.err = "OUT_OF_ORDER_SEQUENCE_NUMBER" ->
                    /\ batch' = [batch EXCEPT ![p][r.b].st = "retry", ![p][r.b].retried = TRUE, ![p][r.b].ooo = TRUE]
                    /\ bumpReq' =
                         IF ~unresolved[p] /\ (bt.reset \/ ~isNext) THEN bumpReq
                         ELSE IF ~unresolved[p] \/ isNext THEN [bumpReq EXCEPT ![p] = TRUE]
                         ELSE bumpReq
                    /\ UNCHANGED lastAcked
               [] r.err \in NotRetried ->
                    /\ batch' = [batch EXCEPT ![p][r.b].st = "failed"]
                    /\ UNCHANGED <<lastAcked, bumpReq>>
               [] OTHER ->
                    /\ batch' = [kept EXCEPT ![p][r.b].st = "retry", ![p][r.b].retried = TRUE]
                    /\ UNCHANGED <<lastAcked, bumpReq>>
    /\ UNCHANGED <<pEpoch, reqs, broker, faults, expiries>>

\* The Java client reads a retriable error answer (REQUEST_TIMED_OUT,
\* NOT_LEADER_OR_FOLLOWER, ...) in the poll in which the batch's delivery.timeout.ms
\* passes (LateAnswerFails): Sender.canRetry says no, and Sender.completeBatch fails
\* the batch with adjustSequenceNumbers (attempts < retries, and retries is
\* Integer.MAX_VALUE), so TransactionManager.handleFailedBatch asks for an epoch bump
\* of the partition at once (requestIdempotentEpochBumpForPartition): no unresolved
\* sequence, no wait for the partition's other batches, and the bump renumbers them,
\* written or not (TxnPartitionEntry.startSequencesAtBeginning).  Were the expiry
\* sweep first (Sender.getExpiredInflightBatches), it would be ExpireBatch instead.
\* The model's Bump waits for p's outstanding requests; Java's does not, but an
\* answer to a renumbered batch then does what it does to the batch here after the
\* bump: a success acknowledges it, an error resends it under the new epoch.
\* kcheck's producer has no such path: a late answer puts the batch up for its
\* retry, where ExpireBatch takes it.
ReceiveLate(c) ==
    /\ LateAnswerFails /\ DeliveryTimeout
    /\ resps[c] # <<>>
    /\ LET r  == Head(resps[c])
           p  == r.p
           bt == batch[p][r.b]
       IN /\ bt.st = "sent" /\ bt.ep = r.ep /\ bt.seq = r.seq
          /\ r.err \notin Success \cup NotRetried \cup {"OUT_OF_ORDER_SEQUENCE_NUMBER", "UNKNOWN_PRODUCER_ID"}
          \* Deadlines pass in the order the batches were made, and the sweep runs
          \* before each poll: no earlier batch of p still waits for its retry.
          /\ \A b \in Batches : b < r.b => batch[p][b].st # "retry"
          /\ resps' = [resps EXCEPT ![c] = Tail(@)]
          /\ batch' = [batch EXCEPT ![p][r.b].st = "failed"]
          /\ bumpReq' = [bumpReq EXCEPT ![p] = TRUE]
          /\ event' = [act |-> "ReceiveLate", p |-> p, b |-> r.b, ep |-> r.ep, seq |-> r.seq, err |-> r.err]
    /\ UNCHANGED <<epoch, pEpoch, nextSeq, lastAcked, unresolved, lastOk, aged, reqs, broker, faults, expiries>>

\* KIP-360 local epoch bump (TransactionManager.bumpIdempotentProducerEpoch, called
\* from Sender.runOnce via bumpIdempotentEpochAndResetIdIfNeeded): epoch + 1 with no
\* RPC, and startSequencesAtBeginning renumbers p's in-flight batches from 0 in
\* sequence order and forgets lastAcked.  The model waits until p has no outstanding
\* request (Java rewrites in-flight batches at once and sorts out their responses
\* with sequenceHasBeenReset; see README.md).
\* Other clients (BumpRule):
\*  - "drain" (librdkafka): the bump waits until no request of the producer is
\*    outstanding, on any partition (rdkafka_idempotence.c, rd_kafka_idemp_check_drain_done
\*    then rd_kafka_idemp_drain_done: a local rd_kafka_pid_bump, no request), and every
\*    partition then renumbers its unacknowledged messages from 0 in the order they
\*    were produced (rdkafka_broker.c, rd_kafka_toppar_producer_serve sees the pid
\*    change; rdkafka_partition.c, rd_kafka_toppar_pid_change moves epoch_base_msgid to
\*    the first message still queued).  Whether a message waiting to be retried was
\*    perhaps written under the old epoch is not asked.
\*  - "failbump" (sarama): epoch + 1 at once, nothing renumbered (transaction_manager.go,
\*    bumpEpoch sets every partition's next sequence to 0); a batch waiting for its
\*    retry is resent with the sequence and epoch it has (asyncProducer.retryBatch),
\*    and a partition starts at 0 in the new epoch with its next new batch
\*    (brokerProducer.sequenceFlushingBatch numbers a batch when it is flushed).
\*  - "none" (aiokafka): nothing asks for a bump, so Bump is never enabled.
\*  - "pin" (kgo): the epoch went up already (Receive, ExpireBatch); Bump(p) is the
\*    partition's sequence reset that follows (PinReset).
\*  - "renew" (kafka-python): the answer to InitProducerId, which kafka-python sends with
\*    its current id and epoch and no transactional id, and the broker answers with a
\*    new producer id at epoch 0 (epoch + 1 here stands for that id).  It does not wait
\*    for outstanding requests (sender.py, run_once sends it first); every partition
\*    starts again at 0 with its next new batch (bump_producer_id_and_epoch clears every
\*    sequence counter); a batch already stamped keeps its old id and sequence, and
\*    gets one more try (Receive).  A new id also ends the stall an expiry left.
BumpEpoch(p) ==
    /\ bumpReq[p]
    /\ CASE BumpRule = "java"     -> Outstanding(p) = {}
         [] BumpRule = "drain"    -> \A q \in Partitions : Outstanding(q) = {}
         [] BumpRule \in {"failbump", "renew"} -> TRUE
    /\ LET renum == CASE BumpRule = "java" -> {p} [] BumpRule = "drain" -> Partitions [] BumpRule \in {"failbump", "renew"} -> {}
           before(q, c, b) == IF BumpRule = "drain" THEN c < b ELSE batch[q][c].seq < batch[q][b].seq
           order(q, b) == Cardinality({c \in InFlight(q) : before(q, c, b)})
       IN /\ batch' = [q \in Partitions |-> IF q \notin renum THEN batch[q] ELSE [b \in Batches |->
                          IF b \in InFlight(q)
                          THEN [batch[q][b] EXCEPT !.seq = order(q, b), !.ep = epoch + 1, !.reset = TRUE]
                          ELSE batch[q][b]]]
          /\ pEpoch' = [q \in Partitions |-> IF q \in renum THEN epoch + 1 ELSE pEpoch[q]]
          /\ nextSeq' = [q \in Partitions |-> IF q \in renum THEN Cardinality(InFlight(q)) ELSE nextSeq[q]]
          /\ lastAcked' = [q \in Partitions |-> IF q \in renum THEN NoSeq ELSE lastAcked[q]]
    /\ epoch' = epoch + 1
    /\ bumpReq' = IF BumpRule = "java" THEN [bumpReq EXCEPT ![p] = FALSE] ELSE [q \in Partitions |-> FALSE]
    /\ unresolved' = IF BumpRule = "renew" THEN [q \in Partitions |-> FALSE] ELSE [unresolved EXCEPT ![p] = FALSE]
    /\ event' = [act |-> "Bump", p |-> p, ep |-> epoch + 1]
    /\ UNCHANGED <<lastOk, aged, reqs, resps, broker, faults, expiries>>

\* kgo's sequence reset after a bump (sink.go, produceRequest.tryAddBatch): p was
\* marked for it by the bump (needSeqReset; here pEpoch[p] # epoch), stages nothing
\* while it has a request outstanding (sink.createReq), and resets when the batch at
\* the head of its buffer is not pinned: every unfinished batch of p is unpinned and
\* renumbered from 0 in buffer order under the current epoch.  kgo takes such a head
\* as proof that the broker holds no later batch; a pinned head is resent as it was
\* (Resend) and p keeps waiting.  A head never sent is SendNew's case: p has nothing
\* in flight, and SendNew starts the epoch at 0.
PinReset(p) ==
    /\ pEpoch[p] # epoch
    /\ Outstanding(p) = {} /\ InFlight(p) # {}
    /\ batch[p][Lowest(InFlight(p))].ep = -1
    /\ LET order(b) == Cardinality({c \in InFlight(p) : c < b})
       IN /\ batch' = [batch EXCEPT ![p] = [b \in Batches |->
                          IF b \in InFlight(p)
                          THEN [batch[p][b] EXCEPT !.seq = order(b), !.ep = epoch, !.reset = TRUE]
                          ELSE batch[p][b]]]
          /\ nextSeq' = [nextSeq EXCEPT ![p] = Cardinality(InFlight(p))]
    /\ pEpoch' = [pEpoch EXCEPT ![p] = epoch]
    /\ lastAcked' = [lastAcked EXCEPT ![p] = NoSeq]
    /\ event' = [act |-> "Bump", p |-> p, ep |-> epoch]
    /\ UNCHANGED <<epoch, bumpReq, unresolved, lastOk, aged, reqs, resps, broker, faults, expiries>>

Bump(p) == IF BumpRule = "pin" THEN PinReset(p) ELSE BumpEpoch(p)

\* delivery.timeout.ms ends a batch waiting to be retried: the application gets a
\* TimeoutException (Sender.getExpiredInflightBatches / failBatch) and the sequence
\* is marked unresolved (TransactionManager.markSequenceUnresolved).  A batch in an
\* outstanding request does not expire here: request.timeout.ms < delivery.timeout.ms,
\* so its attempt ends first (as a response or a disconnect).
\* With BumpRule "drain" (librdkafka) the message timeout fails the batch and always
\* bumps (rdkafka_broker.c, rd_kafka_toppar_producer_serve: timed-out messages start
\* rd_kafka_idemp_drain_epoch_bump); with "failbump" (sarama, whose Producer.Retry.Max
\* plays the timeout) the failed batch bumps the epoch (asyncProducer.retryBatch, then
\* returnErrors).
\* With BumpRule "none" (aiokafka) a batch once sent never expires: its expiry
\* (producer/message_accumulator.py) only fails batches still waiting for a leader.
\* With BumpRule "pin" (kgo), the timeout fails only the batch at the head of p's
\* buffer, and only once its last attempt was answered and no answer left it unsure
\* (sink.go, handleRetryBatches and tryAddBatch: canFailFromLoadErrs and not
\* unsureIfProduced), and then every unfinished batch of p with it (maybeFailErr,
\* recBuf.failAllRecords), and bumps the epoch as a fatal answer does (PinnedNow).
\* With BumpRule "renew" (kafka-python; sender.py, _send_producer_data), an expired batch
\* that was retried clears the producer id (reset_producer_id) and no new one is ever
\* asked for (init_producer_id acts only when uninitialized): the producer stops
\* (unresolved, BumpWaits) until an answer already on the wire asks for a new id.
\* With HandBackOnError (kafkajs, no delivery timeout) this is the retrier running out
\* of retries (retry/index.js: KafkaJSNumberOfRetriesExceeded once retryCount reaches
\* retries; the kcheck driver sets retries so that the backoffs add up to its delivery
\* timeout): the send() fails, and its sequence was handed back already, so nothing
\* is unresolved.
ExpireBatch(p) ==
    /\ DeliveryTimeout /\ BumpRule # "none"
    /\ BumpRule = "renew" => ~BumpWaits(p)
    /\ \E b \in Batches :
        /\ batch[p][b].st = "retry"
        /\ BumpRule = "pin" => b = Lowest(Unfinished(p)) /\ batch[p][b].sure = "yes"
        /\ batch' = IF BumpRule = "pin" THEN FailAll(p) ELSE [batch EXCEPT ![p][b].st = "failed"]
        /\ event' = [act |-> "ExpireBatch", p |-> p, b |-> b, ep |-> batch[p][b].ep, seq |-> batch[p][b].seq]
    /\ unresolved' = IF BumpRule \in {"java", "renew"} /\ ~HandBackOnError THEN [unresolved EXCEPT ![p] = TRUE] ELSE unresolved
    /\ bumpReq' = IF BumpRule \notin {"java", "pin", "renew"} /\ ~HandBackOnError THEN [bumpReq EXCEPT ![p] = TRUE] ELSE bumpReq
    /\ epoch' = IF BumpRule = "pin" /\ PinnedNow(p) THEN epoch + 1 ELSE epoch
    /\ UNCHANGED <<pEpoch, nextSeq, lastAcked, lastOk, aged, reqs, resps, broker, faults, expiries>>

\* TransactionManager.maybeResolveSequences: once p has nothing in flight, an
\* unresolved sequence is resolved if nextSeq = lastAcked + 1 (later batches got
\* through); otherwise the producer bumps its epoch.  Not with BumpRule "renew", whose
\* unresolved is kafka-python's cleared producer id.
ResolveSequences(p) ==
    /\ BumpRule # "renew"
    /\ unresolved[p]
    /\ InFlight(p) = {}
    /\ unresolved' = [unresolved EXCEPT ![p] = FALSE]
    /\ bumpReq' = IF nextSeq[p] = lastAcked[p] + 1 THEN bumpReq ELSE [bumpReq EXCEPT ![p] = TRUE]
    /\ event' = [act |-> "ResolveSequences", p |-> p, bump |-> nextSeq[p] # lastAcked[p] + 1]
    /\ UNCHANGED <<epoch, pEpoch, nextSeq, lastAcked, lastOk, aged, batch, reqs, resps, broker, faults, expiries>>

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
                    /\ Record(p, r, off)
                    /\ resps' = [resps EXCEPT ![c] = Append(@, Respond(r, "NONE", off))]
               [] v = "DUPLICATE" ->
                    \* Answered as success with the original offset, not appended again.
                    /\ resps' = [resps EXCEPT ![c] = Append(@, Respond(r, "NONE", Entry(p, r).win[Lowest(DupOf(p, r))].off))]
                    /\ UNCHANGED <<log, pstate, pold>>
               [] OTHER ->
                    /\ resps' = [resps EXCEPT ![c] = Append(@, Respond(r, v, -1))]
                    /\ UNCHANGED <<log, pstate, pold>>
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
                  /\ Record(p, r, off)
             ELSE UNCHANGED <<log, pstate, pold>>
    /\ faults' = faults + 1
    /\ UNCHANGED <<client, expiries>>

\* Fault: the connection is lost (or request.timeout.ms closes it).  Requests the
\* broker has not handled are not written; responses not yet read are lost, so their
\* batches may or may not be in the log.  NetworkClient fails every outstanding
\* request and the Sender reenqueues their batches with their sequences.
\* With HandBackOnError (kafkajs) the failed requests hand their sequences back, as
\* for an error answer (sendMessages.js: a connection error is thrown by
\* broker.produce too), and their send() calls retry (KafkaJSConnectionError).
\* kgo's gate is not touched (sink.go, handleReqClientErr: the batches are retried
\* with okOnSink as it was), and its delivery timeout cannot fail a batch whose last
\* attempt went unanswered (canFailFromLoadErrs stays false until an answer).
Disconnect(c) ==
    /\ Disconnects
    /\ faults < MaxFaults
    /\ Pending(c) > 0
    /\ reqs' = [reqs EXCEPT ![c] = <<>>]
    /\ resps' = [resps EXCEPT ![c] = <<>>]
    /\ batch' = [p \in Partitions |-> [b \in Batches |->
                   IF batch[p][b].st = "sent" /\ ConnOf[p] = c
                   THEN [batch[p][b] EXCEPT !.st = "retry", !.retried = TRUE,
                                            !.sure = IF BumpRule = "pin" /\ @ = "yes" THEN "lost" ELSE @]
                   ELSE batch[p][b]]]
    /\ nextSeq' = IF HandBackOnError
                  THEN [p \in Partitions |-> IF ConnOf[p] = c THEN nextSeq[p] - Cardinality(Outstanding(p)) ELSE nextSeq[p]]
                  ELSE nextSeq
    /\ faults' = faults + 1
    /\ event' = [act |-> "Disconnect", c |-> c]
    /\ UNCHANGED <<epoch, pEpoch, lastAcked, bumpReq, unresolved, lastOk, aged, broker, expiries>>

\* The broker drops the producer's entry (ProducerStateManager.removeExpiredProducers,
\* run every producer.id.expiration.check.interval.ms) once isProducerExpired holds:
\* producer.id.expiration.ms has passed, on the broker's clock, since the entry's
\* lastTimestamp, which ProducerStateEntry.addBatch sets to the max timestamp of the
\* last batch appended (ProducerAppendInfo.appendDataBatch: batch.maxTimestamp; with
\* CreateTime the record timestamps the producer, or the application, set).  That is
\* far longer than delivery.timeout.ms, so p has nothing in flight when it happens.
\* It is also longer than the client's re-arm bound, so the bound has passed on the
\* client's clock since p's last acknowledged batch: aged[p].  That takes the
\* assumptions of README.md ("The re-arm rule and time"): the client's clock is at
\* most d behind the broker's; p's last acknowledged batch has a max timestamp at
\* most e above that of the last batch appended (so: timestamps that do not run
\* backwards in drain order, beyond what the stamp rule covers); and d + e <
\* producer.id.expiration.ms - the re-arm bound.
ExpireProducerState(p) ==
    /\ StateExpiry
    /\ expiries < MaxExpiries
    /\ pstate[p] # NoState
    /\ InFlight(p) = {}
    /\ aged[p]
    /\ pstate' = [pstate EXCEPT ![p] = NoState]
    /\ expiries' = expiries + 1
    /\ event' = [act |-> "ExpireProducerState", p |-> p]
    /\ UNCHANGED <<client, reqs, resps, log, pold, faults>>

\* Time passes: on the client's clock, the re-arm bound has passed since the max
\* record timestamp of p's last acknowledged batch (or since p started, if none is).
\* Not a Kafka rule but the clock both sides read: kcheck's producer with
\* RearmAfterIdle compares now - stamp(p) with its bound in the drain, and
\* ExpireProducerState, whose producer.id.expiration.ms is longer, needs it.  The
\* environment's choice, with no fairness; only with StateExpiry, since nothing else
\* reads it, so that configurations without expiry have no more states.
BoundPasses(p) ==
    /\ StateExpiry
    /\ ~aged[p]
    /\ aged' = [aged EXCEPT ![p] = TRUE]
    /\ event' = [act |-> "BoundPasses", p |-> p]
    /\ UNCHANGED <<epoch, pEpoch, nextSeq, lastAcked, bumpReq, unresolved, lastOk, batch, reqs, resps, broker, faults, expiries>>

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
        /\ batch' = [batch EXCEPT ![p][b] = FreshBatch]
        /\ event' = [act |-> "ResendByApp", p |-> p, b |-> b]
    /\ UNCHANGED <<epoch, pEpoch, nextSeq, lastAcked, bumpReq, unresolved, lastOk, aged, reqs, resps, broker, faults, expiries>>

-----------------------------------------------------------------------------
Next ==
    \/ \E p \in Partitions :
        \/ SendNew(p) \/ Resend(p) \/ Bump(p) \/ ExpireBatch(p) \/ ResolveSequences(p)
        \/ ExpireProducerState(p) \/ BoundPasses(p) \/ ResendByApp(p)
    \/ \E c \in Conns :
        \/ Receive(c) \/ ReceiveLate(c) \/ HandleProduce(c)
        \/ RejectBeforeAppend(c) \/ AppendThenFail(c) \/ Disconnect(c)

\* Fairness: the Sender thread, the broker's request handlers and the network keep
\* working, so every step they can take is eventually taken while it stays possible
\* (weak fairness).  Faults, delivery timeouts, producer-state expiry and the re-arm
\* bound passing are the environment's choices and get no fairness: a run is allowed
\* to never have them.  Weak fairness is enough: SendNew and Resend can be disabled
\* only by Pending reaching MaxInFlight, or by a hold on the partition that lasts
\* while some of its batches are unanswered (the first-ack rule, re-armed or not,
\* HoldWhileRetrying, kgo's gate, AppSerial), which the fair HandleProduce, Receive
\* and Resend undo; every other fair action stays enabled until taken.
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
        /\ nextSeq[p] \in Nat /\ lastAcked[p] \in Int /\ pEpoch[p] \in Nat /\ lastOk[p] \in BOOLEAN
        /\ aged[p] \in BOOLEAN
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
\* (Jepsen: lost-write and inconsistent-offsets); one acknowledged with no offset
\* (ImplicitAck) is in the log somewhere.
AckedInLog ==
    \A p \in Partitions : \A b \in Batches :
        batch[p][b].st = "acked" =>
            IF batch[p][b].off = NoOffset
            THEN \E i \in Ours(p) : log[p][i].b = b
            ELSE /\ batch[p][b].off \in 0..(Len(log[p]) - 1)
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
