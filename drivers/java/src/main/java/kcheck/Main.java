// The seed's experiment (KAFKA-14359) run by the stock Java client: create a
// new topic, produce to it at once with idempotence on, read every partition
// back and count what was lost, duplicated or reordered. One line of JSON on
// stdout; exit 0 clean, 1 anomalies or failed sends, 2 setup errors. Each
// record carries a kcheck-id header, its number n in decimal ASCII, as well
// as the value prefix "rec=<n>;". drivers/kgo and drivers/python run the same
// experiment with other clients, with the same flags, JSON and exit codes.
// --outcomes FILE (or $KCHECK_OUTCOMES) also writes what the client told the
// application about each record, one JSON line a record
// (drivers/sarama/README.md; a failed line also carries the Kafka error code).
// drivers/java/build.sh builds it against kafka-clients 4.3.1 or 4.4.0 (or
// any version on Maven Central, or a local jar: build.sh --jar); the
// JSON's "version" is the one it runs with. With --bench it runs the
// throughput mode instead (Bench.java). With --transactional the records go
// in transactions of --txn-records with the client's own transactional API
// (Txn.java; transactional.id --transactional-id, default kcheck-TOPIC),
// every --txn-abort-every-th aborted, and the JSON adds "transactions":
// committed, aborted, failed, and begin-to-commit p50, p99 and max in ms.
package kcheck;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class Main {
    // The kafka-clients version on the classpath, as the client reports it
    // (drivers/java/build.sh VERSION builds against it).
    static final String VERSION = clientVersion();
    static final String PREFIX = "rec="; // value = "rec=<n>;" + letters
    static final String ID_HEADER = "kcheck-id"; // header: n in decimal ASCII
    static final String USAGE = "usage: --bootstrap HOST:PORT --topic T [--partitions N] [--replication-factor N] "
        + "[--records N] [--value-bytes N] [--keys N] [--compression C] [--delivery-timeout-ms N] [--request-timeout-ms N] "
        + "[--batch-records one|many|default] [--idle-after N --idle-ms D] [--outcomes FILE] "
        + "[--transactional [--txn-records N] [--txn-abort-every K] [--transactional-id ID]]";
    static final long GRACE_MS = 30_000; // past the delivery timeout
    // What --batch-records many sets, as every driver (drivers/WORKLOADS.md).
    static final int MANY_LINGER_MS = 20;
    static final int MANY_BATCH_BYTES = 256 << 10;

    // Shape is the workload's shape (drivers/WORKLOADS.md): --batch-records,
    // and the idle phase (idleAfter -1: none).
    record Shape(String batchRecords, int idleAfter, int idleMs) {}

    static final class SetupError extends Exception {
        SetupError(String msg) { super(msg); }
    }

    public static void main(String[] argv) {
        int bench = java.util.Arrays.asList(argv).indexOf("--bench");
        if (bench >= 0) { // the throughput mode (Bench.java; bench/run.sh)
            List<String> rest = new ArrayList<>(java.util.Arrays.asList(argv));
            rest.remove(bench);
            Bench.main(rest.toArray(new String[0]));
            return;
        }
        long t0 = System.nanoTime();
        Map<String, String> a = new HashMap<>(Map.of(
            "--partitions", "64", "--records", "3000", "--value-bytes", "10240", "--keys", "1024",
            "--compression", "gzip", "--delivery-timeout-ms", "5000", "--request-timeout-ms", "2000",
            "--batch-records", "default", "--idle-after", "", "--idle-ms", "")); // "": no idle phase
        a.put("--replication-factor", "1"); // Map.of takes at most 10 pairs
        String env = System.getenv("KCHECK_OUTCOMES");
        a.put("--outcomes", env == null ? "" : env); // "": none
        a.putAll(Txn.FLAGS);
        List<String> args = new ArrayList<>(java.util.Arrays.asList(argv));
        boolean transactional = args.remove(Txn.SWITCH);
        argv = args.toArray(new String[0]);
        for (int i = 0; i < argv.length; i++) {
            String k = argv[i];
            if (!k.startsWith("--") || i + 1 == argv.length) die(USAGE);
            if (!a.containsKey(k) && !k.equals("--bootstrap") && !k.equals("--topic")) {
                die("java driver: unknown flag " + k + "\n" + USAGE);
            }
            a.put(k, argv[++i]);
        }
        try {
            String bootstrap = need(a, "--bootstrap"), topic = need(a, "--topic");
            int partitions = num(a, "--partitions", 1), records = num(a, "--records", 0),
                valueBytes = num(a, "--value-bytes", 0), keys = num(a, "--keys", 0),
                deliveryTimeoutMs = num(a, "--delivery-timeout-ms", 1), requestTimeoutMs = num(a, "--request-timeout-ms", 1);
            int replicationFactor = num(a, "--replication-factor", Integer.MIN_VALUE);
            if (replicationFactor != -1 && (replicationFactor < 1 || replicationFactor > Short.MAX_VALUE)) {
                throw new SetupError("java driver: --replication-factor wants a number from 1 to " + Short.MAX_VALUE
                    + ", or -1 (the brokers' default.replication.factor), not " + a.get("--replication-factor"));
            }
            String compression = a.get("--compression");
            if (!List.of("none", "gzip", "snappy", "lz4", "zstd").contains(compression)) {
                throw new SetupError("java driver: --compression wants none, gzip, snappy, lz4 or zstd, not " + compression);
            }
            Shape shape = shape(a, records);
            Txn txn = Txn.parse(a, transactional, topic, "kcheck-", "java driver: ");
            Outcomes outcomes = Outcomes.open(a.get("--outcomes"));
            int exit = run(bootstrap, topic, partitions, (short) replicationFactor, records, valueBytes, keys, compression,
                deliveryTimeoutMs, requestTimeoutMs, shape, t0, outcomes, txn);
            System.exit(exit);
        } catch (SetupError e) {
            die(e.getMessage());
        } catch (Exception e) {
            die("java driver: " + e);
        }
    }

    // shape reads --batch-records, --idle-after and --idle-ms as
    // bench/loadgen's ParseSeed does, with its messages.
    static Shape shape(Map<String, String> a, int records) throws SetupError {
        String batch = a.get("--batch-records");
        if (!List.of("one", "many", "default").contains(batch)) {
            throw new SetupError("java driver: --batch-records wants one, many or default, not " + batch);
        }
        boolean after = !a.get("--idle-after").isEmpty(), ms = !a.get("--idle-ms").isEmpty();
        int idleAfter = after ? num(a, "--idle-after", 0) : -1, idleMs = ms ? num(a, "--idle-ms", 0) : 0;
        if (after && !ms) throw new SetupError("java driver: --idle-after needs --idle-ms (how long the idle phase lasts)");
        if (ms && !after) throw new SetupError("java driver: --idle-ms needs --idle-after (how many records come before the idle phase)");
        if (idleAfter > records) {
            throw new SetupError("java driver: --idle-after wants a number of at most --records (" + records + "), not " + idleAfter);
        }
        return new Shape(batch, idleAfter, idleMs);
    }

    // idle is the idle phase, before record n (and once after the last, n ==
    // records): at n == shape.idleAfter() it waits (at most the delivery
    // timeout and grace) until the records before n have been answered,
    // then produces nothing for shape.idleMs(). It returns {start, end, the
    // records still unanswered at the start} (unix ms), or null elsewhere.
    static long[] idle(int n, Shape shape, CountDownLatch firstDone, int deliveryTimeoutMs) throws InterruptedException {
        if (n != shape.idleAfter()) return null;
        firstDone.await(deliveryTimeoutMs + GRACE_MS, TimeUnit.MILLISECONDS);
        long start = System.currentTimeMillis(), open = firstDone.getCount();
        Thread.sleep(shape.idleMs());
        return new long[] {start, System.currentTimeMillis(), open};
    }

    static int run(String bootstrap, String topic, int partitions, short replicationFactor, int records, int valueBytes,
                   int keys, String compression, int deliveryTimeoutMs, int requestTimeoutMs, Shape shape, long t0,
                   Outcomes outcomes, Txn txn) throws Exception {
        createTopic(bootstrap, topic, partitions, replicationFactor);

        // Produce.
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.put(ProducerConfig.CLIENT_ID_CONFIG, "kcheck-java");
        pp.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        pp.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
        // Batching (--batch-records, drivers/WORKLOADS.md). default: linger.ms=0
        // and the default batch.size (16384): a batch is sent as soon as the
        // partition may send, with the records that came while it could not.
        // one: batch.size=0, which the client documents as disabling
        // batching: a batch's buffer is one record's upper-bound size, and
        // the next record does not fit. many: linger.ms=20, batch.size=256 KiB.
        switch (shape.batchRecords()) {
            case "one" -> {
                pp.put(ProducerConfig.LINGER_MS_CONFIG, "0");
                pp.put(ProducerConfig.BATCH_SIZE_CONFIG, "0");
            }
            case "many" -> {
                pp.put(ProducerConfig.LINGER_MS_CONFIG, Integer.toString(MANY_LINGER_MS));
                pp.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(MANY_BATCH_BYTES));
            }
            default -> pp.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        }
        pp.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
        pp.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Integer.toString(deliveryTimeoutMs));
        pp.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Integer.toString(requestTimeoutMs));
        pp.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        pp.put(ProducerConfig.BUFFER_MEMORY_CONFIG, Long.toString(Math.max(32L << 20, 2L * records * (valueBytes + 64))));
        if (txn != null) pp.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txn.id);

        Random rng = new Random(1);
        byte[] letters = new byte[valueBytes];
        for (int i = 0; i < valueBytes; i++) letters[i] = (byte) ('a' + rng.nextInt(26)); // compressible, like text
        int[] keyOf = new int[records];
        boolean[] acked = new boolean[records];
        Map<String, AtomicInteger> errors = new ConcurrentHashMap<>();
        AtomicInteger ackedN = new AtomicInteger(), failedN = new AtomicInteger();
        java.util.concurrent.atomic.AtomicReference<String> firstError = new java.util.concurrent.atomic.AtomicReference<>();
        CountDownLatch done = new CountDownLatch(records);
        CountDownLatch firstDone = new CountDownLatch(Math.max(shape.idleAfter(), 0)); // the records before the idle phase
        long[] idled = null;
        int sent = 0;
        KafkaProducer<byte[], byte[]> producer;
        try {
            producer = new KafkaProducer<>(pp, new ByteArraySerializer(), new ByteArraySerializer());
        } catch (Exception e) {
            throw new SetupError("java driver: starting the producer: " + e);
        }
        if (txn != null) {
            try {
                producer.initTransactions();
            } catch (Exception e) {
                producer.close(Duration.ofSeconds(5));
                throw new SetupError("java driver: initTransactions: " + e);
            }
        }
        for (int n = 0; n < records; n++) {
            long[] i = idle(n, shape, firstDone, deliveryTimeoutMs);
            if (i != null) idled = i;
            final int rec = n;
            keyOf[n] = keys > 0 ? rng.nextInt(keys) : -1;
            byte[] key = keys > 0 ? ("key-" + keyOf[n]).getBytes(StandardCharsets.UTF_8) : null;
            byte[] value = letters.clone();
            byte[] tag = (PREFIX + n + ";").getBytes(StandardCharsets.US_ASCII);
            System.arraycopy(tag, 0, value, 0, Math.min(tag.length, value.length));
            if (txn != null) {
                try {
                    txn.before(producer);
                } catch (Exception e) { // fenced or fatal: nothing more can be sent
                    if (txn.firstError == null) txn.firstError = e.toString();
                    break;
                }
            }
            try {
                ProducerRecord<byte[], byte[]> pr = new ProducerRecord<>(topic, key, value);
                pr.headers().add(new RecordHeader(ID_HEADER, Integer.toString(n).getBytes(StandardCharsets.US_ASCII)));
                producer.send(pr, (md, err) -> {
                    if (outcomes != null) outcomes.report(rec, md, err);
                    if (err == null) {
                        acked[rec] = true;
                        ackedN.incrementAndGet();
                    } else {
                        failedN.incrementAndGet();
                        firstError.compareAndSet(null, err.toString());
                        errors.computeIfAbsent(err.getClass().getName(), x -> new AtomicInteger()).incrementAndGet();
                    }
                    if (rec < shape.idleAfter()) firstDone.countDown();
                    done.countDown();
                });
            } catch (Exception e) {
                if (outcomes != null) outcomes.report(rec, null, e);
                failedN.incrementAndGet();
                errors.computeIfAbsent(e.getClass().getName(), x -> new AtomicInteger()).incrementAndGet();
                if (rec < shape.idleAfter()) firstDone.countDown();
                done.countDown();
            }
            sent++;
            if (txn != null) {
                try {
                    txn.after(producer, n == records - 1,
                        outcomes == null ? null : (tx, commit, err, count) -> outcomes.txnEnd(tx, commit, err, rec - count + 1, rec));
                } catch (Exception e) { // fenced or fatal: nothing more can be sent
                    break;
                }
            }
        }
        // Records never sent (a fatal transactional error) are never answered.
        for (int n = sent; n < records; n++) done.countDown();
        long[] atEnd = idle(records, shape, firstDone, deliveryTimeoutMs); // an idle phase after the last record
        if (atEnd != null) idled = atEnd;
        // linger.ms=0 sends at once; a bounded wait instead of flush(), so a
        // stalled producer is reported rather than waited on forever.
        if (!done.await(deliveryTimeoutMs + GRACE_MS, TimeUnit.MILLISECONDS)) {
            long open = done.getCount();
            failedN.addAndGet((int) open);
            errors.computeIfAbsent("no callback within delivery timeout + " + GRACE_MS / 1000 + " s",
                x -> new AtomicInteger()).addAndGet((int) open);
        }
        // The "none" lines; later callbacks are not written.
        if (outcomes != null) outcomes.end(records);
        producer.close(Duration.ofSeconds(5));

        // Read every partition back from the beginning up to its end offset.
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.CLIENT_ID_CONFIG, "kcheck-java-readback");
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cp.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "2000");
        int[] seen = new int[records];
        int readBack = 0, duplicated = 0, outOfOrder = 0, foreign = 0;
        try (KafkaConsumer<byte[], byte[]> consumer =
                 new KafkaConsumer<>(cp, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions; p++) tps.add(new TopicPartition(topic, p));
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps, Duration.ofSeconds(30));
            // One producer's records keep their send order per partition, whatever their keys.
            Map<TopicPartition, Integer> lastOf = new HashMap<>();
            long deadline = System.currentTimeMillis() + 120_000;
            while (true) {
                boolean all = true;
                for (TopicPartition tp : tps) {
                    if (consumer.position(tp, Duration.ofSeconds(30)) < end.get(tp)) { all = false; break; }
                }
                if (all) break;
                if (System.currentTimeMillis() > deadline) throw new SetupError("java driver: read-back did not reach the end offsets in 120 s");
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    int n = recordNumber(r.value());
                    if (n < 0 || n >= records) { foreign++; continue; }
                    if (++seen[n] > 1) { duplicated++; continue; }
                    readBack++;
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    Integer prev = lastOf.get(tp);
                    if (prev != null && n < prev) outOfOrder++;
                    if (prev == null || n > prev) lastOf.put(tp, n);
                }
            }
        }
        int lost = 0, lostAcked = 0;
        for (int n = 0; n < sent; n++) {
            if (seen[n] == 0) {
                lost++;
                if (acked[n]) lostAcked++;
            }
        }
        if (outcomes != null) outcomes.close();
        long ms = (System.nanoTime() - t0) / 1_000_000;

        StringBuilder j = new StringBuilder();
        j.append("{\"client\":\"java\",\"version\":\"").append(VERSION).append('"')
         .append(",\"sent\":").append(sent)
         .append(",\"acked\":").append(ackedN.get())
         .append(",\"failed\":").append(failedN.get())
         .append(",\"read_back\":").append(readBack)
         .append(",\"lost\":").append(lost)
         .append(",\"lost_acked\":").append(lostAcked)
         .append(",\"duplicated\":").append(duplicated)
         .append(",\"out_of_order\":").append(outOfOrder)
         .append(",\"foreign\":").append(foreign)
         .append(",\"failed_errors\":{");
        boolean first = true;
        for (Map.Entry<String, AtomicInteger> e : new TreeMap<>(errors).entrySet()) {
            if (!first) j.append(',');
            first = false;
            j.append('"').append(jsonEscape(e.getKey())).append("\":").append(e.getValue().get());
        }
        j.append('}');
        if (firstError.get() != null) j.append(",\"first_error\":\"").append(jsonEscape(firstError.get())).append('"');
        j.append(",\"ms\":").append(ms);
        if (txn != null) {
            j.append(",\"transactions\":").append(txn.json());
            if (txn.firstError != null) j.append(",\"first_txn_error\":\"").append(jsonEscape(txn.firstError)).append('"');
        }
        if (!shape.batchRecords().equals("default")) j.append(",\"batch_records\":\"").append(shape.batchRecords()).append('"');
        if (idled != null) {
            j.append(",\"idle_after\":").append(shape.idleAfter()).append(",\"idle_ms\":").append(shape.idleMs())
             .append(",\"idle_start_ms\":").append(idled[0]).append(",\"idle_end_ms\":").append(idled[1])
             .append(",\"idle_unanswered\":").append(idled[2]);
        }
        j.append('}');
        System.out.println(j);
        boolean clean = failedN.get() == 0 && lost == 0 && duplicated == 0 && outOfOrder == 0 && foreign == 0
            && (txn == null || (txn.failed == 0 && sent == records));
        return clean ? 0 : 1;
    }

    // createTopic creates the topic, replicationFactor replicas a partition
    // (-1: the brokers' default.replication.factor, KIP-464), and waits until
    // every partition has a leader, as kcheck run does; then the produce
    // starts at once.
    static void createTopic(String bootstrap, String topic, int partitions, short replicationFactor) throws Exception {
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        ap.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        ap.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        try (Admin admin = Admin.create(ap)) {
            try {
                Optional<Short> rf = replicationFactor == -1 ? Optional.empty() : Optional.of(replicationFactor);
                admin.createTopics(List.of(new NewTopic(topic, Optional.of(partitions), rf))).all().get(30, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof TopicExistsException) {
                    throw new SetupError("java driver: topic \"" + topic + "\" already exists: pick a new --topic");
                }
                // kfake answers CreateTopics (v5+) with the topic made but
                // no configs, which the admin client reads as a list: it
                // throws a NullPointerException. The wait below says
                // whether the topic is there.
                if (!(e.getCause() instanceof NullPointerException)) {
                    throw new SetupError("java driver: creating topic \"" + topic + "\" at " + bootstrap + ": " + e.getCause());
                }
            } catch (java.util.concurrent.TimeoutException e) {
                throw new SetupError("java driver: creating topic \"" + topic + "\" at " + bootstrap + ": timed out (broker unreachable?)");
            }
        }
        // The leaders, from Metadata (a consumer's partitionsFor) rather
        // than the admin client's describeTopics, which 4.x sends as
        // DescribeTopicPartitions (KIP-966) where the broker has it: kfake
        // lists that API and never names a leader in its answer.
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(cp)) {
            long deadline = System.currentTimeMillis() + 30_000;
            for (long backoff = 10; ; backoff = Math.min(2 * backoff, 500)) {
                try {
                    List<PartitionInfo> ps = c.partitionsFor(topic, Duration.ofSeconds(10));
                    int led = 0;
                    for (PartitionInfo p : ps) if (p.leader() != null && p.leader().id() >= 0) led++;
                    if (ps.size() == partitions && led == partitions) return;
                } catch (org.apache.kafka.common.KafkaException e) {
                    // not yet visible; retry
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new SetupError("java driver: topic \"" + topic + "\": partitions have no leaders after 30 s");
                }
                Thread.sleep(backoff);
            }
        }
    }

    // Outcomes writes --outcomes FILE (drivers/sarama/README.md): one JSON
    // line a record as its callback arrives, from the producer's I/O thread
    // (or the sending thread, for a send() that throws), then at the end of
    // the wait a "none" line for each record without one, by id:
    //   {"id":N,"p":P,"off":O}                delivered (off -1 without an offset)
    //   {"id":N,"p":P,"err":"TEXT","code":C}  failed (p -1 if not known); TEXT is
    //       the exception's simple class name, ": " and its message; code the
    //       Kafka error code of an ApiException (Errors.forException), absent
    //       for UNKNOWN_SERVER_ERROR and exceptions that are not ApiExceptions
    //   {"id":N,"none":true}                  no callback by the end of the wait
    static final class Outcomes {
        private final BufferedWriter w;
        private final String path;
        private boolean[] answered = new boolean[0];
        private boolean[] noned = new boolean[0]; // written none at their transaction's end
        private boolean ended;
        private IOException failed; // the first write error, reported by close()

        private Outcomes(BufferedWriter w, String path) { this.w = w; this.path = path; }

        // open returns the writer of path, or null for "".
        static Outcomes open(String path) throws SetupError {
            if (path == null || path.isEmpty()) return null;
            try {
                return new Outcomes(Files.newBufferedWriter(Paths.get(path), StandardCharsets.UTF_8), path);
            } catch (IOException | RuntimeException e) {
                throw new SetupError("java driver: --outcomes " + path + ": " + e);
            }
        }

        synchronized void report(int n, org.apache.kafka.clients.producer.RecordMetadata md, Exception err) {
            if (ended || n < noned.length && noned[n]) return; // its transaction's end wrote it none
            if (n >= answered.length) answered = java.util.Arrays.copyOf(answered, Math.max(n + 1, 2 * answered.length));
            answered[n] = true;
            int p = md != null ? md.partition() : -1;
            if (err == null) {
                long off = md.hasOffset() ? md.offset() : -1;
                write("{\"id\":" + n + ",\"p\":" + p + ",\"off\":" + off + "}\n");
                return;
            }
            StringBuilder b = new StringBuilder();
            b.append("{\"id\":").append(n).append(",\"p\":").append(p).append(",\"err\":\"")
             .append(jsonEscape(err.getClass().getSimpleName() + ": " + err.getMessage())).append('"');
            Integer code = errorCode(err);
            if (code != null) b.append(",\"code\":").append(code);
            write(b.append("}\n").toString());
        }

        // txnEnd writes transaction tx's line (drivers/OUTCOMES.md,
        // "Transactions"): first a "none" line for each of its records
        // from..to with no report yet (none comes later: a late one is not
        // written), then its end: committed, aborted, or failed with err.
        synchronized void txnEnd(int tx, boolean commit, Exception err, int from, int to) {
            if (ended) return;
            if (to >= answered.length) answered = java.util.Arrays.copyOf(answered, Math.max(to + 1, 2 * answered.length));
            if (to >= noned.length) noned = java.util.Arrays.copyOf(noned, Math.max(to + 1, 2 * noned.length));
            for (int n = from; n <= to; n++) {
                if (!answered[n]) {
                    answered[n] = noned[n] = true;
                    write("{\"id\":" + n + ",\"none\":true}\n");
                }
            }
            StringBuilder b = new StringBuilder("{\"tx\":").append(tx).append(",\"commit\":").append(commit).append(",\"res\":\"");
            if (err == null) {
                write(b.append(commit ? "committed" : "aborted").append("\"}\n").toString());
                return;
            }
            b.append("failed\",\"err\":\"").append(jsonEscape(err.getClass().getSimpleName() + ": " + err.getMessage())).append('"');
            Integer code = errorCode(err);
            if (code != null) b.append(",\"code\":").append(code);
            write(b.append("}\n").toString());
        }

        // errorCode is the Kafka protocol error code of err, or null when it
        // is not an ApiException or maps to UNKNOWN_SERVER_ERROR.
        static Integer errorCode(Exception err) {
            if (!(err instanceof ApiException)) return null;
            Errors e = Errors.forException(err);
            if (e == Errors.UNKNOWN_SERVER_ERROR) return null;
            return (int) e.code();
        }

        // end writes a "none" line for each of the records 0..records-1
        // without a callback; after it nothing more is written.
        synchronized void end(int records) {
            ended = true;
            for (int n = 0; n < records; n++) {
                if (n >= answered.length || !answered[n]) write("{\"id\":" + n + ",\"none\":true}\n");
            }
        }

        private void write(String line) {
            if (failed != null) return;
            try {
                w.write(line);
            } catch (IOException e) {
                failed = e;
            }
        }

        synchronized void close() throws SetupError {
            ended = true;
            try {
                w.close();
            } catch (IOException e) {
                if (failed == null) failed = e;
            }
            if (failed != null) throw new SetupError("java driver: --outcomes " + path + ": " + failed);
        }
    }

    // clientVersion reads the version kafka-clients reports (the "version" of
    // its kafka/kafka-version.properties), as AppInfoParser.getVersion() does:
    // that class moved to org.apache.kafka.common.utils.internals in 4.4.0,
    // its resource did not.
    static String clientVersion() {
        try (java.io.InputStream in = KafkaProducer.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            if (in == null) return "unknown";
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "unknown").trim();
        } catch (IOException e) {
            return "unknown";
        }
    }

    static String jsonEscape(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.toString();
    }

    static int recordNumber(byte[] v) {
        if (v == null || v.length < PREFIX.length() + 2) return -1;
        for (int i = 0; i < PREFIX.length(); i++) if (v[i] != PREFIX.charAt(i)) return -1;
        int n = 0;
        for (int i = PREFIX.length(); i < v.length && i < PREFIX.length() + 11; i++) {
            if (v[i] == ';') return n;
            if (v[i] < '0' || v[i] > '9') return -1;
            n = n * 10 + (v[i] - '0');
        }
        return -1;
    }

    static String need(Map<String, String> a, String k) throws SetupError {
        String v = a.get(k);
        if (v != null && v.isEmpty()) v = null;
        if (v == null) throw new SetupError("java driver: " + k + " is required");
        return v;
    }

    static int num(Map<String, String> a, String k, int min) throws SetupError {
        int n;
        try {
            n = Integer.parseInt(a.get(k));
        } catch (NumberFormatException e) {
            throw new SetupError("java driver: " + k + " wants a number, not " + a.get(k));
        }
        if (n < min) throw new SetupError("java driver: " + k + " wants a number of at least " + min + ", not " + a.get(k));
        return n;
    }

    static void die(String msg) {
        System.err.println(msg);
        System.exit(2);
    }
}
