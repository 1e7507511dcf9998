package kafka

import (
	"os"
	"os/exec"
	"syscall"
)

// ownProcessGroup makes cmd the leader of a new process group, so that a
// signal to the terminal's foreground group (Ctrl-C) does not reach it and
// Cluster.Stop alone stops it; and has it sent SIGTERM if kcheck dies
// without stopping it (the signal is tied to the thread that started it,
// and the Go runtime keeps its threads while no goroutine locks one).
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// stopProcess stops p (SIGSTOP) until continueProcess.
func stopProcess(p *os.Process) error { return p.Signal(syscall.SIGSTOP) }

// continueProcess continues p (SIGCONT); a process that was not stopped is
// unaffected.
func continueProcess(p *os.Process) error { return p.Signal(syscall.SIGCONT) }
