package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// scriptDriver is the command of a driver in another language, set up by
// its setup script (drivers/python/setup.sh, drivers/kafkajs/setup.sh,
// which print the interpreter to run it with, and are no-ops once the cache
// holds it); the test is skipped when the setup fails.
func scriptDriver(t *testing.T, setup, script string) []string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(root, setup)).Output()
	if err != nil {
		t.Skipf("%s: %v (it sets up the driver's client)", setup, err)
	}
	return []string{strings.TrimSpace(string(out)), filepath.Join(root, script)}
}

// scriptTxnDrivers are the drivers in Python and JavaScript with a
// transactional mode, and the transaction version each speaks.
var scriptTxnDrivers = []struct {
	name, setup, script string
	tv                  int      // the transaction version the client speaks (kfake 4.1, Kafka 4.4.0)
	extra               []string // flags over the workload's
}{
	{"librdkafka", "drivers/python/setup.sh", "drivers/python/driver.py", 1, nil},
	{"kafkajs", "drivers/kafkajs/setup.sh", "drivers/kafkajs/driver.js", 1, []string{"--compression", "gzip"}}, // kafkajs has no lz4
	{"aiokafka", "drivers/python/setup.sh", "drivers/python/aiokafka_driver.py", 1, nil},
	{"kafka-python", "drivers/python/setup.sh", "drivers/python/kafka_python_driver.py", 1, nil},
}

// TestScriptDriversTransactionalProxy is TestDriversTransactionalProxy for
// the drivers in Python and JavaScript: each runs --transactional through
// kcheck proxy on kfake (Kafka 4.1), 200 records in transactions of 20,
// every third aborted; verify judges the trace VALID, it holds one TxnTold
// per transaction agreeing with the wire (txnTrace), and the transaction
// version is the one the client speaks.
func TestScriptDriversTransactionalProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the drivers' clients")
	}
	up := kfakeUpstream(t)
	for _, tc := range scriptTxnDrivers {
		t.Run(tc.name, func(t *testing.T) {
			driver := scriptDriver(t, tc.setup, tc.script)
			tv := driverTxnThroughProxy(t, driver, up, []string{"--broker-kind", "kfake", "--broker-version", "4.1"}, "txn-"+tc.name, tc.extra...)
			if tv != tc.tv {
				t.Errorf("%s spoke TV%d on the wire, want TV%d", tc.name, tv, tc.tv)
			}
		})
	}
}

// TestScriptDriversTransactionalOnKafka is TestScriptDriversTransactionalProxy
// on real Kafka 4.4.0 (one node, started by kcheck kafka), a broker that
// speaks TV2 to a client that asks. It runs only with KCHECK_KAFKA=1 (make
// kafka-test).
func TestScriptDriversTransactionalOnKafka(t *testing.T) {
	if os.Getenv("KCHECK_KAFKA") != "1" {
		t.Skip("set KCHECK_KAFKA=1 to fetch and run a real Kafka (make kafka-test)")
	}
	addr := startKafka(t, "4.4.0")
	for _, tc := range scriptTxnDrivers {
		t.Run(tc.name, func(t *testing.T) {
			driver := scriptDriver(t, tc.setup, tc.script)
			tv := driverTxnThroughProxy(t, driver, addr, []string{"--broker-kind", "kafka", "--broker-version", "4.4.0"}, "txn-"+tc.name+"-kafka", tc.extra...)
			if tv != tc.tv {
				t.Errorf("%s spoke TV%d on the wire, want TV%d", tc.name, tv, tc.tv)
			}
		})
	}
}

// TestScriptDriversTransactionalCannotRun is TestDriversTransactionalCannotRun
// for the drivers in Python and JavaScript: on kfake emulating Kafka 4.1
// without EndTxn, each could not run, exit 2 with its client's words, and
// prints no JSON line.
func TestScriptDriversTransactionalCannotRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the drivers' clients")
	}
	vs := kversion.V4_1_0()
	vs.SetMaxKeyVersion(kmsg.EndTxn.Int16(), -1) // -1: the key removed
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.MaxVersions(vs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	for _, tc := range []struct{ name, setup, script, words string }{
		{"librdkafka", "drivers/python/setup.sh", "drivers/python/driver.py", "python driver: could not run transactions: transaction 1: commit: _UNSUPPORTED_FEATURE: EndTxnRequest (KIP-98) not supported by broker"},
		{"kafkajs", "drivers/kafkajs/setup.sh", "drivers/kafkajs/driver.js", "kafkajs driver: could not run transactions: transaction 1: commit: KafkaJSServerDoesNotSupportApiKey: The Kafka server does not support the requested API version"},
		{"aiokafka", "drivers/python/setup.sh", "drivers/python/aiokafka_driver.py", "aiokafka driver: could not run transactions: transaction 1: commit: KafkaError: KafkaError: Unexpected error during batch delivery (cause: IncompatibleBrokerVersion: IncompatibleBrokerVersion: EndTxnRequest cannot be used if the API version is unknown)\n"},
		{"kafka-python", "drivers/python/setup.sh", "drivers/python/kafka_python_driver.py", "kafka-python driver: could not run transactions: transaction 1: commit: UNSUPPORTED_VERSION: [Error 35] IncompatibleBrokerVersion: Kafka broker does not support the 'EndTxnRequest' Kafka protocol.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			driver := scriptDriver(t, tc.setup, tc.script)
			cmd := exec.Command(driver[0], append(driver[1:], "--bootstrap", c.ListenAddrs()[0], "--topic", "no-txn-"+tc.name,
				"--partitions", "2", "--records", "20", "--value-bytes", "10", "--transactional", "--txn-records", "5",
				"--delivery-timeout-ms", "5000", "--outcomes", filepath.Join(t.TempDir(), "outcomes.jsonl"))...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			t.Logf("%s", stderr.String())
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.HasPrefix(stderr.String(), tc.words) || stdout.Len() > 0 {
				t.Errorf("%v\nstdout %q\nstderr %q\nwant exit 2 and %q", err, stdout.String(), stderr.String(), tc.words)
			}
		})
	}
}
