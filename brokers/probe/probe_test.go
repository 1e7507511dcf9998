package probe

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kcheck/kcheck/brokers"
	"github.com/kcheck/kcheck/tracer"
)

// Every case runs against kfake and writes a trace that reads back; the
// answers that do not depend on timing are kfake's (and Apache Kafka's):
// a retry within five batches is answered with its first offset, one
// beyond them and a gap are out of order, and an old epoch is fenced.
func TestProbeKfake(t *testing.T) {
	r, err := brokers.StartKfake("4.1", kversion.V4_1_0(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := Run(ctx, Config{Bootstrap: r.Addrs[0], Broker: tracer.Broker{Kind: "kfake", Version: "4.1", NoStateRule: "v25to44"},
		Dir: t.TempDir(), Prefix: "probe"})
	if len(res) != len(Cases) {
		t.Fatalf("%d results for %d cases", len(res), len(Cases))
	}
	last := map[string]string{}
	for _, c := range res {
		if c.Err != nil {
			t.Fatalf("%s: %v", c.Case.Name, c.Err)
		}
		if len(c.Answers) != len(c.Case.steps) {
			t.Fatalf("%s: %d answers for %d steps", c.Case.Name, len(c.Answers), len(c.Case.steps))
		}
		last[c.Case.Name] = c.Answers[len(c.Answers)-1].String()
		f, err := tracer.Open(c.Trace)
		if err != nil {
			t.Fatal(err)
		}
		reads := 0
		if err := f.Each(func(_ int, e *tracer.Event) error {
			if e.Kind == tracer.ReadBack {
				reads++
			}
			return nil
		}); err != nil {
			t.Fatalf("%s: %v", c.Trace, err)
		}
		f.Close()
		if reads != 1 {
			t.Errorf("%s: %d ReadBack events, want 1", c.Trace, reads)
		}
	}
	for name, want := range map[string]string{
		"dup-within":   "e0 s2: NONE at 2",
		"dup-beyond":   "e0 s0: OUT_OF_ORDER_SEQUENCE_NUMBER",
		"gap":          "e0 s2: OUT_OF_ORDER_SEQUENCE_NUMBER",
		"fenced-epoch": "e0 s1: INVALID_PRODUCER_EPOCH",
	} {
		if !strings.Contains(last[name], want) {
			t.Errorf("%s: last answer %q, want %q", name, last[name], want)
		}
	}
}
