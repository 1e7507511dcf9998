// Transactions for --transactional, in the seed's workload (Main) and the
// throughput mode (Bench): the records grouped into transactions of
// --txn-records (the last may be smaller) with the client's own API at its
// defaults (transactional.id set, initTransactions, beginTransaction,
// commitTransaction, which flushes, and abortTransaction for every
// --txn-abort-every-th), and each committed transaction's time from before
// beginTransaction to the return of commitTransaction.
package kcheck;

import java.util.Arrays;
import java.util.Map;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;

final class Txn {
    /** The flags and their defaults; --transactional is a bare switch. */
    static final String SWITCH = "--transactional";
    static final Map<String, String> FLAGS = Map.of("--txn-records", "100", "--txn-abort-every", "0", "--transactional-id", "");

    final int records, abortEvery;
    final String id;
    int committed, aborted, failed;
    String firstError;
    private long[] nanos = new long[16];
    private int inTxn, tx;
    private long begun;

    private Txn(int records, int abortEvery, String id) {
        this.records = records;
        this.abortEvery = abortEvery;
        this.id = id;
    }

    /**
     * parse reads the flags from a (FLAGS put in it beforehand); null when
     * not transactional, where a transactional flag is a usage error.
     */
    static Txn parse(Map<String, String> a, boolean on, String topic, String defaultPrefix, String prefix) throws Main.SetupError {
        if (!on) {
            for (String k : FLAGS.keySet()) {
                if (!a.get(k).equals(FLAGS.get(k))) throw new Main.SetupError(prefix + k + " needs " + SWITCH);
            }
            return null;
        }
        String id = a.get("--transactional-id").isEmpty() ? defaultPrefix + topic : a.get("--transactional-id");
        return new Txn(Main.num(a, "--txn-records", 1), Main.num(a, "--txn-abort-every", 0), id);
    }

    /** fresh is an empty copy, for the timed part after the warm-up. */
    Txn fresh() { return new Txn(records, abortEvery, id); }

    /** before is called before each record: it begins a transaction when none is open. */
    void before(KafkaProducer<byte[], byte[]> p) {
        if (inTxn > 0) return;
        tx++;
        begun = System.nanoTime();
        p.beginTransaction();
    }

    /** Ends is told each transaction's end as the client's call returns (drivers/OUTCOMES.md, "Transactions"). */
    interface Ends {
        /** end: transaction tx of count records, asked to commit or abort, ended with err (null: as asked). */
        void end(int tx, boolean commit, Exception err, int count);
    }

    /** after without telling the ends (the throughput mode). */
    void after(KafkaProducer<byte[], byte[]> p, boolean last) { after(p, last, null); }

    /**
     * after is called after each record (last: the run's last): it ends the
     * transaction once it holds --txn-records records, or at the last, and
     * tells ends (if not null). A transaction that fails is counted; an
     * abortable one is aborted (a failed commit, then its abort), a fatal
     * error (fenced, out of order, not authorized) is thrown.
     */
    void after(KafkaProducer<byte[], byte[]> p, boolean last, Ends ends) {
        if (++inTxn < records && !last) return;
        int count = inTxn;
        inTxn = 0;
        boolean abort = abortEvery > 0 && tx % abortEvery == 0;
        try {
            if (abort) {
                // Each of its records answered first (drivers/WORKLOADS.md):
                // abortTransaction fails the batches not yet answered with
                // TransactionAbortedException, which would make them failed
                // records rather than aborted ones in the log.
                p.flush();
                p.abortTransaction();
                aborted++;
                if (ends != null) ends.end(tx, false, null, count);
                return;
            }
            p.commitTransaction();
            if (committed == nanos.length) nanos = Arrays.copyOf(nanos, 2 * nanos.length);
            nanos[committed++] = System.nanoTime() - begun;
            if (ends != null) ends.end(tx, true, null, count);
        } catch (ProducerFencedException | OutOfOrderSequenceException | AuthorizationException e) {
            failed++;
            if (firstError == null) firstError = e.toString();
            if (ends != null) ends.end(tx, !abort, e, count);
            throw e;
        } catch (KafkaException e) {
            failed++;
            if (firstError == null) firstError = e.toString();
            if (ends != null) ends.end(tx, !abort, e, count);
            if (abort) throw e; // an abort that failed: nothing more can be asked of this transaction
            p.abortTransaction();
            if (ends != null) ends.end(tx, false, null, count);
        }
    }

    /** json is the "transactions" object of the JSON line. */
    String json() {
        long[] s = Arrays.copyOf(nanos, committed);
        Arrays.sort(s);
        return "{\"committed\":" + committed + ",\"aborted\":" + aborted + ",\"failed\":" + failed
            + ",\"records_per_txn\":" + records + ",\"begin_to_commit_ms\":{\"p50\":" + Bench.ms(Bench.pct(s, 0.50))
            + ",\"p99\":" + Bench.ms(Bench.pct(s, 0.99)) + ",\"max\":" + Bench.ms(Bench.pct(s, 1.0)) + "}}";
    }
}
