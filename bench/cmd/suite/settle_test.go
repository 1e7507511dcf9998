package main

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSettle checks that settle writes every partition of a new topic once.
func TestSettle(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(64, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := settle(ctx, c.ListenAddrs()[0], "t", 64); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[int32]int{}
	for n := 0; n < 64; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d of 64 records: %v", n, err)
		}
		fs.EachRecord(func(r *kgo.Record) { got[r.Partition]++; n++ })
	}
	for p := int32(0); p < 64; p++ {
		if got[p] != 1 {
			t.Errorf("partition %d has %d records, want 1", p, got[p])
		}
	}
}
