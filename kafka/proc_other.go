//go:build !linux

package kafka

import "os/exec"

// ownProcessGroup does nothing on this system: nodes stay in kcheck's
// process group, and outlive it if it dies without stopping them.
func ownProcessGroup(*exec.Cmd) {}
