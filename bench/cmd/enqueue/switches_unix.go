//go:build linux || darwin || freebsd || netbsd || openbsd

package main

import "syscall"

// involuntarySwitches returns how many times the OS has taken a core from
// one of the process's threads so far (getrusage's ru_nivcsw), or -1 where
// it cannot tell.
func involuntarySwitches() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return int64(ru.Nivcsw)
}
