package main

import (
	"fmt"
	"os/exec"
	"runtime"
	"strconv"
)

// pinned is where --pin puts the processes: the broker on one CPU for the
// whole run, the throughput phase's clients on the others, so that a client
// and the broker never wait for each other's turn on a core.
type pinned struct {
	Broker  string // a taskset CPU list
	Clients string
}

// pinning chooses the CPUs for --pin: the last for the broker, the rest for
// the clients. It needs taskset and at least two CPUs.
func pinning() (*pinned, error) {
	if _, err := exec.LookPath("taskset"); err != nil {
		return nil, fmt.Errorf("taskset not found (Debian: apt-get install util-linux): %w", err)
	}
	n := runtime.NumCPU()
	if n < 2 {
		return nil, fmt.Errorf("%d CPU available: pinning needs at least 2", n)
	}
	clients := "0"
	if n > 2 {
		clients = fmt.Sprintf("0-%d", n-2)
	}
	return &pinned{Broker: strconv.Itoa(n - 1), Clients: clients}, nil
}

// taskset returns argv to run on cpus, or argv itself when cpus is "".
func taskset(cpus string, argv []string) []string {
	if cpus == "" {
		return argv
	}
	return append([]string{"taskset", "-c", cpus}, argv...)
}

// brokerCPUs and clientCPUs are the CPU lists of a run, "" when unpinned.
func (r *results) brokerCPUs() string {
	if r.Pin == nil {
		return ""
	}
	return r.Pin.Broker
}

func (r *results) clientCPUs() string {
	if r.Pin == nil {
		return ""
	}
	return r.Pin.Clients
}
