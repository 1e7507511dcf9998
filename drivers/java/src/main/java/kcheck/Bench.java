// The throughput mode of the Java driver (--bench; bench/run.sh): no topic
// creation and no read-back; a warm-up, then records as fast as the stock
// Java client 4.3.1 takes them (or paced at --rate), records/s and
// produce-to-ack latency percentiles in one line of JSON. The same flags,
// loop and JSON as bench/loadgen (kcheck's producer and kgo) and
// drivers/python/bench.py: records carry one of --keys keys drawn by
// java.util.Random(1) after the value's letters, murmur2-partitioned; no
// headers. Latency runs from just before send() (time blocked on a full
// buffer counts) to the callback; percentiles are nearest-rank; cpu_seconds
// is the JVM's CPU time over the timed part. With --transactional the
// records, the warm-up's too, go in transactions of --txn-records (Txn.java),
// and the line adds "transactions": the timed part's committed and aborted,
// and begin-to-commit p50, p99 and max in ms. Exit 0 every
// record acknowledged, 1 some failed, 2 bad usage or setup errors.
package kcheck;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

final class Bench {
    static final String PREFIX = "java driver: ";
    static final String USAGE = "usage: --bench --bootstrap HOST:PORT --topic T [--records N] [--value-bytes N] [--keys N] "
        + "[--compression C] [--linger-ms N] [--batch-bytes N] [--max-in-flight N] [--max-buffered N] "
        + "[--rate N (records/s, 0: as fast as possible)] [--warmup N] [--warmup-topic T] [--warmup-keys random|cycle] "
        + "[--window-ms N] [--delivery-timeout-ms N] [--request-timeout-ms N] "
        + "[--transactional [--txn-records N] [--txn-abort-every K] [--transactional-id ID]]";

    /** The most windows --window-ms counts (as bench/loadgen). */
    static final int MAX_WINDOWS = 3600;

    private Bench() {}

    /** Outcomes of the records of one phase (warm-up or timed). */
    static final class Phase {
        final long[] lat; // nanoseconds; null in the warm-up
        final AtomicInteger n = new AtomicInteger();
        final AtomicInteger failed = new AtomicInteger();
        final Map<String, AtomicInteger> errors = new java.util.concurrent.ConcurrentHashMap<>();
        final java.util.concurrent.atomic.AtomicReference<String> first = new java.util.concurrent.atomic.AtomicReference<>();
        final CountDownLatch done;
        long winStart, winNanos; // winNanos > 0: count acks per window since winStart
        java.util.concurrent.atomic.AtomicLongArray wins;

        Phase(int records, boolean timed) {
            lat = timed ? new long[records] : null;
            done = new CountDownLatch(records);
        }

        void windows(long start, int windowMs) {
            winStart = start;
            winNanos = windowMs * 1_000_000L;
            wins = new java.util.concurrent.atomic.AtomicLongArray(MAX_WINDOWS);
        }

        Callback callback(long start) {
            return (md, err) -> {
                if (err == null) {
                    if (lat != null) {
                        long now = System.nanoTime();
                        int i = n.getAndIncrement();
                        if (i < lat.length) lat[i] = now - start;
                        if (winNanos > 0) wins.incrementAndGet((int) Math.min((now - winStart) / winNanos, MAX_WINDOWS - 1));
                    }
                } else {
                    failed.incrementAndGet();
                    first.compareAndSet(null, err.toString());
                    errors.computeIfAbsent(err.getClass().getName(), x -> new AtomicInteger()).incrementAndGet();
                }
                done.countDown();
            };
        }
    }

    static void main(String[] argv) {
        long t0 = System.nanoTime();
        Map<String, String> a = new HashMap<>(Map.ofEntries(
            Map.entry("--bootstrap", ""), Map.entry("--topic", ""), Map.entry("--records", "100000"),
            Map.entry("--value-bytes", "1024"), Map.entry("--keys", "1024"), Map.entry("--compression", "none"),
            Map.entry("--linger-ms", "5"), Map.entry("--batch-bytes", "16384"), Map.entry("--max-in-flight", "5"),
            Map.entry("--max-buffered", "10000"), Map.entry("--rate", "0"), Map.entry("--warmup", "1000"),
            Map.entry("--warmup-topic", ""), Map.entry("--warmup-keys", "random"), Map.entry("--window-ms", "0"),
            Map.entry("--delivery-timeout-ms", "120000"),
            Map.entry("--request-timeout-ms", "30000")));
        a.putAll(Txn.FLAGS);
        List<String> args = new java.util.ArrayList<>(Arrays.asList(argv));
        boolean transactional = args.remove(Txn.SWITCH);
        argv = args.toArray(new String[0]);
        for (int i = 0; i < argv.length; i++) {
            String k = argv[i];
            if (!k.startsWith("--") || i + 1 == argv.length) Main.die(PREFIX + "bad arguments near \"" + k + "\"\n" + USAGE);
            if (!a.containsKey(k)) Main.die(PREFIX + "unknown flag " + k + "\n" + USAGE);
            a.put(k, argv[++i]);
        }
        try {
            String bootstrap = Main.need(a, "--bootstrap"), topic = Main.need(a, "--topic");
            String warmupTopic = a.get("--warmup-topic").isEmpty() ? topic : a.get("--warmup-topic");
            int records = Main.num(a, "--records", 1), valueBytes = Main.num(a, "--value-bytes", 0),
                keys = Main.num(a, "--keys", 0), lingerMs = Main.num(a, "--linger-ms", 0),
                batchBytes = Main.num(a, "--batch-bytes", 1), maxInFlight = Main.num(a, "--max-in-flight", 1),
                maxBuffered = Main.num(a, "--max-buffered", 1), rate = Main.num(a, "--rate", 0),
                warmup = Main.num(a, "--warmup", 0), deliveryTimeoutMs = Main.num(a, "--delivery-timeout-ms", 1),
                requestTimeoutMs = Main.num(a, "--request-timeout-ms", 1), windowMs = Main.num(a, "--window-ms", 0);
            String warmupKeys = a.get("--warmup-keys");
            if (!List.of("random", "cycle").contains(warmupKeys)) {
                throw new Main.SetupError(PREFIX + "--warmup-keys wants random or cycle, not " + warmupKeys);
            }
            if (maxInFlight > 5) throw new Main.SetupError(PREFIX + "--max-in-flight " + maxInFlight + ": idempotence allows at most 5");
            String compression = a.get("--compression");
            if (!List.of("none", "gzip", "snappy", "lz4", "zstd").contains(compression)) {
                throw new Main.SetupError(PREFIX + "--compression wants none, gzip, snappy, lz4 or zstd, not " + compression);
            }
            Txn txn = Txn.parse(a, transactional, topic, "kcheck-bench-", PREFIX);

            Properties pp = new Properties();
            pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            pp.put(ProducerConfig.CLIENT_ID_CONFIG, "kcheck-java-bench");
            pp.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
            pp.put(ProducerConfig.ACKS_CONFIG, "all");
            pp.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, Integer.toString(maxInFlight));
            pp.put(ProducerConfig.LINGER_MS_CONFIG, Integer.toString(lingerMs));
            pp.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(batchBytes));
            pp.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
            pp.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Integer.toString(deliveryTimeoutMs));
            pp.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Integer.toString(Math.min(requestTimeoutMs, deliveryTimeoutMs)));
            pp.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "60000");
            // The Java client bounds its buffer in bytes, not records: room
            // for --max-buffered records of this size in batch.size buffers.
            long perRecord = valueBytes + 16 + 70;
            long buffer = Math.max(2L * batchBytes, (long) maxBuffered * perRecord);
            pp.put(ProducerConfig.BUFFER_MEMORY_CONFIG, Long.toString(buffer));
            if (txn != null) pp.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txn.id);

            Random rng = new Random(1);
            byte[] value = new byte[valueBytes];
            for (int i = 0; i < valueBytes; i++) value[i] = (byte) ('a' + rng.nextInt(26));
            byte[][] keyBytes = new byte[keys][];
            for (int i = 0; i < keys; i++) keyBytes[i] = ("key-" + i).getBytes(StandardCharsets.UTF_8);

            KafkaProducer<byte[], byte[]> producer;
            try {
                producer = new KafkaProducer<>(pp, new ByteArraySerializer(), new ByteArraySerializer());
            } catch (Exception e) {
                throw new Main.SetupError(PREFIX + "starting the producer: " + e);
            }
            if (txn != null) {
                try {
                    producer.initTransactions();
                } catch (Exception e) {
                    producer.close(Duration.ofSeconds(5));
                    throw new Main.SetupError(PREFIX + "initTransactions: " + e);
                }
            }
            long graceMs = deliveryTimeoutMs + Main.GRACE_MS;
            String line;
            int exit;
            try {
                Phase w = new Phase(warmup, false);
                Txn wt = txn;
                for (int i = 0; i < warmup; i++) {
                    // cycle: every key in turn, drawing nothing, so every partition a key maps to gets a record
                    byte[] key = keys == 0 ? null : warmupKeys.equals("cycle") ? keyBytes[i % keys] : keyBytes[rng.nextInt(keys)];
                    if (wt != null) wt.before(producer);
                    producer.send(new ProducerRecord<>(warmupTopic, key, value), w.callback(System.nanoTime()));
                    if (wt != null) wt.after(producer, i == warmup - 1);
                }
                if (wt != null && wt.failed > 0) throw new Main.SetupError(PREFIX + "a warm-up transaction failed: " + wt.firstError);
                if (!w.done.await(graceMs, TimeUnit.MILLISECONDS)) {
                    throw new Main.SetupError(PREFIX + "the warm-up's " + warmup + " records were not all done within the delivery timeout + 30 s");
                }
                if (w.failed.get() > 0) throw new Main.SetupError(PREFIX + w.failed.get() + " warm-up records failed: " + w.first.get());

                Phase p = new Phase(records, true);
                Txn tt = txn == null ? null : txn.fresh();
                long cpu0 = processCpuNanos();
                long start = System.nanoTime();
                if (windowMs > 0) p.windows(start, windowMs);
                for (int i = 0; i < records; i++) {
                    if (rate > 0) {
                        long due = start + (long) ((double) i / rate * 1e9);
                        for (long d; (d = due - System.nanoTime()) > 0; ) LockSupport.parkNanos(d);
                    }
                    byte[] key = keys > 0 ? keyBytes[rng.nextInt(keys)] : null;
                    if (tt != null) tt.before(producer);
                    long t = System.nanoTime();
                    try {
                        producer.send(new ProducerRecord<>(topic, key, value), p.callback(t));
                    } catch (Exception e) {
                        p.callback(t).onCompletion(null, e);
                    }
                    if (tt != null) tt.after(producer, i == records - 1);
                }
                if (tt != null && tt.failed > 0) throw new Main.SetupError(PREFIX + tt.failed + " transactions failed: " + tt.firstError);
                boolean all = p.done.await(graceMs, TimeUnit.MILLISECONDS);
                long elapsed = System.nanoTime() - start;
                long cpu = processCpuNanos() - cpu0;
                Map<String, Integer> errors = new TreeMap<>();
                for (Map.Entry<String, AtomicInteger> e : p.errors.entrySet()) errors.put(e.getKey(), e.getValue().get());
                int failed = p.failed.get();
                if (!all) {
                    int open = (int) p.done.getCount();
                    failed += open;
                    errors.merge("no callback within delivery timeout + 30 s", open, Integer::sum);
                }
                int acked = Math.min(p.n.get(), records);
                long[] lat = Arrays.copyOf(p.lat, acked);
                Arrays.sort(lat);
                StringBuilder j = new StringBuilder();
                j.append("{\"client\":\"java\",\"version\":\"").append(Main.VERSION).append('"')
                 .append(",\"mode\":\"bench\",\"topic\":\"").append(Main.jsonEscape(topic)).append('"')
                 .append(",\"records\":").append(records)
                 .append(",\"acked\":").append(acked)
                 .append(",\"failed\":").append(failed)
                 .append(",\"failed_errors\":{");
                boolean firstE = true;
                for (Map.Entry<String, Integer> e : errors.entrySet()) {
                    if (!firstE) j.append(',');
                    firstE = false;
                    j.append('"').append(Main.jsonEscape(e.getKey())).append("\":").append(e.getValue());
                }
                j.append('}');
                if (p.first.get() != null) j.append(",\"first_error\":\"").append(Main.jsonEscape(p.first.get())).append('"');
                double secs = elapsed / 1e9;
                j.append(",\"seconds\":").append(secs)
                 .append(",\"cpu_seconds\":").append(cpu / 1e9)
                 .append(",\"records_per_s\":").append(acked / secs)
                 .append(",\"latency_ms\":{\"p50\":").append(ms(pct(lat, 0.50)))
                 .append(",\"p95\":").append(ms(pct(lat, 0.95)))
                 .append(",\"p99\":").append(ms(pct(lat, 0.99)))
                 .append(",\"p999\":").append(ms(pct(lat, 0.999)))
                 .append(",\"max\":").append(ms(pct(lat, 1.0))).append('}')
                 .append(",\"linger_ms\":").append(lingerMs)
                 .append(",\"batch_bytes\":").append(batchBytes)
                 .append(",\"max_in_flight\":").append(maxInFlight)
                 .append(",\"max_buffered\":").append(maxBuffered)
                 .append(",\"rate\":").append(rate)
                 .append(",\"ms\":").append((System.nanoTime() - t0) / 1_000_000);
                if (windowMs > 0) {
                    j.append(",\"window_ms\":").append(windowMs).append(",\"windows\":[");
                    int nw = (int) Math.min(elapsed / p.winNanos + 1, MAX_WINDOWS);
                    for (int i = 0; i < nw; i++) j.append(i > 0 ? "," : "").append(p.wins.get(i));
                    j.append(']');
                }
                if (tt != null) j.append(",\"transactions\":").append(tt.json());
                j.append('}');
                line = j.toString();
                exit = failed == 0 && acked == records ? 0 : 1;
            } finally {
                producer.close(Duration.ofSeconds(5));
            }
            System.out.println(line);
            System.out.flush();
            System.exit(exit);
        } catch (Main.SetupError e) {
            Main.die(e.getMessage());
        } catch (Exception e) {
            Main.die(PREFIX + e);
        }
    }

    /** The JVM's CPU time (every thread, JIT and GC included), or 0 where unknown. */
    static long processCpuNanos() {
        java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            return Math.max(0, ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime());
        }
        return 0;
    }

    /** The nearest-rank q-quantile of sorted, 0 for none. */
    static long pct(long[] sorted, double q) {
        if (sorted.length == 0) return 0;
        int i = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.min(Math.max(i, 0), sorted.length - 1)];
    }

    static double ms(long ns) { return ns / 1e6; }
}
