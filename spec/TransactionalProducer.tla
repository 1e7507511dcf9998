------------------------ MODULE TransactionalProducer ------------------------
(***************************************************************************)
(* Kafka's transactional producer: the transaction coordinator, the        *)
(* partition leaders' transaction state, the markers, the last stable      *)
(* offset and what a read_committed reader sees, under the faults that let *)
(* a request of one transaction act on the next (KAFKA-17754, Jepsen's     *)
(* Bufstream 0.1.0 analysis) or leave a transaction hanging (KAFKA-14402). *)
(*                                                                         *)
(* It EXTENDS IdempotentProducer and reuses its producer and partition     *)
(* state: the client's epoch, per-partition sequences and first-ack        *)
(* bookkeeping (epoch, nextSeq, lastAcked), its batches (batch), the       *)
(* produce connections (reqs, resps), the partitions' logs (log) and the   *)
(* broker's producer entries (pstate), with the broker's epoch, sequence   *)
(* and de-duplication rules (Verdict, Record) and the retry (Resend) and   *)
(* fault (RejectBeforeAppend) actions as they are.  What it adds is the    *)
(* transaction: the coordinator's TransactionMetadata, the client's        *)
(* TransactionManager states, each partition's open transaction, the       *)
(* markers, and requests delayed across connections.                       *)
(*                                                                         *)
(* The application runs NumTxns transactions one after the other; the      *)
(* batches of IdempotentProducer (NumBatches per partition) are split      *)
(* between them in order, BatchesPerTxn == NumBatches \div NumTxns per     *)
(* partition each (TxnOf).  One transactional.id, one producer id: the     *)
(* producer's epoch is the model's epoch.                                  *)
(*                                                                         *)
(* Kafka sources (apache/kafka; cited per action by file and function):    *)
(*   core/src/main/scala/kafka/coordinator/transaction/                    *)
(*     TransactionCoordinator.scala, TransactionMetadata.scala,            *)
(*     TransactionStateManager.scala, TransactionMarkerChannelManager.scala*)
(*   core/src/main/scala/kafka/server/ReplicaManager.scala,                *)
(*     AddPartitionsToTxnManager.scala; core/.../log/UnifiedLog.scala      *)
(*   storage/src/main/java/org/apache/kafka/storage/internals/log/         *)
(*     ProducerStateManager.java, ProducerAppendInfo.java,                 *)
(*     ProducerStateEntry.java                                             *)
(*   clients/src/main/java/org/apache/kafka/clients/producer/internals/    *)
(*     TransactionManager.java, Sender.java, RecordAccumulator.java        *)
(* README.md, "Transactions", has the variants and what TLC finds.         *)
(***************************************************************************)
EXTENDS IdempotentProducer

CONSTANTS
    NumTxns,        \* transactions the application runs, one after the other
    TV,             \* the transaction version the client and the cluster use (KIP-890):
                    \*   "TV1": AddPartitionsToTxn from the client, one epoch for every transaction
                    \*   "TV2": partitions added by the leader on Produce, the epoch bumped by every EndTxn
    Verification,   \* TRUE: KIP-890 part 1 (3.6+, transaction.partition.verification.enable):
                    \*   a leader asks the coordinator before the first transactional append of
                    \*   a producer to a partition (TV1; under TV2 the leader's add is the check)
    DelayProduce,   \* TRUE: a Produce may be delayed across connections and handled late
    DelayEndTxn,    \* TRUE: an EndTxn may be delayed across connections and handled late
    LoseTxnAnswers, \* TRUE: the coordinator's answer may be lost (the client sends the request again)
    TxnTimeout,     \* TRUE: the coordinator may abort an ongoing transaction (transaction.timeout.ms)
    Restarts,       \* TRUE: a new instance with the same transactional.id may fence the producer
    AppAborts,      \* TRUE: the application may abort a transaction of its own accord
    \* --- client families (README.md "Transactions", "Client families"): the Java
    \* client's rules are TRUE, TRUE, TRUE, "resend"; each other value is a client's ---
    TxnBumpOnExpiry, \* TRUE: under TV1 a batch failed by its delivery timeout has the abort
                     \*   followed by an epoch bump (InitProducerId with the current epoch, KIP-360)
    TxnBumpOnError,  \* TRUE: the same after a batch failed by a non-retriable produce answer
    ExpiryAborts,    \* TRUE: a batch failed by its delivery timeout makes the transaction
                     \*   abortable (its commit refused); FALSE: the record alone fails, and the
                     \*   application may commit the transaction's other records
    EndTxnLost       \* what the client does when its EndTxn times out or its answer is lost:
                     \*   "resend": the same EndTxn again; "fail": the commit or abort fails to
                     \*   the application and the producer can end no transaction more

ASSUME TV \in {"TV1", "TV2"}
ASSUME NumTxns \in Nat \ {0} /\ NumBatches % NumTxns = 0
ASSUME \A k \in {Verification, DelayProduce, DelayEndTxn, LoseTxnAnswers, TxnTimeout, Restarts, AppAborts,
                 TxnBumpOnExpiry, TxnBumpOnError, ExpiryAborts} : k \in BOOLEAN
ASSUME EndTxnLost \in {"resend", "fail"}
\* The idempotent module's rules that the transactional model takes as Java's: no
\* other client family, no producer-state expiry, no record already in the log.
ASSUME BumpRule = "java" /\ ~HandBackOnError /\ ~ImplicitAck /\ ~PipelineAfterOk /\ ~PreWritten
ASSUME ~StateExpiry /\ ~AppResends /\ ~AppSerial /\ ~LateAnswerFails /\ ~Disconnects

BatchesPerTxn == NumBatches \div NumTxns
Txns          == 1..NumTxns
TxnOf(b)      == (b - 1) \div BatchesPerTxn + 1
BatchesOf(t)  == {b \in Batches : TxnOf(b) = t}
Marker        == -1        \* the b of a control record (a commit or abort marker)
AnyPartition  == CHOOSE p \in Partitions : TRUE   \* the p of a request that names none

CoordStates  == {"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort"}
Preparing    == {"PrepareCommit", "PrepareAbort"}
ClientStates == {"ready", "inTxn", "ending", "bumping", "fatal"}
\* The produce answers the Java client retries (Sender.canRetry: a RetriableException).
\* A verification the coordinator cannot answer yet (CONCURRENT_TRANSACTIONS) reaches the
\* client as NOT_ENOUGH_REPLICAS (ReplicaManager.appendRecords, postVerificationCallback).
Retriable == {"NOT_LEADER_OR_FOLLOWER", "NOT_ENOUGH_REPLICAS", "REQUEST_TIMED_OUT",
              "NOT_ENOUGH_REPLICAS_AFTER_APPEND"}

VARIABLES
    \* --- the transaction coordinator (TransactionMetadata of our transactional.id) ---
    coord,      \* [st, ep, parts]: its state (CoordStates), the producer epoch it holds, and
                \*   the partitions of the ongoing or completing transaction (topicPartitions)
    markersDue, \* partitions whose marker for the coordinator's decision is not yet written
    \* --- the client (TransactionManager) ---
    txn,        \* [st, t, added, started, abortable, bump]: its state (ClientStates), the
                \*   application's transaction t (0 before the first), the partitions added (TV1:
                \*   partitionsInTransaction), whether EndTxn must be sent (transactionStarted),
                \*   an abortable error, and epochBumpRequired
    creqs,      \* requests on the client's connection to the coordinator, not yet handled
    cresps,     \* the coordinator's answers not yet read
    \* --- requests delayed across connections ---
    lateP,      \* Produce requests the client gave up on (its connection was closed) that a
                \*   leader will still handle, at any later time, or never
    lateC,      \* the same for requests to the coordinator
    \* --- partition leaders (ProducerStateEntry.currentTxnFirstOffset) ---
    ongoing,    \* ongoing[p]: index in log[p] of the first record of our producer's open
                \*   transaction on p (its first offset + 1); 0: none
    \* --- the application ---
    decided,    \* decided[t]: "none" | "commit" | "abort": what the application asked for t
    told        \* told[t]: "none" | "committed" | "aborted" | "fatal": what it was told of t

txnVars == <<coord, markersDue, txn, creqs, cresps, lateP, lateC, ongoing, decided, told>>
allVars == <<vars, txnVars>>
\* Variables of IdempotentProducer the transactional model does not use (its own
\* bump, sequence resolution, kgo gate and expiry machinery): constant here.
unused  == <<pEpoch, bumpReq, unresolved, lastOk, aged, pold, expiries>>

-----------------------------------------------------------------------------
(* Helpers *)

Min(S) == CHOOSE x \in S : \A y \in S : x <= y

\* Java's one transactional request at a time (Sender.maybeSendAndPollTransactionalRequest:
\* while one is in flight, nothing else is sent to the coordinator).
CoordIdle == creqs = <<>> /\ cresps = <<>>

\* A coordinator request: AddPartitionsToTxn (p), EndTxn (commit), InitProducerId.
CReq(api, p, commit) == [api |-> api, p |-> p, ep |-> epoch, commit |-> commit]

\* Every unfinished batch fails (Sender.maybeAbortBatches after a fatal error).
FailUnfinished == [p \in Partitions |-> [b \in Batches |->
                     IF batch[p][b].st \in {"unsent", "sent", "retry"}
                     THEN [batch[p][b] EXCEPT !.st = "failed"] ELSE batch[p][b]]]

\* The client's partition sequences start again at 0 in a new epoch, and the first-ack
\* rule is armed again on every partition (TransactionManager.resetSequenceNumbers after
\* InitProducerId, and after EndTxn under TV2, which hands back the bumped epoch).
NewEpochSeqs ==
    /\ nextSeq' = [p \in Partitions |-> 0]
    /\ lastAcked' = [p \in Partitions |-> NoSeq]

\* Data records of p, and the control record that closes the transaction of the record
\* at index i: our producer's first marker after it (0: none yet).  With one producer,
\* markers delimit its transactions on a partition (ProducerStateManager: a marker
\* completes the producer's open transaction, CompletedTxn).
Data(p)     == {i \in 1..Len(log[p]) : log[p][i].ctl = "DATA"}
EndOf(p, i) == LET M == {j \in (i + 1)..Len(log[p]) : log[p][j].ctl # "DATA"}
               IN IF M = {} THEN 0 ELSE Min(M)
Fate(p, i)  == IF EndOf(p, i) = 0 THEN "OPEN" ELSE log[p][EndOf(p, i)].ctl

\* The last stable offset of p, as a count of records: the first offset of the earliest
\* open transaction, else the log end (ProducerStateManager.firstUndecidedOffset, and
\* UnifiedLog's lastStableOffset; one producer, so its open transaction is the earliest).
LSO(p) == IF ongoing[p] = 0 THEN Len(log[p]) ELSE ongoing[p] - 1

\* What a read_committed consumer returns: data below the last stable offset whose
\* transaction committed (the fetch stops at the LSO and lists the aborted transactions
\* from the transaction index; the consumer drops their records: FetchCollector,
\* CompletedFetch with IsolationLevel.READ_COMMITTED).
Visible(p, i) == i <= LSO(p) /\ log[p][i].ctl = "DATA" /\ Fate(p, i) = "COMMIT"

\* The broker's sequence verdict, with one case IdempotentProducer has no need for: an
\* entry whose epoch a marker raised holds no batch yet, and then only sequence 0 of that
\* epoch is in order (ProducerStateEntry.maybeUpdateProducerEpoch clears the retained
\* batches; ProducerAppendInfo.checkSequence compares with NO_SEQUENCE).
TxnVerdict(p, r) ==
    IF pstate[p] # NoState /\ pstate[p].win = <<>>
    THEN IF r.ep < pstate[p].ep THEN "INVALID_PRODUCER_EPOCH"
         ELSE IF r.seq = 0 THEN "APPEND" ELSE "OUT_OF_ORDER_SEQUENCE_NUMBER"
    ELSE Verdict(p, r)

\* The coordinator's check before a producer's first transactional append to p:
\*  - TV2 (4.0+): when p holds no open transaction of the producer at the batch's epoch
\*    (UnifiedLog.hasOngoingTransaction(producerId, producerEpoch): the entry's open
\*    transaction counts only if the entry's epoch is the batch's), the leader adds p
\*    itself (ReplicaManager.appendRecords with transaction verification,
\*    AddPartitionsToTxnManager.verifyTransaction sending AddPartitionsToTxn v5 with
\*    verifyOnly false; the coordinator's handleAddPartitionsToTransaction): the batch's
\*    epoch must be the coordinator's, and no decision may be being written
\*    (CONCURRENT_TRANSACTIONS, which the leader answers as NOT_ENOUGH_REPLICAS); then p
\*    joins the transaction, which begins if none is on;
\*  - TV1 with Verification (3.6-3.9): when p holds no open transaction of the producer
\*    at all (hasOngoingTransaction(producerId)), verifyOnly
\*    (handleVerifyPartitionsInTransaction): same epoch, no decision being written, and p
\*    already added by the client; a partition not in the transaction is
\*    INVALID_TXN_STATE ("Partition was not added to the transaction");
\*  - TV1 without: no check.
\* The VerificationGuard (UnifiedLog.maybeStartTransactionVerification) makes the check
\* and the append one step: a marker written in between voids the guard.
NeedsCheck(p, r) ==
    IF TV = "TV2" THEN ~(ongoing[p] # 0 /\ pstate[p].ep = r.ep)
    ELSE Verification /\ ongoing[p] = 0
CoordCheck(p, r) ==
    CASE r.ep # coord.ep        -> "PRODUCER_FENCED"
      [] coord.st \in Preparing -> "NOT_ENOUGH_REPLICAS"
      [] TV = "TV2"             -> "OK"
      [] coord.st = "Ongoing" /\ p \in coord.parts -> "OK"
      [] OTHER                  -> "INVALID_TXN_STATE"

\* The leader's answer to Produce r: the transaction check first, then
\* IdempotentProducer's de-duplication, epoch and sequence checks
\* (UnifiedLog.analyzeAndValidateProducerState, ProducerAppendInfo).
ProduceVerdict(r) ==
    IF NeedsCheck(r.p, r) /\ CoordCheck(r.p, r) # "OK" THEN CoordCheck(r.p, r)
    ELSE TxnVerdict(r.p, r)

\* The leader handles Produce r: the coordinator's add under TV2, then the append, which
\* opens a transaction on p if none is open (ProducerAppendInfo.appendDataBatch:
\* currentTxnFirstOffset set by the first transactional batch).  A batch of a higher
\* epoch joins the transaction already open on p (the entry's epoch goes up, its open
\* transaction stays).
LeaderHandles(r) ==
    LET p   == r.p
        v   == ProduceVerdict(r)
        off == Len(log[p])
    IN /\ coord' = IF TV = "TV2" /\ NeedsCheck(p, r) /\ CoordCheck(p, r) = "OK"
                   THEN [coord EXCEPT !.st = "Ongoing", !.parts = @ \cup {p}]
                   ELSE coord
       /\ IF v = "APPEND"
          THEN /\ log' = [log EXCEPT ![p] = Append(@, [b |-> r.b, ep |-> r.ep, seq |-> r.seq, ctl |-> "DATA"])]
               /\ Record(p, r, off)
               /\ ongoing' = IF ongoing[p] = 0 THEN [ongoing EXCEPT ![p] = off + 1] ELSE ongoing
          ELSE UNCHANGED <<log, pstate, pold, ongoing>>

\* The answer to Produce r handled as LeaderHandles(r): a duplicate is answered with the
\* original offset (ProducerStateEntry.findDuplicateBatch).
ProduceAnswer(r) ==
    LET v == ProduceVerdict(r) IN
    CASE v = "APPEND"    -> Respond(r, "NONE", Len(log[r.p]))
      [] v = "DUPLICATE" -> Respond(r, "NONE", Entry(r.p, r).win[Lowest(DupOf(r.p, r))].off)
      [] OTHER           -> Respond(r, v, -1)

\* EndTxn's epoch check (TransactionCoordinator.endTransaction, isValidEpoch): under TV1
\* the client's epoch must be the coordinator's.  Under TV2 too while Empty or Ongoing;
\* while a decision is being written, only the epoch before its bump (a retry of the
\* EndTxn that bumped it, endTxnEpochBumped); once complete, either.
EndEpochOk(r) ==
    CASE TV = "TV1" \/ coord.st \in {"Empty", "Ongoing"} -> r.ep = coord.ep
      [] coord.st \in Preparing                           -> r.ep = coord.ep - 1
      [] OTHER                                            -> r.ep \in {coord.ep - 1, coord.ep}

\* The coordinator's verdict on EndTxn r (TransactionCoordinator.endTransaction): "DECIDE"
\* (a decision is written, answered NONE) or the error answered.  Ongoing: the decision.
\* The same decision again while it is being written: CONCURRENT_TRANSACTIONS; the other
\* one: INVALID_TXN_STATE.  Once complete, TV1 (3.x): the same decision is answered NONE
\* (a retry), the other INVALID_TXN_STATE; TV2 (4.x): a retry (the epoch before the bump)
\* of the same decision is answered NONE, of the other INVALID_TXN_STATE; a new commit is
\* INVALID_TXN_STATE, and a new abort is decided with no partition (the epoch bumped).
\* Empty: INVALID_TXN_STATE, but under TV2 an abort is decided likewise.
EndVerdict(r) ==
    LET same  == (coord.st \in {"PrepareCommit", "CompleteCommit"}) = r.commit
        retry == TV = "TV2" /\ r.ep = coord.ep - 1
    IN CASE ~EndEpochOk(r)          -> "PRODUCER_FENCED"
         [] coord.st = "Ongoing"    -> "DECIDE"
         [] coord.st = "Empty"      -> IF TV = "TV2" /\ ~r.commit THEN "DECIDE" ELSE "INVALID_TXN_STATE"
         [] coord.st \in Preparing  -> IF same THEN "CONCURRENT_TRANSACTIONS" ELSE "INVALID_TXN_STATE"
         [] TV = "TV1" \/ retry     -> IF same THEN "NONE" ELSE "INVALID_TXN_STATE"
         [] ~r.commit               -> "DECIDE"
         [] OTHER                   -> "INVALID_TXN_STATE"

\* The coordinator's decision: PrepareCommit or PrepareAbort is written to the transaction
\* log, the epoch bumped under TV2 (TransactionMetadata.prepareAbortOrCommit), and each
\* partition of the transaction gets a marker (TransactionMarkerChannelManager); with no
\* partition it completes at once.
Decide(commit, ep) ==
    /\ coord' = [st |-> IF coord.parts = {} THEN (IF commit THEN "CompleteCommit" ELSE "CompleteAbort")
                        ELSE (IF commit THEN "PrepareCommit" ELSE "PrepareAbort"),
                 ep |-> ep, parts |-> coord.parts]
    /\ markersDue' = coord.parts

\* The coordinator's answer to request r: [err, ep] (the epoch it returns).
\*  - AddPartitionsToTxn (TransactionCoordinator.handleAddPartitionsToTransaction):
\*    PRODUCER_FENCED for another epoch, CONCURRENT_TRANSACTIONS while completing,
\*    else p joins the transaction (TransactionMetadata.prepareAddPartitions), which
\*    begins if none was on.
\*  - EndTxn: EndVerdict; a decision under TV2 returns the bumped epoch.
\*  - InitProducerId with the client's epoch (TransactionCoordinator.handleInitProducerId,
\*    prepareInitProducerIdTransit): completing: CONCURRENT_TRANSACTIONS; another epoch
\*    than the coordinator's: PRODUCER_FENCED, unless it is a retry of the bump that
\*    produced the current one (TransactionMetadata.prepareIncrementProducerEpoch accepts
\*    lastProducerEpoch); Ongoing: the ongoing transaction is fenced, aborted with the
\*    epoch + 1 (prepareFenceProducerEpoch), and CONCURRENT_TRANSACTIONS answered;
\*    otherwise the epoch + 1, state Empty.
CoordAnswer(r) ==
    CASE r.api = "AddPartitions" ->
            [err |-> CASE r.ep # coord.ep -> "PRODUCER_FENCED"
                       [] coord.st \in Preparing -> "CONCURRENT_TRANSACTIONS"
                       [] OTHER -> "NONE", ep |-> coord.ep]
      [] r.api = "EndTxn" ->
            [err |-> IF EndVerdict(r) = "DECIDE" THEN "NONE" ELSE EndVerdict(r),
             ep |-> IF EndVerdict(r) = "DECIDE" /\ TV = "TV2" THEN coord.ep + 1 ELSE coord.ep]
      [] r.api = "InitPid" ->
            [err |-> CASE coord.st \in Preparing -> "CONCURRENT_TRANSACTIONS"
                       [] r.ep = coord.ep - 1 /\ coord.st = "Empty" -> "NONE"
                       [] r.ep # coord.ep -> "PRODUCER_FENCED"
                       [] coord.st = "Ongoing" -> "CONCURRENT_TRANSACTIONS"
                       [] OTHER -> "NONE",
             ep |-> IF r.ep = coord.ep /\ coord.st \notin Preparing THEN coord.ep + 1 ELSE coord.ep]

CoordHandles(r) ==
    LET a == CoordAnswer(r) IN
    CASE r.api = "AddPartitions" /\ a.err = "NONE" ->
            /\ coord' = [coord EXCEPT !.st = "Ongoing", !.parts = @ \cup {r.p}]
            /\ UNCHANGED markersDue
      [] r.api = "EndTxn" /\ EndVerdict(r) = "DECIDE" ->
            Decide(r.commit, a.ep)
      [] r.api = "InitPid" /\ r.ep = coord.ep /\ coord.st = "Ongoing" ->
            \* fencing: abort the ongoing transaction with the epoch + 1
            Decide(FALSE, coord.ep + 1)
      [] r.api = "InitPid" /\ a.err = "NONE" /\ r.ep = coord.ep ->
            /\ coord' = [st |-> "Empty", ep |-> coord.ep + 1, parts |-> {}]
            /\ UNCHANGED markersDue
      [] OTHER -> UNCHANGED <<coord, markersDue>>

\* The answer as the client reads it: the request it answers, its error and epoch.
CAnswer(r) == [api |-> r.api, p |-> r.p, ep |-> r.ep, commit |-> r.commit,
               err |-> CoordAnswer(r).err, newEp |-> CoordAnswer(r).ep]

\* EndTxnLost "fail": an EndTxn that timed out, or whose answer was lost, fails the
\* commit or abort to the application, and the producer ends no transaction more.
\* kafkajs 2.2.4: src/producer/eosManager/index.js, commit and abort send EndTxn once
\* (broker.endTxn, no retrier around it), and the state stays COMMITTING or ABORTING,
\* where neither a commit, an abort nor a new transaction is allowed (the state
\* machine's legalStates).  The other clients send the same EndTxn again: Java
\* (TransactionManager, EndTxnHandler reenqueued after a disconnect), librdkafka
\* (rdkafka_txnmgr.c, rd_kafka_txn_handle_EndTxn: __TRANSPORT and __TIMED_OUT retry),
\* sarama (transaction_manager.go, endTxn: "retry on network error"), aiokafka
\* (producer/sender.py, BaseHandler.do: a KafkaError retries), kafka-python
\* (transaction_manager.py, EndTxnHandler: a retriable error reenqueues), kgo
\* (pkg/kgo/txn.go, EndTransaction: the request retried on a connection error; once
\* its retries are spent the producer id is reloaded, an epoch bump, which is not
\* modelled).
EndTxnFails ==
    /\ txn' = [txn EXCEPT !.st = "fatal"]
    /\ told' = [told EXCEPT ![txn.t] = IF @ = "none" THEN "fatal" ELSE @]

-----------------------------------------------------------------------------
TxnInit ==
    /\ Init
    /\ coord = [st |-> "Empty", ep |-> 0, parts |-> {}]
    /\ markersDue = {}
    /\ txn = [st |-> "ready", t |-> 0, added |-> {}, started |-> FALSE, abortable |-> FALSE, bump |-> FALSE]
    /\ creqs = <<>>
    /\ cresps = <<>>
    /\ lateP = {}
    /\ lateC = {}
    /\ ongoing = [p \in Partitions |-> 0]
    /\ decided = [t \in Txns |-> "none"]
    /\ told = [t \in Txns |-> "none"]

-----------------------------------------------------------------------------
(* Client actions.  The producer has done InitProducerId with its transactional.id
   and holds epoch 0, as the coordinator does (TxnInit). *)

\* KafkaProducer.beginTransaction (TransactionManager.beginTransaction): local, no request.
BeginTxn ==
    /\ txn.st = "ready" /\ txn.t < NumTxns
    /\ txn' = [txn EXCEPT !.st = "inTxn", !.t = @ + 1, !.added = {}, !.started = FALSE,
                          !.abortable = FALSE, !.bump = FALSE]
    /\ event' = [act |-> "BeginTxn", t |-> txn.t + 1]
    /\ UNCHANGED <<client, reqs, resps, broker, faults, expiries, coord, markersDue, creqs, cresps,
                   lateP, lateC, ongoing, decided, told>>

\* TV1: before its first batch to p in a transaction, the client adds p with
\* AddPartitionsToTxn (TransactionManager.maybeAddPartition, addPartitionsToTransactionHandler;
\* RecordAccumulator drains p only once TransactionManager.isSendToPartitionAllowed).
AddPartitions(p) ==
    /\ TV = "TV1"
    /\ txn.st = "inTxn" /\ ~txn.abortable /\ p \notin txn.added /\ CoordIdle
    /\ \E b \in BatchesOf(txn.t) : batch[p][b].st = "unsent"
    /\ creqs' = <<CReq("AddPartitions", p, FALSE)>>
    /\ event' = [act |-> "AddPartitions", p |-> p, ep |-> epoch]
    /\ UNCHANGED <<client, reqs, resps, broker, faults, expiries, coord, markersDue, txn, cresps,
                   lateP, lateC, ongoing, decided, told>>

\* Drain the next batch of the transaction to p (IdempotentProducer's SendNew, for the
\* Java client: a sequence at drain, held back by a queued retry, and, with FirstAckRule,
\* while p awaits its first ack of the epoch; lastAcked is NoSeq again in every new
\* epoch, so the rule is re-armed at each).  TV1: only to a partition added.  An
\* abortable error stops the drain (Sender: abortUndrainedBatches).
TxnSend(p) ==
    /\ txn.st = "inTxn" /\ ~txn.abortable
    /\ TV = "TV1" => p \in txn.added
    /\ Pending(ConnOf[p]) < MaxInFlight
    /\ \A b \in Batches : batch[p][b].st # "retry"
    /\ \E b \in BatchesOf(txn.t) :
        /\ batch[p][b].st = "unsent"
        /\ \A c \in BatchesOf(txn.t) : c < b => batch[p][c].st # "unsent"
        /\ ~(FirstAckRule /\ InFlight(p) # {} /\ lastAcked[p] = NoSeq)
        /\ batch' = [batch EXCEPT ![p][b].st = "sent", ![p][b].seq = nextSeq[p], ![p][b].ep = epoch]
        /\ nextSeq' = [nextSeq EXCEPT ![p] = @ + 1]
        /\ reqs' = [reqs EXCEPT ![ConnOf[p]] = Append(@, [p |-> p, b |-> b, ep |-> epoch, seq |-> nextSeq[p]])]
        /\ event' = [act |-> "SendNew", p |-> p, b |-> b, ep |-> epoch, seq |-> nextSeq[p]]
    /\ txn' = IF TV = "TV2" THEN [txn EXCEPT !.started = TRUE] ELSE txn
    /\ UNCHANGED <<epoch, pEpoch, lastAcked, bumpReq, unresolved, lastOk, aged, resps, broker, faults,
                   expiries, coord, markersDue, creqs, cresps, lateP, lateC, ongoing, decided, told>>

\* A retry keeps its epoch and sequence: IdempotentProducer's Resend, unchanged.
TxnResend(p) == txn.st # "fatal" /\ Resend(p) /\ UNCHANGED txnVars

\* Read the oldest produce answer (Sender.completeBatch; TransactionManager.handleCompletedBatch
\* and handleFailedBatch).  Success: acknowledged.  A retriable error: reenqueued with its
\* sequence.  PRODUCER_FENCED: fatal (maybeTransitionToErrorState).  Any other error
\* (INVALID_PRODUCER_EPOCH, OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_TXN_STATE): the batch
\* fails, the transaction must abort, and (TV1, a coordinator that can bump, 2.5+) the
\* epoch is to be bumped after the abort (epochBumpRequired), when TxnBumpOnError.
\* Other clients (README.md "Transactions", "Client families"): sarama 1.61.1 bumps
\* too (async_producer.go, maybeTransitionToErrorState sets epochBumpRequired when
\* coordinatorSupportsBumpingEpoch; transaction_manager.go, finishTransaction then
\* initializeTransactions); librdkafka does not (rdkafka_request.c,
\* rd_kafka_handle_Produce_error: rd_kafka_txn_set_abortable_error, no bump, but for
\* UNKNOWN_PRODUCER_ID); kafka-python bumps for the sequence and epoch errors only
\* (transaction_manager.py, classify_batch_error, _NEEDS_EPOCH_BUMP_ERRORS; at once,
\* where the model bumps after the abort); aiokafka never bumps (transaction_manager.py:
\* the producer id and epoch are set by InitProducerId alone); kafkajs neither.
TxnReceive(c) ==
    /\ resps[c] # <<>>
    /\ LET r  == Head(resps[c])
           p  == r.p
           bt == batch[p][r.b]
           live == bt.st = "sent" /\ bt.ep = r.ep /\ bt.seq = r.seq
       IN /\ resps' = [resps EXCEPT ![c] = Tail(@)]
          /\ event' = [act |-> "Receive", p |-> p, b |-> r.b, ep |-> r.ep, seq |-> r.seq, err |-> r.err]
          /\ CASE ~live ->
                    UNCHANGED <<batch, lastAcked, txn, told>>
               [] r.err = "NONE" ->
                    /\ batch' = [batch EXCEPT ![p][r.b].st = "acked", ![p][r.b].off = r.off]
                    /\ lastAcked' = [lastAcked EXCEPT ![p] = Max(@, r.seq)]
                    /\ UNCHANGED <<txn, told>>
               [] r.err \in Retriable ->
                    /\ batch' = [batch EXCEPT ![p][r.b].st = "retry", ![p][r.b].retried = TRUE]
                    /\ UNCHANGED <<lastAcked, txn, told>>
               [] r.err = "PRODUCER_FENCED" ->
                    /\ batch' = FailUnfinished
                    /\ txn' = [txn EXCEPT !.st = "fatal"]
                    /\ told' = [told EXCEPT ![txn.t] = IF @ = "none" THEN "fatal" ELSE @]
                    /\ UNCHANGED lastAcked
               [] OTHER ->
                    /\ batch' = [batch EXCEPT ![p][r.b].st = "failed",
                                       ![p][r.b].ooo = (r.err = "OUT_OF_ORDER_SEQUENCE_NUMBER")]
                    /\ txn' = [txn EXCEPT !.abortable = TRUE, !.bump = (TV = "TV1" /\ TxnBumpOnError)]
                    /\ UNCHANGED <<lastAcked, told>>
    /\ UNCHANGED <<epoch, pEpoch, nextSeq, bumpReq, unresolved, lastOk, aged, reqs, broker, faults,
                   expiries, coord, markersDue, creqs, cresps, lateP, lateC, ongoing, decided>>

\* delivery.timeout.ms fails a batch waiting for its retry (Sender.getExpiredInflightBatches,
\* failBatch): TransactionManager.handleFailedBatch makes it an abortable error, and its
\* unresolved sequence (markSequenceUnresolved, maybeResolveSequences) asks for an epoch
\* bump (TV1; under TV2 the abort's EndTxn bumps it), when TxnBumpOnExpiry.  Other
\* clients: librdkafka bumps after a message timeout too (rdkafka_idempotence.c,
\* rd_kafka_idemp_drain_epoch_bump0: rd_kafka_txn_set_abortable_error_with_bump), and
\* sarama (async_producer.go, maybeTransitionToErrorState, for any failed message).
\* With ~ExpiryAborts the record alone fails and the transaction goes on: kafka-python
\* 3.0.12 fails an expired batch with no state change (sender.py, _send_producer_data:
\* _complete_batch_with_exception; and reset_producer_id refuses a transactional
\* producer), kafkajs 2.2.4 has no abortable state (src/producer/eosManager/index.js:
\* a failed send() leaves it TRANSACTING), and their drivers commit a transaction
\* whose every record was answered, failed or not (drivers/kafkajs/driver.js,
\* drivers/python/kafka_python_driver.py).  aiokafka 0.14.0 expires no sent batch of
\* a transactional producer (producer/sender.py, _can_retry): DeliveryTimeout FALSE.
TxnExpire(p) ==
    /\ DeliveryTimeout /\ txn.st \in {"inTxn", "ending"}
    /\ \E b \in Batches :
        /\ batch[p][b].st = "retry"
        /\ batch' = [batch EXCEPT ![p][b].st = "failed"]
        /\ event' = [act |-> "ExpireBatch", p |-> p, b |-> b, ep |-> batch[p][b].ep, seq |-> batch[p][b].seq]
    /\ txn' = IF ExpiryAborts THEN [txn EXCEPT !.abortable = TRUE, !.bump = (TV = "TV1" /\ TxnBumpOnExpiry)]
              ELSE txn
    /\ UNCHANGED <<epoch, pEpoch, nextSeq, lastAcked, bumpReq, unresolved, lastOk, aged, reqs, resps,
                   broker, faults, expiries, coord, markersDue, creqs, cresps, lateP, lateC, ongoing,
                   decided, told>>

\* The application commits or aborts (KafkaProducer.commitTransaction / abortTransaction;
\* TransactionManager.beginCommit / beginAbort).  EndTxn is sent once no batch is
\* incomplete (TransactionManager.nextRequest holds it while the accumulator has any);
\* commit flushes, so every batch of the transaction is acknowledged (with ~ExpiryAborts,
\* acknowledged or failed by its delivery timeout); an abort fails the
\* batches never drained (RecordAccumulator.abortUndrainedBatches).  A transaction that
\* added nothing completes with no EndTxn (nextRequest: !transactionStarted).
\* The application commits unless the transaction hit an abortable error; with AppAborts
\* it may abort anyway.
EndTxn(commit) ==
    /\ txn.st = "inTxn" /\ CoordIdle
    /\ \A p \in Partitions : InFlight(p) = {}
    /\ IF commit
       THEN ~txn.abortable /\ \A p \in Partitions : \A b \in BatchesOf(txn.t) :
                                 batch[p][b].st \in IF ExpiryAborts THEN {"acked"} ELSE {"acked", "failed"}
       ELSE txn.abortable \/ AppAborts
    /\ decided' = [decided EXCEPT ![txn.t] = IF commit THEN "commit" ELSE "abort"]
    /\ batch' = [p \in Partitions |-> [b \in Batches |->
                   IF batch[p][b].st = "unsent" /\ TxnOf(b) = txn.t
                   THEN [batch[p][b] EXCEPT !.st = "failed"] ELSE batch[p][b]]]
    /\ IF txn.started
       THEN /\ creqs' = <<CReq("EndTxn", AnyPartition, commit)>>
            /\ txn' = [txn EXCEPT !.st = "ending"]
            /\ UNCHANGED told
       ELSE /\ txn' = [txn EXCEPT !.st = IF txn.bump THEN "bumping" ELSE "ready"]
            /\ told' = [told EXCEPT ![txn.t] = IF commit THEN "committed" ELSE "aborted"]
            /\ UNCHANGED creqs
    /\ event' = [act |-> "EndTxn", t |-> txn.t, commit |-> commit, ep |-> epoch]
    /\ UNCHANGED <<epoch, pEpoch, nextSeq, lastAcked, bumpReq, unresolved, lastOk, aged, reqs, resps,
                   broker, faults, expiries, coord, markersDue, cresps, lateP, lateC, ongoing>>

\* TV1, after an abort that needed it: InitProducerId with the current epoch bumps it
\* (TransactionManager.completeTransaction goes to INITIALIZING when epochBumpRequired,
\* then initializeTransactions(producerIdAndEpoch); KIP-360).
BumpEpochInit ==
    /\ txn.st = "bumping" /\ CoordIdle
    /\ creqs' = <<CReq("InitPid", AnyPartition, FALSE)>>
    /\ event' = [act |-> "InitProducerId", ep |-> epoch]
    /\ UNCHANGED <<client, reqs, resps, broker, faults, expiries, coord, markersDue, txn, cresps,
                   lateP, lateC, ongoing, decided, told>>

\* Read the coordinator's answer (TransactionManager's handlers: AddPartitionsToTxnHandler,
\* EndTxnHandler, InitProducerIdHandler).  CONCURRENT_TRANSACTIONS: the same request again
\* (reenqueue).  AddPartitionsToTxn NONE: p added, the transaction started.  EndTxn NONE:
\* the application is told the outcome (TransactionManager.completeTransaction); under TV2
\* the answer's epoch is the producer's from now on.  InitProducerId NONE: the new epoch
\* (InitProducerIdHandler: setProducerIdAndEpoch, resetSequenceNumbers).  Any other error
\* (PRODUCER_FENCED, INVALID_TXN_STATE) is fatal: every unfinished batch fails.
ReceiveCoord ==
    /\ cresps # <<>>
    /\ LET a   == Head(cresps)
           req == [api |-> a.api, p |-> a.p, ep |-> a.ep, commit |-> a.commit]
       IN /\ cresps' = Tail(cresps)
          /\ event' = [act |-> "ReceiveCoord", api |-> a.api, p |-> a.p, err |-> a.err, ep |-> a.newEp]
          /\ CASE a.err = "CONCURRENT_TRANSACTIONS" ->
                    /\ creqs' = <<req>>
                    /\ UNCHANGED <<epoch, nextSeq, lastAcked, batch, txn, told>>
               [] a.err # "NONE" ->
                    /\ batch' = FailUnfinished
                    /\ txn' = [txn EXCEPT !.st = "fatal"]
                    /\ told' = [told EXCEPT ![txn.t] = IF @ = "none" THEN "fatal" ELSE @]
                    /\ UNCHANGED <<epoch, nextSeq, lastAcked, creqs>>
               [] a.api = "AddPartitions" ->
                    /\ txn' = [txn EXCEPT !.added = @ \cup {a.p}, !.started = TRUE]
                    /\ UNCHANGED <<epoch, nextSeq, lastAcked, batch, creqs, told>>
               [] a.api = "EndTxn" ->
                    /\ told' = [told EXCEPT ![txn.t] = IF a.commit THEN "committed" ELSE "aborted"]
                    /\ txn' = [txn EXCEPT !.st = IF txn.bump /\ TV = "TV1" THEN "bumping" ELSE "ready"]
                    /\ IF TV = "TV2" /\ a.newEp # epoch
                       THEN epoch' = a.newEp /\ NewEpochSeqs
                       ELSE UNCHANGED <<epoch, nextSeq, lastAcked>>
                    /\ UNCHANGED <<batch, creqs>>
               [] a.api = "InitPid" ->
                    /\ epoch' = a.newEp /\ NewEpochSeqs
                    /\ txn' = [txn EXCEPT !.st = "ready", !.bump = FALSE]
                    /\ UNCHANGED <<batch, creqs, told>>
    /\ UNCHANGED <<pEpoch, bumpReq, unresolved, lastOk, aged, reqs, resps, broker, faults, expiries,
                   coord, markersDue, lateP, lateC, ongoing, decided>>

-----------------------------------------------------------------------------
(* Broker actions *)

\* The leader handles the oldest Produce on connection c (KafkaApis.handleProduceRequest,
\* ReplicaManager.appendRecords) and answers it.
TxnHandleProduce(c) ==
    /\ reqs[c] # <<>>
    /\ LET r == Head(reqs[c]) IN
       /\ reqs' = [reqs EXCEPT ![c] = Tail(@)]
       /\ LeaderHandles(r)
       /\ resps' = [resps EXCEPT ![c] = Append(@, ProduceAnswer(r))]
       /\ event' = [act |-> "HandleProduce", p |-> r.p, b |-> r.b, ep |-> r.ep, seq |-> r.seq, err |-> ProduceAnswer(r).err]
    /\ UNCHANGED <<client, faults, expiries, markersDue, txn, creqs, cresps, lateP, lateC, decided, told>>

\* Fault: handled as usual, answered REQUEST_TIMED_OUT or another error after the append
\* (IdempotentProducer's AppendThenFail, with the transaction checks).
TxnAppendThenFail(c) ==
    /\ faults < MaxFaults
    /\ reqs[c] # <<>>
    /\ LET r == Head(reqs[c]) IN
       /\ reqs' = [reqs EXCEPT ![c] = Tail(@)]
       /\ LeaderHandles(r)
       /\ \E err \in ErrorsAfterAppend :
            /\ resps' = [resps EXCEPT ![c] = Append(@, Respond(r, err, -1))]
            /\ event' = [act |-> "AppendThenFail", p |-> r.p, b |-> r.b, ep |-> r.ep, seq |-> r.seq, err |-> err]
    /\ faults' = faults + 1
    /\ UNCHANGED <<client, expiries, markersDue, txn, creqs, cresps, lateP, lateC, decided, told>>

\* Fault: an error before the append: IdempotentProducer's RejectBeforeAppend, unchanged.
TxnRejectBeforeAppend(c) == RejectBeforeAppend(c) /\ UNCHANGED txnVars

\* Fault: Produce delayed across connections.  The client's request.timeout.ms passes and
\* it closes the connection (NetworkClient), its unanswered batches go back for a retry
\* on a new one (Sender reenqueues them with their sequences), but the requests are still
\* on their way, or queued at the leader, and will be handled later (HandleLateProduce),
\* or never.  Answers not yet read are lost.
DelayProduceReqs(c) ==
    /\ DelayProduce /\ faults < MaxFaults
    /\ reqs[c] # <<>>
    /\ lateP' = lateP \cup {reqs[c][i] : i \in 1..Len(reqs[c])}
    /\ reqs' = [reqs EXCEPT ![c] = <<>>]
    /\ resps' = [resps EXCEPT ![c] = <<>>]
    /\ batch' = [p \in Partitions |-> [b \in Batches |->
                   IF batch[p][b].st = "sent" /\ ConnOf[p] = c
                   THEN [batch[p][b] EXCEPT !.st = "retry", !.retried = TRUE] ELSE batch[p][b]]]
    /\ faults' = faults + 1
    /\ event' = [act |-> "DelayProduce", c |-> c]
    /\ UNCHANGED <<epoch, pEpoch, nextSeq, lastAcked, bumpReq, unresolved, lastOk, aged, broker, expiries,
                   coord, markersDue, txn, creqs, cresps, lateC, ongoing, decided, told>>

\* A delayed Produce reaches its leader, which handles it as any other; nobody reads the answer.
HandleLateProduce ==
    /\ \E r \in lateP :
        /\ lateP' = lateP \ {r}
        /\ LeaderHandles(r)
        /\ event' = [act |-> "HandleLateProduce", p |-> r.p, b |-> r.b, ep |-> r.ep, seq |-> r.seq, err |-> ProduceAnswer(r).err]
    /\ UNCHANGED <<client, reqs, resps, faults, expiries, markersDue, txn, creqs, cresps, lateC, decided, told>>

\* The coordinator handles the client's request and answers it.
HandleCoord ==
    /\ creqs # <<>>
    /\ LET r == Head(creqs) IN
       /\ CoordHandles(r)
       /\ creqs' = Tail(creqs)
       /\ cresps' = Append(cresps, CAnswer(r))
       /\ event' = [act |-> "HandleCoord", api |-> r.api, p |-> r.p, ep |-> r.ep, commit |-> r.commit,
                    err |-> CoordAnswer(r).err, st |-> coord.st]
    /\ UNCHANGED <<client, reqs, resps, broker, faults, expiries, txn, lateP, lateC, ongoing, decided, told>>

\* Fault: EndTxn delayed across connections: the client's request times out, it sends the
\* same EndTxn again on a new connection (EndTxnHandler reenqueued after the disconnect),
\* and the first one reaches the coordinator later (HandleLateCoord), or never.  With
\* EndTxnLost "fail" the client does not send it again: the commit or abort fails to
\* the application (EndTxnFails).
DelayEndTxnReq ==
    /\ DelayEndTxn /\ faults < MaxFaults
    /\ creqs # <<>> /\ Head(creqs).api = "EndTxn"
    /\ lateC' = lateC \cup {Head(creqs)}
    /\ faults' = faults + 1
    /\ event' = [act |-> "DelayEndTxn", ep |-> Head(creqs).ep, commit |-> Head(creqs).commit]
    /\ IF EndTxnLost = "fail" THEN EndTxnFails /\ creqs' = <<>> ELSE UNCHANGED <<txn, told, creqs>>
    /\ UNCHANGED <<client, reqs, resps, broker, expiries, coord, markersDue, cresps,
                   lateP, ongoing, decided>>

\* A delayed coordinator request arrives; nobody reads the answer.
HandleLateCoord ==
    /\ \E r \in lateC :
        /\ lateC' = lateC \ {r}
        /\ CoordHandles(r)
        /\ event' = [act |-> "HandleLateCoord", api |-> r.api, ep |-> r.ep, commit |-> r.commit,
                     err |-> CoordAnswer(r).err, st |-> coord.st]
    /\ UNCHANGED <<client, reqs, resps, broker, faults, expiries, txn, creqs, cresps, lateP, ongoing,
                   decided, told>>

\* Fault: the coordinator's answer is lost; the client's request times out and it sends
\* the same request again (TxnRequestHandler reenqueued on the disconnect), but for an
\* EndTxn with EndTxnLost "fail" (EndTxnFails).
LoseCoordAnswer ==
    /\ LoseTxnAnswers /\ faults < MaxFaults
    /\ cresps # <<>>
    /\ LET a == Head(cresps) IN
       /\ cresps' = Tail(cresps)
       /\ event' = [act |-> "LoseCoordAnswer", api |-> a.api, err |-> a.err]
       /\ IF EndTxnLost = "fail" /\ a.api = "EndTxn"
          THEN EndTxnFails /\ UNCHANGED creqs
          ELSE /\ creqs' = <<[api |-> a.api, p |-> a.p, ep |-> a.ep, commit |-> a.commit]>>
               /\ UNCHANGED <<txn, told>>
    /\ faults' = faults + 1
    /\ UNCHANGED <<client, reqs, resps, broker, expiries, coord, markersDue, lateP, lateC,
                   ongoing, decided>>

\* The coordinator writes its decision's marker to p (TransactionMarkerChannelManager sends
\* WriteTxnMarkers; the leader appends a control batch, ProducerAppendInfo.appendEndTxnMarker:
\* the producer's open transaction on p completes, its entry takes the marker's epoch,
\* ProducerStateEntry.update).  Once every partition has its marker the transaction is
\* complete (TransactionStateManager writes CompleteCommit / CompleteAbort,
\* TransactionMetadata.prepareComplete: no partitions).
WriteMarker(p) ==
    /\ p \in markersDue
    /\ LET ctl == IF coord.st = "PrepareCommit" THEN "COMMIT" ELSE "ABORT" IN
       /\ log' = [log EXCEPT ![p] = Append(@, [b |-> Marker, ep |-> coord.ep, seq |-> -1, ctl |-> ctl])]
       /\ event' = [act |-> "WriteMarker", p |-> p, ep |-> coord.ep, ctl |-> ctl]
    /\ pstate' = [pstate EXCEPT ![p] = IF @ = NoState \/ @.ep # coord.ep THEN [ep |-> coord.ep, win |-> <<>>] ELSE @]
    /\ ongoing' = [ongoing EXCEPT ![p] = 0]
    /\ markersDue' = markersDue \ {p}
    /\ coord' = IF markersDue = {p}
                THEN [st |-> IF coord.st = "PrepareCommit" THEN "CompleteCommit" ELSE "CompleteAbort",
                      ep |-> coord.ep, parts |-> {}]
                ELSE coord
    /\ UNCHANGED <<client, reqs, resps, pold, faults, expiries, txn, creqs, cresps, lateP, lateC, decided, told>>

\* The coordinator aborts a transaction ongoing for longer than its transaction.timeout.ms
\* (TransactionCoordinator.abortTimedOutTransactions, TransactionStateManager.timedOutTransactions):
\* the epoch is bumped to fence the producer (TransactionMetadata.prepareFenceProducerEpoch)
\* and the abort's markers carry it.  Only when TxnTimeout; when it fires is the
\* environment's choice (a slow client, a paused one), but a transaction left ongoing is
\* eventually aborted (fairness), as Kafka's periodic check does.  It is not counted in
\* MaxFaults: each one fences the producer, which then ends.
CoordTimeout ==
    /\ TxnTimeout
    /\ coord.st = "Ongoing"
    /\ Decide(FALSE, coord.ep + 1)
    /\ event' = [act |-> "CoordTimeout", ep |-> coord.ep + 1]
    /\ UNCHANGED <<client, reqs, resps, broker, faults, expiries, txn, creqs, cresps, lateP, lateC, ongoing,
                   decided, told>>

\* Fault: a new instance of the application starts with the same transactional.id (a
\* restart while the old one is paused or cut off: the zombie) and sends InitProducerId
\* with no epoch (TransactionCoordinator.handleInitProducerId with no
\* expectedProducerIdAndEpoch, prepareInitProducerIdTransit): an ongoing transaction is
\* fenced, aborted with the epoch + 1 (prepareFenceProducerEpoch; the new instance is
\* answered CONCURRENT_TRANSACTIONS and its retry bumps again); with none, the epoch + 1
\* (prepareIncrementProducerEpoch).  While a decision is being written it is answered
\* CONCURRENT_TRANSACTIONS and changes nothing (not a step here).  The new instance
\* writes nothing in the model: what is checked is that the old one, fenced, leaves
\* nothing behind.
NewInstanceInit ==
    /\ Restarts /\ faults < MaxFaults
    /\ coord.st \notin Preparing
    /\ IF coord.st = "Ongoing"
       THEN Decide(FALSE, coord.ep + 1)
       ELSE /\ coord' = [st |-> "Empty", ep |-> coord.ep + 1, parts |-> {}]
            /\ UNCHANGED markersDue
    /\ faults' = faults + 1
    /\ event' = [act |-> "NewInstanceInit", ep |-> coord.ep + 1, st |-> coord.st]
    /\ UNCHANGED <<client, reqs, resps, broker, expiries, txn, creqs, cresps, lateP, lateC, ongoing,
                   decided, told>>

-----------------------------------------------------------------------------
TxnNext ==
    \/ BeginTxn \/ EndTxn(TRUE) \/ EndTxn(FALSE) \/ BumpEpochInit \/ ReceiveCoord
    \/ HandleCoord \/ HandleLateCoord \/ DelayEndTxnReq \/ LoseCoordAnswer \/ CoordTimeout
    \/ NewInstanceInit
    \/ HandleLateProduce
    \/ \E p \in Partitions :
        \/ AddPartitions(p) \/ TxnSend(p) \/ TxnResend(p) \/ TxnExpire(p) \/ WriteMarker(p)
    \/ \E c \in Conns :
        \/ TxnReceive(c) \/ TxnHandleProduce(c) \/ TxnRejectBeforeAppend(c) \/ TxnAppendThenFail(c)
        \/ DelayProduceReqs(c)

\* Fairness: the client, the leaders, the coordinator and its marker sender keep working
\* (weak fairness); the application commits or aborts each transaction it begins, and
\* begins the next; the coordinator aborts a transaction left ongoing (TxnTimeout).
\* Faults, delivery timeouts, delayed requests arriving and the application's own
\* aborts get none.
TxnFairness ==
    /\ WF_allVars(BeginTxn) /\ WF_allVars(EndTxn(TRUE)) /\ WF_allVars(txn.abortable /\ EndTxn(FALSE))
    /\ WF_allVars(BumpEpochInit) /\ WF_allVars(ReceiveCoord) /\ WF_allVars(HandleCoord)
    /\ WF_allVars(CoordTimeout)
    /\ \A p \in Partitions :
        WF_allVars(AddPartitions(p)) /\ WF_allVars(TxnSend(p)) /\ WF_allVars(TxnResend(p))
        /\ WF_allVars(WriteMarker(p))
    /\ \A c \in Conns : WF_allVars(TxnReceive(c)) /\ WF_allVars(TxnHandleProduce(c))

TxnSpec == TxnInit /\ [][TxnNext]_allVars /\ TxnFairness

-----------------------------------------------------------------------------
(* Properties *)

TxnTypeOK ==
    /\ TypeOK
    /\ coord.st \in CoordStates /\ coord.ep \in Nat /\ coord.parts \subseteq Partitions
    /\ markersDue \subseteq coord.parts
    /\ txn.st \in ClientStates /\ txn.t \in 0..NumTxns
    /\ \A p \in Partitions : ongoing[p] \in 0..Len(log[p])
    /\ \A t \in Txns : decided[t] \in {"none", "commit", "abort"}
                       /\ told[t] \in {"none", "committed", "aborted", "fatal"}

\* No aborted read: a read_committed consumer never returns a record of a transaction
\* the application aborted.
NoAbortedRead ==
    \A p \in Partitions : \A i \in Data(p) :
        Visible(p, i) => decided[TxnOf(log[p][i].b)] # "abort"

\* Committed atomically: a transaction's records are all committed, on every partition,
\* or none is.  A record of it may still be open only while markers are being written.
CommittedAtomically ==
    \A p, q \in Partitions : \A i \in Data(p) : \A j \in Data(q) :
        /\ TxnOf(log[p][i].b) = TxnOf(log[q][j].b)
        /\ Fate(p, i) = "COMMIT"
        => \/ Fate(q, j) = "COMMIT"
           \/ Fate(q, j) = "OPEN" /\ markersDue # {}

\* No write into another transaction: records the leader holds in one transaction (closed
\* by the same marker, or both still open) belong to one transaction of the application:
\* a delayed batch never lands in a later transaction.
NoWriteInOtherTxn ==
    \A p \in Partitions : \A i, j \in Data(p) :
        EndOf(p, i) = EndOf(p, j) => TxnOf(log[p][i].b) = TxnOf(log[p][j].b)

\* No duplicate or reorder within an epoch: a partition's records of one epoch are
\* distinct batches in the order the application produced them.
InEpochOrder ==
    \A p \in Partitions : \A i, j \in Data(p) :
        i < j /\ log[p][i].ep = log[p][j].ep => log[p][i].b < log[p][j].b

\* Acknowledged commit implies in the log: once the markers are written, every
\* acknowledged batch of a transaction the application was told committed is in the log,
\* committed (with ExpiryAborts a committed transaction's batches are all acknowledged).
AckedCommitInLog ==
    \A t \in Txns :
        told[t] = "committed" /\ markersDue = {} =>
            \A p \in Partitions : \A b \in BatchesOf(t) : batch[p][b].st = "acked" =>
                \E i \in Data(p) : log[p][i].b = b /\ Fate(p, i) = "COMMIT"

\* The last stable offset eventually advances: a transaction open on a partition is
\* eventually closed by a marker (no hanging transaction, KAFKA-14402).
LSOAdvances ==
    \A p \in Partitions : [](ongoing[p] # 0 => <>(ongoing[p] = 0))

=============================================================================
