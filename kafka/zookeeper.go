package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// zooKeeperProperties is the configuration of the ZooKeeper server of a
// release on ZooKeeper: standalone, on 127.0.0.1, its data in its
// directory, without the admin server (its own HTTP port, 8080 by default).
// Of the four-letter commands, Start asks srvr (is it serving?) and
// StartNode dump (which brokers are registered?).
const zooKeeperProperties = `# Written by kcheck (package kafka): the ZooKeeper server of Kafka %s.
dataDir=%s
clientPort=%s
clientPortAddress=%s
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=srvr,dump
`

// startZooKeeper starts the cluster's ZooKeeper server with Kafka's
// classpath, as Kafka's zookeeper-server-start.sh does, and waits until it
// answers srvr.
func (c *Cluster) startZooKeeper(ctx context.Context, java, classpath, logOpt string) error {
	zk := c.zk
	_, port, _ := net.SplitHostPort(zk.Addr)
	conf := filepath.Join(zk.Dir, "zookeeper.properties")
	text := fmt.Sprintf(zooKeeperProperties, c.version, zk.data(), port, host)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	args := []string{"-Xmx256m", "-Djava.awt.headless=true", logOpt,
		"-cp", classpath, "org.apache.zookeeper.server.quorum.QuorumPeerMain", conf}
	if err := c.startProcess(zk, "ZooKeeper", java, args); err != nil {
		return err
	}
	for backoff := 20 * time.Millisecond; ; backoff = min(2*backoff, 500*time.Millisecond) {
		err := srvr(ctx, zk.Addr)
		if err == nil {
			return nil
		}
		t := time.NewTimer(backoff)
		select {
		case <-zk.exited:
			t.Stop()
			return fmt.Errorf("kafka: ZooKeeper (for Kafka %s) did not start: it exited (%v); the end of %s:\n%s",
				c.version, zk.err, zk.Log(), indent(Tail(zk.Log())))
		case <-ctx.Done():
			t.Stop()
			if errors.Is(context.Cause(ctx), errStartTimeout) {
				return fmt.Errorf("kafka: ZooKeeper (for Kafka %s) did not start: no answer at %s: %v; the end of %s:\n%s",
					c.version, zk.Addr, err, zk.Log(), indent(Tail(zk.Log())))
			}
			return fmt.Errorf("kafka: start interrupted: %w", context.Cause(ctx))
		case <-t.C:
		}
	}
}

// srvr asks the ZooKeeper server at addr for its status (the four-letter
// command srvr): nil if it serves.
func srvr(ctx context.Context, addr string) error {
	out, err := fourLetter(ctx, addr, "srvr")
	if err != nil {
		return err
	}
	// A server that is up but not serving says "This ZooKeeper instance is
	// not currently serving requests".
	if first, _, _ := strings.Cut(out, "\n"); !strings.HasPrefix(first, "Zookeeper version") {
		return fmt.Errorf("srvr: %q", strings.TrimSpace(first))
	}
	return nil
}

// fourLetter sends ZooKeeper's four-letter command cmd to addr and returns
// the answer, which ends when the server closes the connection.
func fourLetter(ctx context.Context, addr, cmd string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(conn, 1<<20))
	if err != nil && len(b) == 0 {
		return "", fmt.Errorf("%s: %w", cmd, err)
	}
	if len(b) == 0 {
		return "", fmt.Errorf("%s: %w", cmd, io.EOF)
	}
	return string(b), nil
}

// waitUnregistered waits until broker id's registration in ZooKeeper, the
// ephemeral znode /brokers/ids/<id>, is gone. A killed broker's lives until
// its session times out (zookeeper.session.timeout.ms), and a broker that
// starts before then finds it taken and exits.
func (c *Cluster) waitUnregistered(ctx context.Context, id int) error {
	znode := fmt.Sprintf("/brokers/ids/%d\n", id)
	for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, 500*time.Millisecond) {
		out, err := fourLetter(ctx, c.zk.Addr, "dump")
		if err == nil && !strings.Contains(out, znode) {
			return nil
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			if err == nil {
				err = fmt.Errorf("%s is still registered", strings.TrimSpace(znode))
			}
			return fmt.Errorf("kafka: node %d cannot start again yet: ZooKeeper at %s: %v", id, c.zk.Addr, err)
		case <-t.C:
		}
	}
}

// stopZooKeeper stops the ZooKeeper server, if any: SIGTERM, then SIGKILL
// after the stop timeout.
func (c *Cluster) stopZooKeeper() error {
	zk := c.zk
	if zk == nil || zk.cmd == nil {
		return nil
	}
	if err := zk.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		zk.cmd.Process.Kill()
	}
	select {
	case <-zk.exited:
		return nil
	case <-time.After(c.grace):
		zk.cmd.Process.Kill()
		<-zk.exited
		return fmt.Errorf("kafka: ZooKeeper killed: still running %v after SIGTERM", c.grace)
	}
}

// ZooKeeper returns the cluster's ZooKeeper server (ID 0; Addr its client
// port), and whether it has one: a release on ZooKeeper (2.8) does.
func (c *Cluster) ZooKeeper() (Node, bool) {
	if c.zk == nil {
		return Node{}, false
	}
	return c.zk.Node, true
}
