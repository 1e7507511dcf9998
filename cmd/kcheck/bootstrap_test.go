package main

import (
	"context"
	"strings"
	"testing"
)

// probeCluster counts the brokers and takes the version given; without
// one it reads it from ApiVersions, which kfake's (a subset of Kafka's
// requests) do not match: the user is told to give it. A real Kafka's are
// read in TestScenariosOnYourClusterOnKafka.
func TestProbeCluster(t *testing.T) {
	addr := kfakeUpstream(t)
	cl, err := probeCluster(context.Background(), addr, "4.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if cl.version != "4.1.0" || cl.brokers != 1 || cl.replication() != 1 {
		t.Errorf("probe of kfake with --broker-version 4.1.0: %+v, replication %d; want version 4.1.0, 1 broker, replication 1", cl, cl.replication())
	}
	_, err = probeCluster(context.Background(), addr, "")
	if err == nil || !strings.Contains(err.Error(), "match no Kafka release") || !strings.Contains(err.Error(), "--broker-version") {
		t.Errorf("probe of kfake without a version: %v; want its ApiVersions to match no release, and --broker-version asked for", err)
	}
}

// Bad --bootstrap use: exit 2 naming the flag, before anything runs.
func TestScenariosRunBootstrapBadInput(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--bootstrap", "127.0.0.1:1"}, "--bootstrap 127.0.0.1:1 did not answer ApiVersions"},
		{[]string{"--bootstrap", "127.0.0.1:1", "--brokers", "4.1.0"}, "--brokers starts Kafka versions, --bootstrap runs on a cluster already running"},
		{[]string{"--broker-version", "4.1.0"}, "--broker-version is for --bootstrap"},
	} {
		args := append([]string{"scenarios", "run", "--dir", "../../spec/scenarios", "--root", "../..", "--clients", "ours-on"}, tt.args...)
		code, stdout, stderr := runKcheck(t, args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, tt.want) {
			t.Errorf("kcheck %q: exit %d, stdout %q, stderr %q; want exit 2 saying %q", tt.args, code, stdout, stderr, tt.want)
		}
	}
}
