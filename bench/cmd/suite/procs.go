// Child processes for the suite: running a command with a timeout and its
// peak RSS, the real Kafka broker (kcheck kafka) started and stopped, and
// topics created fresh and deleted after each measurement.

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kcheck/kcheck/topics"
	"github.com/kcheck/kcheck/workload"
)

// proc is what a finished child did.
type proc struct {
	stdout, stderr string
	exit           int // -1: did not start or was killed
	wall           time.Duration
	maxRSSKiB      int64
	err            error // set when exit is not 0 or 1
}

// run runs argv in dir with extra environment, at most timeout; exit codes 0
// and 1 are results (0 all as expected, 1 something found), anything else
// is an error.
func run(ctx context.Context, timeout time.Duration, dir string, env []string, argv ...string) *proc {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	t0 := time.Now()
	err := cmd.Run()
	p := &proc{stdout: out.String(), stderr: errb.String(), wall: time.Since(t0), exit: -1}
	if cmd.ProcessState != nil {
		p.exit = cmd.ProcessState.ExitCode()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			p.maxRSSKiB = ru.Maxrss
		}
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		p.err = fmt.Errorf("%s: stopped after %v", argv[0], timeout)
	case ctx.Err() != nil:
		p.err = fmt.Errorf("%s: interrupted", argv[0])
	case p.exit == 0 || p.exit == 1:
	case err != nil:
		p.err = fmt.Errorf("%s: %v: %s", argv[0], err, lastLines(p.stderr, 5))
	}
	return p
}

// lastLines is the last n lines of s, on one line.
func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, " | ")
}

// lastJSON is the last line of s that looks like a JSON object.
func lastJSON(s string) []byte {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(ls) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(ls[i]); strings.HasPrefix(l, "{") || strings.HasPrefix(l, "[") {
			return []byte(l)
		}
	}
	return nil
}

// broker is a real Kafka started by kcheck kafka, with a second listener
// (DELAYED) that it advertises at a delayProxy's address.
type broker struct {
	cmd     *exec.Cmd
	addr    string
	delayed string      // bootstrap through the delay proxy
	dp      *delayProxy // nil until started
	admin   *kgo.Client
	log     string
	logf    *os.File
	dir     string
	done    bool // stopped
}

// startBroker starts kcheck kafka --version v and waits for its address.
// The node has a second listener, DELAYED, advertised at a delay proxy that
// holds what clients send for delay. With cpus (a taskset CPU list) the node
// runs on those CPUs only.
func startBroker(ctx context.Context, kcheck, version string, delay time.Duration, cpus string) (*broker, error) {
	// Three free ports (client, controller, delayed listener) and the delay
	// proxy's, all held open at once so that none is handed out twice.
	var held []net.Listener
	var ports []int
	for range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			for _, l := range held {
				l.Close()
			}
			return nil, err
		}
		held = append(held, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	dln, err := net.Listen("tcp", "127.0.0.1:0")
	for _, l := range held {
		l.Close()
	}
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kcheck-bench-kafka-")
	if err != nil {
		dln.Close()
		return nil, err
	}
	b := &broker{dir: dir, log: dir + "/kcheck-kafka.log", delayed: dln.Addr().String()}
	b.dp = newDelayProxy(dln, fmt.Sprintf("127.0.0.1:%d", ports[2]), delay)
	logf, err := os.Create(b.log)
	if err != nil {
		b.dp.close()
		os.RemoveAll(dir)
		return nil, err
	}
	b.logf = logf
	// Not tied to ctx: stop sends SIGTERM so that it stops its node and
	// removes its data.
	argv := taskset(cpus, []string{kcheck, "kafka", "--version", version, "--dir", dir + "/kafka", "--heap", "1g",
		"--port", strconv.Itoa(ports[0]), "--controller-port", strconv.Itoa(ports[1]),
		"--set", fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d,DELAYED://127.0.0.1:%d", ports[0], ports[1], ports[2]),
		"--set", fmt.Sprintf("advertised.listeners=PLAINTEXT://127.0.0.1:%d,DELAYED://%s", ports[0], b.delayed),
		"--set", "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,DELAYED:PLAINTEXT",
		// A node starved of CPU by other work misses heartbeats; with
		// Kafka's 9 s its controller fences it and it creates no topics.
		"--set", "broker.session.timeout.ms=60000",
		// Delete a deleted topic's files at once, between measurements,
		// rather than a minute later under another client's measurement.
		"--set", "file.delete.delay.ms=0"})
	b.cmd = exec.Command(argv[0], argv[1:]...)
	pr, pw, err := os.Pipe()
	if err != nil {
		logf.Close()
		b.dp.close()
		os.RemoveAll(dir)
		return nil, err
	}
	b.cmd.Stdout, b.cmd.Stderr = pw, logf
	if err := b.cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		logf.Close()
		b.dp.close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting %s kafka: %w", kcheck, err)
	}
	pw.Close()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if a, ok := strings.CutPrefix(sc.Text(), "bootstrap: "); ok && !sent {
				addr <- strings.TrimSpace(a)
				sent = true
			}
		}
		close(addr)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			b.cmd.Wait()
			msg, _ := os.ReadFile(b.log)
			logf.Close()
			b.dp.close()
			os.RemoveAll(dir)
			return nil, fmt.Errorf("Kafka %s did not start: %s", version, lastLines(string(msg), 5))
		}
		b.addr = a
	case <-time.After(3 * time.Minute):
		b.stop()
		return nil, fmt.Errorf("Kafka %s did not print its address in 3 minutes", version)
	case <-ctx.Done():
		b.stop()
		return nil, ctx.Err()
	}
	b.admin, err = kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.ClientID("kcheck-bench-admin"), kgo.DisableClientMetrics())
	if err != nil {
		b.stop()
		return nil, err
	}
	return b, nil
}

// stop sends SIGTERM (kcheck kafka then stops its node and removes its
// data) and waits; SIGKILL after two minutes.
func (b *broker) stop() {
	if b.done {
		return
	}
	b.done = true
	if b.admin != nil {
		b.admin.Close()
	}
	if b.dp != nil {
		b.dp.close()
	}
	defer b.logf.Close()
	if b.cmd.Process != nil {
		b.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { b.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			b.cmd.Process.Kill()
			<-done
		}
	}
	os.RemoveAll(b.dir)
}

// topicSpec is a topic to create and its partitions.
type topicSpec struct {
	name  string
	parts int
}

// maxRestarts bounds the broker restarts of one run.
const maxRestarts = 3

// topics creates fresh topics on the broker. A broker starved of CPU by
// other work can be fenced by its controller for a while, and then every
// CreateTopics fails: each topic is retried for up to 90 s, and if that is
// not enough, the broker is restarted (at most maxRestarts times a run) and
// the topics tried again.
func (s *suite) topics(ctx context.Context, ts ...topicSpec) error {
	try := func() error {
		deadline := time.Now().Add(90 * time.Second)
		for _, t := range ts {
			for {
				err := s.b.createTopic(ctx, t.name, t.parts)
				if err == nil || strings.Contains(err.Error(), "already exists") { // an earlier try that timed out
					break
				}
				if ctx.Err() != nil || time.Now().After(deadline) {
					return err
				}
				select {
				case <-ctx.Done():
				case <-time.After(2 * time.Second):
				}
			}
		}
		return nil
	}
	err := try()
	if err == nil || ctx.Err() != nil || len(s.res.Restarts) >= maxRestarts {
		return err
	}
	why := fmt.Sprintf("%s: it created no topic for 90 s (%v)", time.Now().Format("15:04:05"), err)
	s.logf("restarting Kafka: %s", why)
	s.res.Restarts = append(s.res.Restarts, why)
	s.b.stop()
	b, rerr := startBroker(ctx, s.path.Kcheck, s.path.KafkaVersion, time.Duration(s.p.DelayMs)*time.Millisecond, s.res.brokerCPUs())
	if rerr != nil {
		return fmt.Errorf("%w; restarting Kafka: %v", err, rerr)
	}
	s.b = b
	return try()
}

// createTopic creates a fresh topic with n partitions and waits for its leaders.
func (b *broker) createTopic(ctx context.Context, topic string, n int) error {
	return workload.CreateTopic(ctx, []string{b.addr}, topic, int32(n), 30*time.Second)
}

// deleteTopics deletes topics, so that the broker's log does not grow over
// the run.
func (b *broker) deleteTopics(ctx context.Context, names ...string) error {
	dctx, cancel := context.WithTimeout(ctx, 40*time.Second)
	defer cancel()
	return topics.Delete(dctx, b.admin, names...)
}
