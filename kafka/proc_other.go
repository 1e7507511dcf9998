//go:build !linux

package kafka

import (
	"errors"
	"os"
	"os/exec"
)

// ownProcessGroup does nothing on this system: nodes stay in kcheck's
// process group, and outlive it if it dies without stopping them.
func ownProcessGroup(*exec.Cmd) {}

var errNoPause = errors.New("pausing a process needs Linux here")

func stopProcess(*os.Process) error     { return errNoPause }
func continueProcess(*os.Process) error { return nil }
