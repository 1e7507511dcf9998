package readback_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/readback"
	"github.com/kcheck/kcheck/workload"
)

// txnRun produces a transactional run with our producer to c: transactions
// of 25 records, every second aborted.
func txnRun(t *testing.T, c interface{ ListenAddrs() []string }) {
	t.Helper()
	s, err := workload.Start(context.Background(), workload.Config{
		Brokers: c.ListenAddrs(), BrokerVersion: "4.1.0", Topic: "rb", Partitions: partitions, Records: 200, ValueBytes: 50, Keys: 64,
		Codec: recordbatch.CodecNone, FirstAck: true, HoldWhileRetrying: true, MaxInFlight: 5, BatchBytes: 1024, Linger: time.Millisecond,
		DeliveryTimeout: 10 * time.Second, RequestTimeout: 2 * time.Second, Seed: 1, TracePath: filepath.Join(t.TempDir(), "run.jsonl"),
		Txn: &workload.Txn{ID: "rb", Records: 25, AbortEvery: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Produce(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestReadCommitted: a partition with markers is read again as
// read_committed, which sees the committed transactions' records and
// agrees with the markers; a broker whose read_committed answers leave
// out the aborted transactions (so a consumer would read aborted records)
// disagrees, at the first aborted record.
func TestReadCommitted(t *testing.T) {
	for _, broken := range []bool{false, true} {
		c := cluster(t)
		txnRun(t, c)
		if broken {
			c.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				// Served as read_uncommitted: no aborted transactions,
				// every record.
				kreq.(*kmsg.FetchRequest).IsolationLevel = 0
				return nil, nil, false
			})
		}
		parts, err := readback.Topic(context.Background(), readback.Config{Bootstrap: c.ListenAddrs(), Topic: "rb"})
		if err != nil {
			t.Fatal(err)
		}
		visible, disagree := 0, ""
		for _, p := range parts {
			if p.Committed == nil {
				t.Fatalf("partition %d (%d markers): not read as read_committed", p.ID, len(p.Ctl))
			}
			visible += p.Committed.Visible
			if disagree == "" {
				disagree = p.Committed.Disagree
			}
			for i, f := range tracer.Fates(p.Log, p.Ctl) {
				if f == tracer.FateOpen {
					t.Errorf("partition %d offset %d: open", p.ID, p.Log[i].Offset)
				}
			}
		}
		switch {
		case !broken && (visible != 100 || disagree != ""):
			t.Errorf("read_committed sees %d records (want 100), disagreement %q", visible, disagree)
		case broken && !strings.Contains(disagree, "the markers make it aborted, but read_committed"):
			t.Errorf("a broker that leaves out the aborted transactions: disagreement %q", disagree)
		}
	}
}
