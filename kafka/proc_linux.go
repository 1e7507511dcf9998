package kafka

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// ownProcessGroup makes cmd the leader of a new process group, so that a
// signal to the terminal's foreground group (Ctrl-C) does not reach it and
// Cluster.Stop alone stops it; and has it sent SIGTERM if kcheck dies
// without stopping it (the signal is tied to the thread that started it,
// and the Go runtime keeps its threads while no goroutine locks one).
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// stopProcess stops p (SIGSTOP) until continueProcess, and returns once the
// kernel has stopped it (its state in /proc is T), at most a second later.
func stopProcess(p *os.Process) error {
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	stat := fmt.Sprintf("/proc/%d/stat", p.Pid)
	for wait := time.Millisecond; ; wait *= 2 {
		b, err := os.ReadFile(stat)
		if err != nil {
			return fmt.Errorf("reading %s: %w", stat, err)
		}
		// pid (comm) state ...: comm may hold spaces; the state follows
		// the last ")".
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && (b[i+2] == 'T' || b[i+2] == 't') {
			return nil
		}
		if wait > time.Second {
			return fmt.Errorf("process %d not stopped a second after SIGSTOP", p.Pid)
		}
		time.Sleep(wait) // the kernel's stop, which nothing signals
	}
}

// continueProcess continues p (SIGCONT); a process that was not stopped is
// unaffected.
func continueProcess(p *os.Process) error { return p.Signal(syscall.SIGCONT) }
