package brokers

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kcheck/kcheck/kafka"
	"github.com/twmb/franz-go/pkg/kversion"
)

// Running is a broker started here, until Stop.
type Running struct {
	Spec   Spec
	Addrs  []string      // its nodes' client addresses
	Log    string        // its log file; "" for one in this process
	Exited chan struct{} // closed when its process exits; nil for one in this process
	stop   func() error
}

// Tail is the end of its log, for a broker that crashed: "" for one in this
// process.
func (r *Running) Tail() string {
	if r.Log == "" {
		return ""
	}
	return indent(kafka.Tail(r.Log))
}

// Stop stops the broker and removes what it wrote.
func (r *Running) Stop() error { return r.stop() }

// StartKfake starts kfake in this process with nodes brokers on 127.0.0.1,
// at ports if given (one per node) or free ones, answering the API versions
// of max (nil: kfake's own, uncapped).
func StartKfake(version string, max *kversion.Versions, nodes int, ports []int) (*Running, error) {
	if len(ports) > 0 && len(ports) != nodes {
		return nil, fmt.Errorf("kfake: %d ports for %d nodes", len(ports), nodes)
	}
	opts := []kfake.Opt{kfake.NumBrokers(nodes)}
	if len(ports) > 0 {
		opts = append(opts, kfake.Ports(ports...))
	}
	if max != nil {
		opts = append(opts, kfake.MaxVersions(max))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("starting kfake: %w", err)
	}
	return &Running{Spec: Spec{Kfake, version}, Addrs: c.ListenAddrs(), stop: func() error { c.Close(); return nil }}, nil
}
