// The process's CPU time (user + system, every thread) on Unix, for the
// cpu_seconds of the throughput mode's JSON.

//go:build unix

package loadgen

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
