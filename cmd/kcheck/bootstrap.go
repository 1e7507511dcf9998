package main

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/wire"
)

// cluster is what kcheck learns of a cluster it did not start before it
// runs the scenarios on it.
type cluster struct {
	version string // the Kafka version, given or read from ApiVersions
	guess   string // kversion's guess from ApiVersions
	brokers int    // the brokers its metadata lists
}

// releaseGuess takes the release out of kversion's guess: "v4.1" and
// "at least v4.4" (newer than franz-go knows) give 4.1 and 4.4.
var releaseGuess = regexp.MustCompile(`^(?:at least )?v(\d+\.\d+(?:\.\d+)?)$`)

// probeCluster asks the broker at addr for its ApiVersions and metadata;
// version, when not "", is the Kafka version the user says it runs.
func probeCluster(ctx context.Context, addr, version string) (cluster, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	conn, err := wire.Dial(ctx, addr, "kcheck-scenarios")
	if err != nil {
		return cluster{}, fmt.Errorf("--bootstrap %s did not answer ApiVersions (is a Kafka broker listening there?): %w", addr, err)
	}
	defer conn.Close()
	cl := cluster{version: version, guess: conn.VersionGuess()}
	if cl.version == "" {
		m := releaseGuess.FindStringSubmatch(cl.guess)
		if m == nil {
			return cl, fmt.Errorf("--bootstrap %s: its ApiVersions match no Kafka release (franz-go's kversion says %q): give the version it runs with --broker-version", addr, cl.guess)
		}
		cl.version = m[1]
	}
	resp, err := conn.Request(ctx, kmsg.NewPtrMetadataRequest())
	if err != nil {
		return cl, fmt.Errorf("--bootstrap %s: metadata: %w", addr, err)
	}
	cl.brokers = len(resp.(*kmsg.MetadataResponse).Brokers)
	if cl.brokers == 0 {
		return cl, fmt.Errorf("--bootstrap %s: its metadata lists no broker", addr)
	}
	return cl, nil
}

// replication is the replication factor kcheck gives its topics on a
// cluster of n brokers: as on the clusters it starts, 3 where there are
// that many.
func (cl cluster) replication() int { return min(cl.brokers, 3) }

// count says how many brokers the cluster has.
func (cl cluster) count() string {
	if cl.brokers == 1 {
		return "1 broker"
	}
	return fmt.Sprintf("%d brokers", cl.brokers)
}
