package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kcheck/kcheck/brokers"
	"github.com/kcheck/kcheck/kafka"
)

func TestBrokerBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"broker"}, "--kind is required"},
		{[]string{"broker", "--kind", "crabka"}, "it has been yanked from registry `crates-io`"},
		{[]string{"broker", "--kind", "tansu", "--version", "0.5.0"}, "kcheck builds tansu 0.6.0"},
		{[]string{"broker", "--kind", "kafka", "--version", "4.1.0"}, "run it with kcheck kafka --version 4.1.0"},
		{[]string{"broker", "--kind", "kfake", "--version", "1.0"}, `kfake emulates no Kafka "1.0"`},
		{[]string{"broker", "--kind", "tansu", "--nodes", "3"}, "tansu runs one broker here"},
		{[]string{"broker", "--kind", "kfake", "--port", "x"}, `--port "x": not a port`},
	} {
		code, _, stderr := runKcheck(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// kcheck broker --kind kfake starts kfake on loopback, answering as a
// broker that can take an idempotent producer, and stops it.
func TestBrokerKfake(t *testing.T) {
	r, err := startBroker(context.Background(), brokers.Spec{Kind: brokers.Kfake, Version: "4.4"}, 3, nil, "", "", time.Minute, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	if len(r.Addrs) != 3 || !strings.HasPrefix(r.Addrs[0], "127.0.0.1:") {
		t.Fatalf("addresses %v", r.Addrs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := kafka.Probe(ctx, r.Addrs[0], 3); err != nil {
		t.Fatalf("kfake does not answer as a broker of 3: %v", err)
	}
}

func TestBrokerTable(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(good, []byte(`{"broker":{"kind":"tansu","version":"0.6.0","no_state_rule":"v25to44"},"cases":[`+
		`{"case":"gap","asks":"a gap","answers":["e0 s0: NONE at 0","e0 s2: NONE at 1"],"deciding":["e0 s2: NONE at 1"],"verdict":"NONCONFORMANCE","trace":"traces/brokers/tansu-0.6.0/gap.jsonl"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"cells":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runKcheck(t, "broker", "table", good)
	if code != exitOK || !strings.Contains(stdout, "| tansu 0.6.0 | [e0 s2: NONE at 1](traces/brokers/tansu-0.6.0/gap.jsonl) **nonconformance** |") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"broker", "table"}, "give the probes' JSON files"},
		{[]string{"broker", "table", filepath.Join(dir, "none.json")}, "no such file"},
		{[]string{"broker", "table", bad}, "bad.json: not a kcheck broker probe --json file"},
		{[]string{"broker", "probe"}, "--bootstrap HOST:PORT is required"},
		{[]string{"broker", "probe", "--bootstrap", "127.0.0.1:1", "--broker-kind", "redpanda"}, `--broker-kind "redpanda"`},
	} {
		code, _, stderr := runKcheck(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
