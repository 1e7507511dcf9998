package brokers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kcheck/kcheck/kafka"
)

// TansuVersion is the tansu release kcheck builds, and TansuFeatures the
// cargo features: dynostore gives the memory:// storage engine, the one
// that needs no server of its own (the default build has none that runs
// without PostgreSQL or S3).
const (
	TansuVersion  = "0.6.0"
	TansuFeatures = "dynostore"
)

// TansuDir is where the tansu build lives in the cache: its bin/tansu.
func TansuDir(cache string) string {
	return filepath.Join(cache, "tansu-"+TansuVersion+"-"+TansuFeatures)
}

// BuildTansu builds tansu into the cache with cargo (pinned version and
// Cargo.lock), once: it returns the binary, and whether it built it now.
// The build's output goes to log. A failed build leaves nothing in the cache.
func BuildTansu(ctx context.Context, cache string, log io.Writer) (bin string, built bool, err error) {
	dir := TansuDir(cache)
	bin = filepath.Join(dir, "bin", "tansu")
	if _, err := os.Stat(bin); err == nil {
		return bin, false, nil
	}
	cargo, err := exec.LookPath("cargo")
	if err != nil {
		return "", false, errors.New("tansu: cargo is not on PATH: install Rust (rustup), then run again; the build takes about 15 minutes on 2 cores")
	}
	tmp := dir + ".partial"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
		return "", false, fmt.Errorf("tansu: %w", err)
	}
	args := []string{"install", "tansu", "--version", TansuVersion, "--locked", "--features", TansuFeatures, "--root", tmp}
	var out strings.Builder
	cmd := exec.CommandContext(ctx, cargo, args...)
	cmd.Stdout, cmd.Stderr = io.MultiWriter(log, &out), io.MultiWriter(log, &out)
	if err := cmd.Run(); err != nil {
		os.RemoveAll(tmp)
		return "", false, fmt.Errorf("tansu: cargo %s failed (%v); its last lines:\n%s", strings.Join(args, " "), err, lastLines(out.String(), 15))
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", false, fmt.Errorf("tansu: %w", err)
	}
	return bin, true, nil
}

// StartTansu starts the tansu binary bin as one broker on 127.0.0.1:port (0:
// a free one) with in-memory storage, its output in dir/tansu.log, and
// waits until it answers Metadata and InitProducerId (kafka.Probe), at most
// timeout. A broker that exits or does not answer is an error with its
// log's end.
func StartTansu(ctx context.Context, bin, dir string, port int, timeout time.Duration) (*Running, error) {
	if port == 0 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("tansu: choosing a port: %w", err)
		}
		port = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("tansu: %w", err)
	}
	logPath := filepath.Join(dir, "tansu.log")
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("tansu: %w", err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	url := "tcp://" + addr
	cmd := exec.Command(bin, "broker", "--listener-url", url, "--advertised-listener-url", url,
		"--storage-engine", "memory://tansu/")
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("tansu: starting %s: %w", bin, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); lf.Close(); close(exited) }()
	stop := func() error {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			cmd.Process.Kill()
		}
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		return nil
	}
	r := &Running{Spec: Spec{Tansu, TansuVersion}, Addrs: []string{addr}, Log: logPath, Exited: exited, stop: stop}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for backoff := 20 * time.Millisecond; ; backoff = min(2*backoff, 500*time.Millisecond) {
		perr := kafka.Probe(wctx, addr, 1)
		if perr == nil {
			return r, nil
		}
		t := time.NewTimer(backoff)
		select {
		case <-exited:
			t.Stop()
			return nil, fmt.Errorf("tansu exited during start (%v); the end of %s:\n%s", waitErr, logPath, indent(kafka.Tail(logPath)))
		case <-wctx.Done():
			t.Stop()
			stop()
			return nil, fmt.Errorf("tansu at %s did not answer within %v: %v; the end of %s:\n%s", addr, timeout, perr, logPath, indent(kafka.Tail(logPath)))
		case <-t.C:
		}
	}
}

func indent(lines []string) string { return "    " + strings.Join(lines, "\n    ") }

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return indent(lines[max(0, len(lines)-n):])
}
