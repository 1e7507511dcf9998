package upstream

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/tracer"
)

func TestPropertyOf(t *testing.T) {
	for _, c := range []struct {
		kind  checker.Kind
		acked bool
		want  string
	}{
		{checker.Duplicate, false, "NoDuplicate"},
		{checker.Reorder, false, "NoReorder"},
		{checker.Gap, false, "NoGap"},
		{checker.Lost, true, "AckedInLog"},
		{checker.Lost, false, "NoGap"}, // a gap behind a later sequence, never acknowledged (KAFKA-14359)
		{checker.InconsistentOffset, true, "AckedInLog"},
		{checker.Stall, false, "EventuallyAcked"},
		{checker.NonConformance, false, "Spec"},
	} {
		if got := PropertyOf(c.kind, c.acked).Name; got != c.want {
			t.Errorf("PropertyOf(%s, acknowledged %v) = %s, want %s", c.kind, c.acked, got, c.want)
		}
	}
	if got := PropertyOf("new-kind", false); got.Name != "new-kind" || got.Summary != "new-kind" {
		t.Errorf("an unknown kind: %+v, want it named as it is", got)
	}
}

func TestRepro(t *testing.T) {
	cluster := t.TempDir()
	if err := os.WriteFile(filepath.Join(cluster, "kill-leader.schedule"), []byte("kill:leader=0,records=20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cell := func(topic, client string, faults ...string) tracer.Header {
		return tracer.Header{Topic: topic, Client: client, Broker: tracer.Broker{Kind: "kafka", Version: "4.1.0"}, Faults: faults}
	}
	excerpt := func(s string) tracer.Header {
		h := cell("whatever", "kafkajs")
		h.Config = map[string]string{"excerpt": s}
		return h
	}
	for _, c := range []struct {
		name     string
		h        tracer.Header
		opts     Options
		cmd      string
		hasNote  bool
		wantNone bool
	}{
		{name: "excerpt, partition named again",
			h:   excerpt("partition 0 alone, renumbered 0: kcheck scenarios run --scenario SeedGap.NoGap --clients librdkafka --brokers 4.4.0 --shapes 1p-one: partition 0"),
			cmd: "kcheck scenarios run --scenario SeedGap.NoGap --clients librdkafka --brokers 4.4.0 --shapes 1p-one"},
		{name: "excerpt",
			h:   excerpt("partition 3 alone, renumbered 0: kcheck scenarios run --scenario X --clients ours-norearm --brokers 4.4.0 --shapes 1p-one"),
			cmd: "kcheck scenarios run --scenario X --clients ours-norearm --brokers 4.4.0 --shapes 1p-one"},
		{name: "--repro first",
			h: excerpt("partition 0 alone, renumbered 0: kcheck scenarios run --scenario X"), opts: Options{Repro: "make it"}, cmd: "make it"},
		{name: "a cell's topic, dots in the scenario and the client",
			h:   cell("sc-ExpiryKgo.NoGap.4.1.0.java-4.3.1.16p-many.2", "java-4.3.1", "state-expiry:delay=2s"),
			cmd: "kcheck scenarios run --scenario ExpiryKgo.NoGap --clients java-4.3.1 --brokers 4.1.0 --shapes 16p-many --baseline=false"},
		{name: "the Baseline",
			h:   cell("sc-Baseline.4.1.0.kgo.1p-one.1", "kgo"),
			cmd: "kcheck scenarios run --scenario Baseline --clients kgo --brokers 4.1.0 --shapes 1p-one"},
		{name: "a cluster scenario, its schedule found",
			h: cell("sc-kill-leader.4.1.0.kgo.1p-one.1", "kgo", "kill:leader=0,records=20"), opts: Options{ClusterDirs: []string{t.TempDir(), cluster}},
			cmd: "kcheck scenarios run --cluster " + cluster + " --scenario kill-leader --clients kgo --brokers 4.1.0 --shapes 1p-one --baseline=false"},
		{name: "a cluster scenario, its schedule not found",
			h:   cell("sc-kill-leader.4.1.0.kgo.1p-one.1", "kgo", "kill:leader=0,records=20"),
			cmd: "kcheck scenarios run --cluster DIR --scenario kill-leader --clients kgo --brokers 4.1.0 --shapes 1p-one --baseline=false", hasNote: true},
		{name: "not a cell", h: cell("kcheck", "kcheck/producer"), wantNone: true},
		{name: "a cell of another broker", h: cell("sc-X.4.4.0.kgo.1p-one.1", "kgo"), wantNone: true},
		{name: "an excerpt of something else", h: excerpt("partition 0 alone, renumbered 0: CLIENTS=kafkajs bench/race.sh 1 4.1.0, 2026-12-01"), wantNone: true},
	} {
		cmd, note := Repro(c.h, c.opts)
		switch {
		case c.wantNone && (cmd != "" || note == ""):
			t.Errorf("%s: got %q (note %q), want no command and why", c.name, cmd, note)
		case !c.wantNone && cmd != c.cmd:
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, cmd, c.cmd)
		case !c.wantNone && (note != "") != c.hasNote:
			t.Errorf("%s: note %q", c.name, note)
		}
	}
}

func TestClientText(t *testing.T) {
	for name, want := range map[string]string{
		"kafkajs":      "KafkaJS 2.2.4 (the version kcheck's driver pins: drivers/kafkajs/package.json)",
		"java@4.0.0":   "java at 4.0.0 (a build: kcheck scenarios run --clients java@4.0.0)",
		"ours-off":     "kcheck's own producer (github.com/kcheck/kcheck/producer), first-ack rule off (the Java client's rules)",
		"someone-else": "someone-else (its version is not in the trace)",
	} {
		if got := ClientText(name); got != want {
			t.Errorf("ClientText(%q) = %q, want %q", name, got, want)
		}
	}
}
