package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kcheck/kcheck/tracer"
)

// buildDriver builds the Go driver in drivers/name into a temporary
// directory and returns its path.
func buildDriver(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name+"-driver")
	build := exec.Command("go", "build", "-o", bin, "./drivers/"+name)
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./drivers/%s: %v\n%s", name, err, out)
	}
	return bin
}

// TestDriversTransactionalProxy runs the kgo and sarama drivers with
// --transactional through kcheck proxy on kfake (Kafka 4.1): 200 records in
// transactions of 20, every third aborted. kcheck verify judges each trace
// VALID, and the trace holds what the drivers told (txnTrace).
func TestDriversTransactionalProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the drivers")
	}
	up := kfakeUpstream(t)
	for _, tc := range []struct {
		driver string
		tv     int // the transaction version the client speaks to kfake 4.1
	}{{"kgo", 2}, {"sarama", 1}} {
		t.Run(tc.driver, func(t *testing.T) {
			bin := buildDriver(t, tc.driver)
			tv := driverTxnThroughProxy(t, []string{bin}, up, []string{"--broker-kind", "kfake", "--broker-version", "4.1"}, "txn-"+tc.driver)
			if tv != tc.tv {
				t.Errorf("%s spoke TV%d on the wire, want TV%d", tc.driver, tv, tc.tv)
			}
		})
	}
}

// driverTxnThroughProxy runs the driver command driver (its program and
// the arguments before the workload's) transactionally through kcheck
// proxy in front of upstream, on a new topic, checks its trace (kcheck
// verify VALID, txnTrace) and returns the transaction version the wire
// showed. extra flags go last, over the workload's (a driver takes a
// flag's last value).
func driverTxnThroughProxy(t *testing.T, driver []string, upstream string, broker []string, topic string, extra ...string) int {
	t.Helper()
	trace := filepath.Join(t.TempDir(), topic+".jsonl")
	args := append([]string{"proxy", "--upstream", upstream}, broker...)
	args = append(args, "--topic", topic, "--trace", trace, "--")
	args = append(args, driver...)
	args = append(args, "--bootstrap", "{bootstrap}", "--topic", topic, "--partitions", "4", "--records", "200", "--value-bytes", "50",
		"--keys", "64", "--compression", "lz4", "--delivery-timeout-ms", "30000", "--request-timeout-ms", "5000",
		"--transactional", "--txn-records", "20", "--txn-abort-every", "3")
	args = append(args, extra...)
	code, stdout, stderr := runKcheck(t, args...)
	t.Logf("%s", stdout)
	if code != exitOK || !strings.Contains(stdout, `"txn_committed":7,"txn_aborted":3,"txn_failed":0`) ||
		!strings.Contains(stderr, "about 200 records (0 more never reached the wire)") ||
		!strings.Contains(stderr, "and about 10 transactions' ends (0 more of transactions that never reached the wire)") {
		t.Fatalf("proxy: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "read_committed poller: ") || !strings.Contains(stderr, "reached every partition's end") {
		t.Fatalf("proxy: no read_committed poller that reached the end\nstderr:\n%s", stderr)
	}
	code, stdout, stderr = runKcheck(t, "verify", trace)
	if code != exitOK || !strings.Contains(stdout, ": VALID") || !strings.Contains(stdout, "read_committed polls: ") {
		t.Fatalf("verify: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Logf("%s", stderr)
	return txnTrace(t, trace, 20, 3, 10)
}

// txnTrace checks a proxy trace of a driver's transactional run (records
// 0, 1, ... in transactions of per, every abortEvery-th aborted, ends of
// them): a TxnTold per transaction, in order, told as asked, agreeing with
// the EndTxn the wire answered NONE for it and with the markers that close
// its records in the read-back; and the header's txn_version agreeing with
// the wire (TV2: every EndTxn answered NONE bumped the epoch and no
// AddPartitionsToTxn; TV1: AddPartitionsToTxn and no bump). It returns the
// transaction version.
func txnTrace(t *testing.T, path string, per, abortEvery, ends int) int {
	t.Helper()
	f, err := tracer.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ended := map[int64]bool{} // the wire's transactions answered NONE: commit?
	var told []tracer.Event
	fate := map[int64]string{} // record id -> the marker that closes it
	adds, bumps, answered := 0, 0, 0
	err = f.Each(func(line int, e *tracer.Event) error {
		switch e.Kind {
		case tracer.AddPartitionsToTxn:
			adds++
		case tracer.EndTxnReceive:
			if e.Err == "NONE" {
				answered++
				ended[e.Tx] = e.Commit
				if e.NewEpoch > e.Epoch {
					bumps++
				}
			}
		case tracer.TxnTold:
			told = append(told, *e)
		case tracer.ReadBack:
			closers := tracer.Closers(e.Log, e.Ctl)
			for i, r := range e.Log {
				switch {
				case closers[i] < 0:
					fate[r.ID] = "open"
				case e.Ctl[closers[i]].Commit:
					fate[r.ID] = tracer.Committed
				default:
					fate[r.ID] = tracer.Aborted
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(told) != ends {
		t.Fatalf("%d TxnTold events, want %d", len(told), ends)
	}
	for i, e := range told {
		driverTx := i + 1
		want := tracer.Committed
		if driverTx%abortEvery == 0 {
			want = tracer.Aborted
		}
		if commit, ok := ended[e.Tx]; e.Result != want || !ok || commit != (want == tracer.Committed) {
			t.Errorf("the driver's transaction %d: TxnTold %+v; the wire's transaction %d answered NONE %v, commit %v", driverTx, e, e.Tx, ok, commit)
		}
		for id := int64(i * per); id < int64((i+1)*per); id++ {
			if fate[id] != want {
				t.Errorf("record %d of the driver's transaction %d (told %s): %q in the read-back", id, driverTx, want, fate[id])
			}
		}
	}
	tv := f.Header().TxnVersion
	switch {
	case tv == 2 && bumps == answered && adds == 0:
	case tv == 1 && bumps == 0 && adds > 0:
	default:
		t.Errorf("header txn_version %d; on the wire %d AddPartitionsToTxn, %d of %d EndTxn answers bumped the epoch", tv, adds, bumps, answered)
	}
	t.Logf("TV%d: %d AddPartitionsToTxn, %d of %d EndTxn answers bumped the epoch", tv, adds, bumps, answered)
	return tv
}

// TestDriversTransactionalOnKafka is TestDriversTransactionalProxy on real
// Kafka 4.4.0 (one node, started by kcheck kafka). It runs only with
// KCHECK_KAFKA=1 (make kafka-test).
func TestDriversTransactionalOnKafka(t *testing.T) {
	if os.Getenv("KCHECK_KAFKA") != "1" {
		t.Skip("set KCHECK_KAFKA=1 to fetch and run a real Kafka (make kafka-test)")
	}
	addr := startKafka(t, "4.4.0")
	for _, tc := range []struct {
		driver string
		tv     int
	}{{"kgo", 2}, {"sarama", 1}} {
		t.Run(tc.driver, func(t *testing.T) {
			bin := buildDriver(t, tc.driver)
			tv := driverTxnThroughProxy(t, []string{bin}, addr, []string{"--broker-kind", "kafka", "--broker-version", "4.4.0"}, fmt.Sprintf("txn-%s-kafka", tc.driver))
			if tv != tc.tv {
				t.Errorf("%s spoke TV%d on the wire, want TV%d", tc.driver, tv, tc.tv)
			}
		})
	}
}

// A driver's transactional report that cannot be true of the wire is
// refused with its file and line, exit 2: a transaction's end never begun,
// a commit of a transaction none of whose records reached the wire.
func TestProxyRefusesBadTxnReport(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the kgo driver")
	}
	up := kfakeUpstream(t)
	bin := buildDriver(t, "kgo")
	for i, tc := range []struct{ name, extra, want string }{
		{"never begun", `{"tx":12,"commit":true,"res":"committed"}`,
			":33: transaction 12 was never begun: the last transaction reported is 2"},
		{"never on the wire", `{"id":999,"p":-1,"err":"x"}` + "\n" + `{"tx":3,"commit":true,"res":"committed"}`,
			":34: transaction 3 is reported committed, but none of its records reached the wire through the proxy: a commit of a transaction the wire never saw begin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topic := fmt.Sprintf("bad-txn-%d", i)
			trace := filepath.Join(t.TempDir(), topic+".jsonl")
			script := fmt.Sprintf(`"$0" --bootstrap "$1" --topic %s --partitions 2 --records 30 --value-bytes 20 --transactional --txn-records 15 && printf '%%s\n' '%s' >>"$KCHECK_OUTCOMES"`,
				topic, strings.ReplaceAll(tc.extra, "\n", "' '"))
			code, _, stderr := runKcheck(t, "proxy", "--upstream", up, "--broker-kind", "kfake", "--topic", topic, "--trace", trace, "--",
				"sh", "-c", script, bin, "{bootstrap}")
			if code != exitUsage || !strings.Contains(stderr, "outcomes.jsonl"+tc.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, exitUsage, tc.want)
			}
		})
	}
}

// A broker that cannot run transactions (kfake emulating Kafka 4.1 without
// EndTxn): each driver with --transactional could not run, exit 2 with its
// client's words, and prints no JSON line (no verdict).
func TestDriversTransactionalCannotRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the drivers")
	}
	vs := kversion.V4_1_0()                      // a copy of workload.Emulations' would share its map
	vs.SetMaxKeyVersion(kmsg.EndTxn.Int16(), -1) // -1: the key removed
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.MaxVersions(vs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	for _, tc := range []struct{ driver, words string }{
		{"kgo", "kgo driver: could not run transactions: transaction 1: commit: broker is too old"},
		{"sarama", "sarama driver: could not run transactions: transaction 1: commit: kafka server: The version of API is not supported"},
	} {
		t.Run(tc.driver, func(t *testing.T) {
			cmd := exec.Command(buildDriver(t, tc.driver), "--bootstrap", c.ListenAddrs()[0], "--topic", "no-txn-"+tc.driver, "--partitions", "2",
				"--records", "20", "--value-bytes", "10", "--transactional", "--txn-records", "5", "--delivery-timeout-ms", "5000")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.HasPrefix(stderr.String(), tc.words) || stdout.Len() > 0 {
				t.Errorf("%v\nstdout %q\nstderr %q\nwant exit 2 and %q", err, stdout.String(), stderr.String(), tc.words)
			}
		})
	}
}

// What a driver reports of a transaction's end is what verify holds the log
// to: the kgo driver's report with transaction 3, aborted, rewritten as
// told committed, is a lost-commit (its records are aborted in the log).
func TestProxyTxnToldJudged(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the kgo driver")
	}
	up := kfakeUpstream(t)
	bin := buildDriver(t, "kgo")
	trace := filepath.Join(t.TempDir(), "told.jsonl")
	script := `"$0" --bootstrap "$1" --topic told --partitions 2 --records 60 --value-bytes 20 --transactional --txn-records 10 --txn-abort-every 3 &&
		sed -i 's/{"tx":3,"commit":false,"res":"aborted"}/{"tx":3,"commit":true,"res":"committed"}/' "$KCHECK_OUTCOMES"`
	code, _, stderr := runKcheck(t, "proxy", "--upstream", up, "--broker-kind", "kfake", "--topic", "told", "--trace", trace, "--",
		"sh", "-c", script, bin, "{bootstrap}")
	if code != exitOK {
		t.Fatalf("proxy: exit %d\n%s", code, stderr)
	}
	code, stdout, _ := runKcheck(t, "verify", trace)
	t.Logf("%s", stdout)
	if code != exitMismatch || !strings.Contains(stdout, "lost-commit") || strings.Count(stdout, "lost-commit") != 1 {
		t.Fatalf("verify: exit %d\n%s", code, stdout)
	}
}

// The Java driver (kafka-clients 4.4.0) in transactions through kcheck proxy
// on Kafka 4.4.0: each transaction's end in its report becomes a TxnTold
// (the 7 commits among them), the client speaks TV2, and verify finds the
// trace valid. Records of a transaction aborted on purpose that the client
// never sent fail with TransactionAbortedException, so the driver may exit
// 1 (drivers/WORKLOADS.md).
func TestJavaDriverTransactionalOnKafka(t *testing.T) {
	if os.Getenv("KCHECK_KAFKA") != "1" {
		t.Skip("set KCHECK_KAFKA=1 to fetch and run a real Kafka (make kafka-test)")
	}
	out, err := exec.Command("bash", filepath.Join("..", "..", "drivers", "java", "build.sh"), "4.4.0").Output()
	if err != nil {
		t.Fatalf("drivers/java/build.sh 4.4.0: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	jar := lines[len(lines)-1]
	addr := startKafka(t, "4.4.0")
	trace := filepath.Join(t.TempDir(), "java.jsonl")
	code, stdout, stderr := runKcheck(t, "proxy", "--upstream", addr, "--broker-version", "4.4.0", "--topic", "txn-java-kafka", "--trace", trace, "--",
		"java", "-jar", jar, "--bootstrap", "{bootstrap}", "--topic", "txn-java-kafka", "--partitions", "4", "--records", "200", "--value-bytes", "50",
		"--transactional", "--txn-records", "20", "--txn-abort-every", "3")
	if code != exitOK && code != exitMismatch {
		t.Fatalf("proxy: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runKcheck(t, "verify", "--format", "json", trace)
	if code != exitOK || !strings.Contains(stdout, `"verdict": "valid"`) || !strings.Contains(stdout, `"txn_version": 2`) {
		t.Fatalf("verify: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), `"ev":"TxnTold","err":"","reason":"","res":"committed"`); n != 7 {
		t.Errorf("%d TxnTold committed, want 7", n)
	}
}
