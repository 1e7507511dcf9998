//go:build linux

package kafka

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// zooKeeperOrBroker is a fake java's script: zk runs for ZooKeeper, broker
// for anything else.
func zooKeeperOrBroker(zk, broker string) string {
	return `case "$*" in
*QuorumPeerMain*) ` + zk + ` ;;
*) ` + broker + ` ;;
esac`
}

func TestStartZooKeeperExits(t *testing.T) {
	marks := t.TempDir()
	java := fakeJava(t, zooKeeperOrBroker(
		`echo "ERROR Invalid config, exiting abnormally (org.apache.zookeeper.server.quorum.QuorumPeerMain)"; exit 2`,
		`touch "`+marks+`/broker"; exit 1`))
	dir := t.TempDir()
	_, err := Start(context.Background(), Config{Version: "2.8.2", Java: java, Classpath: "unused", Dir: dir, Nodes: 3})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"ZooKeeper (for Kafka 2.8.2) did not start: it exited (exit status 2)", "zookeeper.log", "Invalid config, exiting abnormally"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if _, err := os.Stat(filepath.Join(marks, "broker")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a broker was started without its ZooKeeper")
	}
	if _, err := os.Stat(filepath.Join(dir, zooKeeperDirName, "data")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ZooKeeper's data left behind: %v", err)
	}
}

func TestStartZooKeeperTimeout(t *testing.T) {
	pidDir := t.TempDir()
	// A ZooKeeper that never answers: it records its pid and sleeps.
	java := fakeJava(t, zooKeeperOrBroker(`echo $$ > "`+pidDir+`/zk"; exec sleep 300`, `exit 1`))
	_, err := Start(context.Background(), Config{Version: "2.8.2", Java: java, Classpath: "unused",
		StartTimeout: time.Second, StopTimeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "ZooKeeper (for Kafka 2.8.2) did not start: no answer at 127.0.0.1:") {
		t.Fatalf("Start: %v, want ZooKeeper's timeout", err)
	}
	b, err := os.ReadFile(filepath.Join(pidDir, "zk"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("fake ZooKeeper %d still there: %v", pid, err)
	}
}

// TestStartLog4j1 checks that a release before 4.0 gets a log4j 1
// configuration, named to the storage tool and the broker alike.
func TestStartLog4j1(t *testing.T) {
	args := t.TempDir()
	java := fakeJava(t, `echo "$*" > "`+args+`/broker"; exit 1`)
	dir := t.TempDir()
	_, err := Start(context.Background(), Config{Version: "3.5.2", Java: java, Classpath: "unused", Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "exited during start") {
		t.Fatalf("Start: %v", err)
	}
	conf := filepath.Join(dir, "log4j.properties")
	text, err := os.ReadFile(conf)
	if err != nil || !strings.Contains(string(text), "log4j.appender.out=org.apache.log4j.ConsoleAppender") {
		t.Errorf("%s: %v\n%s", conf, err, text)
	}
	b, _ := os.ReadFile(filepath.Join(args, "broker"))
	if !strings.Contains(string(b), "-Dlog4j.configuration=file:"+conf) || strings.Contains(string(b), "log4j2") {
		t.Errorf("broker's arguments: %s; want -Dlog4j.configuration=file:%s", b, conf)
	}
}

func TestSrvr(t *testing.T) {
	for answer, want := range map[string]string{
		"Zookeeper version: 3.5.9-83df9301aa5c2a5d284a9940177808c01bc35cef, built on 01/06/2021 20:03 GMT\nMode: standalone\n": "",
		"This ZooKeeper instance is not currently serving requests\n":                                                          "not currently serving",
		"": "srvr: EOF",
	} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			cmd := make([]byte, 4)
			io.ReadFull(bufio.NewReader(c), cmd)
			if string(cmd) == "srvr" {
				io.WriteString(c, answer)
			}
		}()
		err = srvr(context.Background(), l.Addr().String())
		l.Close()
		switch {
		case want == "" && err != nil:
			t.Errorf("answer %q: %v", answer, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("answer %q: %v, want %q", answer, err, want)
		}
	}
}

// fakeZooKeeper answers dump with the ephemeral znodes of one session,
// first with /brokers/ids/3 for `registered` answers, then without it.
func fakeZooKeeper(t *testing.T, registered int) (addr string, dumps func() int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	n := make(chan int, 1)
	n <- 0
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			cmd := make([]byte, 4)
			io.ReadFull(c, cmd)
			i := <-n
			n <- i + 1
			out := "SessionTracker dump:\nephemeral nodes dump:\nSessions with Ephemerals (1):\n0x100000a0b5e0000:\n\t/controller\n\t/brokers/ids/30\n"
			if i < registered {
				out += "\t/brokers/ids/3\n"
			}
			io.WriteString(c, out)
			c.Close()
		}
	}()
	return l.Addr().String(), func() int { i := <-n; n <- i; return i }
}

func TestWaitUnregistered(t *testing.T) {
	addr, dumps := fakeZooKeeper(t, 2)
	c := &Cluster{zk: &node{Node: Node{Addr: addr}}}
	if err := c.waitUnregistered(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	if got := dumps(); got != 3 {
		t.Errorf("%d dumps, want 3: two with /brokers/ids/3, one without", got)
	}

	addr, _ = fakeZooKeeper(t, 1000)
	c = &Cluster{zk: &node{Node: Node{Addr: addr}}}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := c.waitUnregistered(ctx, 3)
	if err == nil || !strings.Contains(err.Error(), "node 3 cannot start again yet") || !strings.Contains(err.Error(), "/brokers/ids/3 is still registered") {
		t.Errorf("waitUnregistered: %v, want node 3 still registered", err)
	}
}
