//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package main

// involuntarySwitches is -1: this platform does not tell.
func involuntarySwitches() int64 { return -1 }
