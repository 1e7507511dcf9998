//go:build linux

package kafka

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestServerProperties(t *testing.T) {
	nodes := []*node{
		{Node: Node{ID: 1, Addr: "127.0.0.1:9001", ControllerAddr: "127.0.0.1:9101", Dir: "/d/node-1"}},
		{Node: Node{ID: 2, Addr: "127.0.0.1:9002", ControllerAddr: "127.0.0.1:9102", Dir: "/d/node-2"}},
		{Node: Node{ID: 3, Addr: "127.0.0.1:9003", ControllerAddr: "127.0.0.1:9103", Dir: "/d/node-3"}},
	}
	cfg := Config{ProducerIDExpiration: 2 * time.Second, ProducerIDExpirationCheck: 500 * time.Millisecond,
		Properties: map[string]string{"num.io.threads": "8", "min.insync.replicas": "2"}}
	got := props(serverProperties(cfg, mustRelease(t, "4.1.0"), nodes, nodes[1], nil))
	for k, want := range map[string]string{
		"process.roles":                            "broker,controller",
		"node.id":                                  "2",
		"controller.quorum.voters":                 "1@127.0.0.1:9101,2@127.0.0.1:9102,3@127.0.0.1:9103",
		"listeners":                                "PLAINTEXT://127.0.0.1:9002,CONTROLLER://127.0.0.1:9102",
		"advertised.listeners":                     "PLAINTEXT://127.0.0.1:9002",
		"log.dirs":                                 "/d/node-2/data",
		"offsets.topic.replication.factor":         "3",
		"default.replication.factor":               "3",
		"transaction.state.log.min.isr":            "2",
		"auto.create.topics.enable":                "false",
		"group.initial.rebalance.delay.ms":         "0",
		"producer.id.expiration.ms":                "2000",
		"producer.id.expiration.check.interval.ms": "500",
		"num.io.threads":                           "8", // overridden
		"min.insync.replicas":                      "2", // added
		"log.index.interval.bytes":                 "2147483647",
	} {
		if got[k] != want {
			t.Errorf("%s=%q, want %q", k, got[k], want)
		}
	}

	one := props(serverProperties(Config{}, mustRelease(t, "4.1.0"), nodes[:1], nodes[0], nil))
	for k, want := range map[string]string{
		"controller.quorum.voters":         "1@127.0.0.1:9101",
		"offsets.topic.replication.factor": "1",
		"transaction.state.log.min.isr":    "1",
	} {
		if one[k] != want {
			t.Errorf("one node: %s=%q, want %q", k, one[k], want)
		}
	}
	if _, ok := one["producer.id.expiration.ms"]; ok {
		t.Error("producer.id.expiration.ms set without Config.ProducerIDExpiration")
	}
}

// TestServerPropertiesOlder checks what differs before 4.0: before 3.4
// producer ids expire with transactional.id.expiration.ms, and 2.8 has
// brokers on ZooKeeper, with no KRaft setting.
func TestServerPropertiesOlder(t *testing.T) {
	nodes := []*node{
		{Node: Node{ID: 1, Addr: "127.0.0.1:9001", ControllerAddr: "127.0.0.1:9101", Dir: "/d/node-1"}},
		{Node: Node{ID: 2, Addr: "127.0.0.1:9002", ControllerAddr: "127.0.0.1:9102", Dir: "/d/node-2"}},
	}
	cfg := Config{ProducerIDExpiration: 2 * time.Second}
	for _, tc := range []struct {
		version string
		want    map[string]string
		absent  []string
	}{
		{"3.5.2", map[string]string{"producer.id.expiration.ms": "2000", "process.roles": "broker,controller"},
			[]string{"transactional.id.expiration.ms", "zookeeper.connect"}},
		{"3.3.2", map[string]string{"transactional.id.expiration.ms": "2000", "node.id": "2"},
			[]string{"producer.id.expiration.ms"}},
	} {
		got := props(serverProperties(cfg, mustRelease(t, tc.version), nodes, nodes[1], nil))
		for k, want := range tc.want {
			if got[k] != want {
				t.Errorf("%s: %s=%q, want %q", tc.version, k, got[k], want)
			}
		}
		for _, k := range tc.absent {
			if v, ok := got[k]; ok {
				t.Errorf("%s: %s=%q set", tc.version, k, v)
			}
		}
	}

	zkNodes := []*node{
		{Node: Node{ID: 1, Addr: "127.0.0.1:9001", Dir: "/d/node-1"}},
		{Node: Node{ID: 2, Addr: "127.0.0.1:9002", Dir: "/d/node-2"}},
	}
	zk := &node{Node: Node{Addr: "127.0.0.1:2181", Dir: "/d/zookeeper"}}
	got := props(serverProperties(cfg, mustRelease(t, "2.8.2"), zkNodes, zkNodes[1], zk))
	for k, want := range map[string]string{
		"broker.id":                        "2",
		"zookeeper.connect":                "127.0.0.1:2181",
		"listeners":                        "PLAINTEXT://127.0.0.1:9002",
		"advertised.listeners":             "PLAINTEXT://127.0.0.1:9002",
		"log.dirs":                         "/d/node-2/data",
		"offsets.topic.replication.factor": "2",
		"transactional.id.expiration.ms":   "2000",
	} {
		if got[k] != want {
			t.Errorf("2.8.2: %s=%q, want %q", k, got[k], want)
		}
	}
	for _, k := range []string{"process.roles", "node.id", "controller.quorum.voters", "controller.listener.names", "producer.id.expiration.ms"} {
		if v, ok := got[k]; ok {
			t.Errorf("2.8.2: %s=%q set on ZooKeeper", k, v)
		}
	}
}

// props parses server.properties text, failing on a key set twice.
func props(text string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, v, _ := strings.Cut(l, "=")
		if _, dup := m[k]; dup {
			m[k] = "DUPLICATE"
			continue
		}
		m[k] = v
	}
	return m
}

func TestStartBadConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Version: "3.2.3"}, "kcheck runs Kafka 2.8.x (on ZooKeeper), 3.3.0 to 3.9.x"},
		{Config{Version: "2.7.2"}, "kcheck runs Kafka 2.8.x"},
		{Config{Version: "2.8.2", ControllerPorts: []int{9093}}, "Kafka 2.8.2 runs on ZooKeeper: its brokers have no controller port"},
		{Config{Version: "3.9.1", ZooKeeperPort: 2181}, "Kafka 3.9.1 runs in KRaft mode, without ZooKeeper"},
		{Config{Version: "3.3.2", ProducerIDExpirationCheck: time.Second}, "Kafka 3.3.2 has no producer.id.expiration.check.interval.ms"},
		{Config{Version: "2.8.2", ZooKeeperPort: 9092, Ports: []int{9092}}, "port 9092 is both the ZooKeeper port and the client port of node 1"},
		{Config{Version: "4.1.0", Nodes: 12}, "12 nodes"},
		{Config{Version: "4.1.0", Heap: "lots"}, `heap "lots"`},
		{Config{Version: "4.1.0", Nodes: 3, Ports: []int{9092, 9092}}, "port 9092 is both the client port of node 1 and the client port of node 2"},
		{Config{Version: "4.1.0", Ports: []int{9092}, ControllerPorts: []int{9092}}, "port 9092 is both"},
		{Config{Version: "4.1.0", Ports: []int{1, 2}}, "2 client ports for 1 nodes"},
		{Config{Version: "4.1.0", Ports: []int{70000}}, "70000 is not a port"},
		{Config{Version: "4.1.0", Properties: map[string]string{"a b": "c"}}, `property "a b"`},
		{Config{Version: "4.1.0", Java: "/nonexistent/java"}, "java not found"},
	} {
		c, err := Start(context.Background(), tc.cfg)
		if err == nil {
			c.Stop()
			t.Errorf("%+v: no error", tc.cfg)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	_, err := Start(context.Background(), Config{Version: "4.1.0", Java: "/nonexistent/java"})
	if !errors.Is(err, ErrNoJava) {
		t.Errorf("no java: %v, want ErrNoJava", err)
	}
}

func TestStartPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	// The port is checked before java runs: a fake java and classpath do.
	java := fakeJava(t, "exit 1")
	for _, cfg := range []Config{
		{Ports: []int{0, port}, Nodes: 3},
		{ControllerPorts: []int{port}},
	} {
		cfg.Version, cfg.Java, cfg.Classpath, cfg.Dir = "4.1.0", java, "unused", dir
		_, err = Start(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), "127.0.0.1:"+strconv.Itoa(port)+", is taken") {
			t.Errorf("%+v: %v, want the port named as taken", cfg, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "node-1", "data")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("data left behind: %v", err)
		}
	}
}

// fakeJava writes a fake java that formats storage at once and runs
// brokerScript as the broker.
func fakeJava(t *testing.T, brokerScript string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "java")
	script := `#!/bin/sh
for a in "$@"; do
  case "$a" in
  kafka.tools.StorageTool) echo "Formatting (fake)"; exit 0 ;;
  esac
done
` + brokerScript + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestStartBrokerExits(t *testing.T) {
	java := fakeJava(t, `echo "[2026-01-01 00:00:00,000] ERROR Exiting Kafka due to fatal exception (kafka.Kafka$)"
echo "org.apache.kafka.common.config.ConfigException: Invalid value nope for configuration num.io.threads"
exit 1`)
	dir := t.TempDir()
	_, err := Start(context.Background(), Config{Version: "4.1.0", Java: java, Classpath: "unused", Dir: dir, Nodes: 3})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"exited during start", "exit status 1", "node.log", "Invalid value nope for configuration num.io.threads"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	for id := 1; id <= 3; id++ {
		if _, err := os.Stat(filepath.Join(dir, "node-"+strconv.Itoa(id), "data")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("node %d: data left behind: %v", id, err)
		}
	}
}

func TestStartTimeoutLeavesNothingRunning(t *testing.T) {
	pidDir := t.TempDir()
	// A broker that never answers: it records its pid and sleeps.
	java := fakeJava(t, `echo $$ > "`+pidDir+`/pid.$$"; exec sleep 300`)
	start := time.Now()
	_, err := Start(context.Background(), Config{Version: "4.1.0", Java: java, Classpath: "unused", Nodes: 3,
		StartTimeout: time.Second, StopTimeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "did not answer within 1s") {
		t.Fatalf("Start: %v, want a timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Start took %v to give up", d)
	}
	pids, _ := filepath.Glob(filepath.Join(pidDir, "pid.*"))
	if len(pids) != 3 {
		t.Fatalf("%d fake brokers ran, want 3", len(pids))
	}
	for _, p := range pids {
		pid, _ := strconv.Atoi(strings.TrimPrefix(filepath.Ext(p), "."))
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("fake broker %d still there: %v", pid, err)
		}
	}
}

func TestStartCanceled(t *testing.T) {
	java := fakeJava(t, `exec sleep 300`)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := Start(ctx, Config{Version: "4.1.0", Java: java, Classpath: "unused"})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "start interrupted") {
		t.Fatalf("Start: %v, want it interrupted by the caller's deadline", err)
	}
}

func TestTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	var lines []string
	for i := range 50 {
		lines = append(lines, "line "+strconv.Itoa(i))
	}
	os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	got := Tail(path)
	if len(got) != tailLines || got[len(got)-1] != "line 49" {
		t.Errorf("tail: %q", got)
	}
	if got := Tail(filepath.Join(t.TempDir(), "none")); len(got) != 1 || !strings.Contains(got[0], "no such file") {
		t.Errorf("tail of a missing file: %q", got)
	}
}

func TestStopKillsAfterGrace(t *testing.T) {
	pidDir := t.TempDir()
	// A broker that never answers and ignores SIGTERM.
	java := fakeJava(t, `trap '' TERM; echo $$ > "`+pidDir+`/pid"; exec sleep 300`)
	start := time.Now()
	_, err := Start(context.Background(), Config{Version: "4.1.0", Java: java, Classpath: "unused",
		StartTimeout: 500 * time.Millisecond, StopTimeout: 300 * time.Millisecond})
	if err == nil {
		t.Fatal("Start: no error")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Start took %v to give up and kill", d)
	}
	b, err := os.ReadFile(filepath.Join(pidDir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("fake broker %d still there: %v", pid, err)
	}
}
