package producer

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kcheck/kcheck/topics"
	"github.com/kcheck/kcheck/wire"
)

// benchPlace is where BenchmarkProduce's legs produce: a fresh kfake
// cluster of 3 brokers per leg (the default), or, when KCHECK_BENCH_BROKERS
// names one (host:port,...), that real cluster, with two fresh topics per
// run that are deleted after it. KCHECK_BENCH_PARTITIONS sets the topics'
// partitions (default benchPartitions), KCHECK_BENCH_TURNS the turns a run
// takes there (benchTurns):
//
//	KCHECK_BENCH_BROKERS=127.0.0.1:9092 KCHECK_BENCH_PARTITIONS=1 go test ./producer -run '^$' -bench 'BenchmarkProduce$' -benchtime 100000x -count 40
type benchPlace struct {
	brokers    []string // nil: kfake
	partitions int32
	turns      int // KCHECK_BENCH_TURNS: turns a run on a real broker (0: benchTurns)
}

// benchTurns is how many turns a run on a real broker splits each client's
// records into by default: at 40,000 records a leg, turns of 8,000 records,
// about a quarter of a second each at 1 partition.
const benchTurns = 10

// benchAt reads the place from the environment; a bad value fails b.
func benchAt(b *testing.B) benchPlace {
	at := benchPlace{partitions: benchPartitions}
	if v := os.Getenv("KCHECK_BENCH_PARTITIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			b.Fatalf("KCHECK_BENCH_PARTITIONS=%q: want a partition count from 1 to 10000", v)
		}
		at.partitions = int32(n)
	}
	if v := os.Getenv("KCHECK_BENCH_TURNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 || n > 1000 {
			b.Fatalf("KCHECK_BENCH_TURNS=%q: want a number of turns from 2 to 1000", v)
		}
		at.turns = n
	}
	if v := os.Getenv("KCHECK_BENCH_BROKERS"); v != "" {
		at.brokers = strings.Split(v, ",")
	}
	return at
}

// benchSite is a cluster and topics to produce to: the addresses to give
// the client, the timed topic, the warm-up topic, and what undoes it all.
type benchSite struct {
	addrs       []string
	topic, warm string
	close       func()
}

// site returns the run's shared site on a real broker (a fresh topic per
// run, its legs in turn: creating and deleting a topic of many partitions
// per leg would take longer than the leg), nil on kfake, whose legs each
// get a cluster of their own (open).
func (at benchPlace) site(b *testing.B) *benchSite {
	if at.brokers == nil {
		return nil
	}
	s := at.open(b)
	return &s
}

// open makes a cluster and topics: a fresh kfake cluster, or fresh topics
// on the real one.
func (at benchPlace) open(b *testing.B) benchSite {
	if at.brokers == nil {
		c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(at.partitions, "t", "warm-up"))
		if err != nil {
			b.Fatal(err)
		}
		return benchSite{c.ListenAddrs(), "t", "warm-up", c.Close}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := wire.Dial(ctx, at.brokers[0], "kcheck-bench")
	if err != nil {
		b.Fatalf("KCHECK_BENCH_BROKERS: %v", err)
	}
	base := fmt.Sprintf("kcheck-bench-%d-%d", os.Getpid(), time.Now().UnixNano())
	topic, warm := base+"-t", base+"-w"
	del := func() {
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		defer conn.Close()
		if err := topics.Delete(dctx, conn, topic, warm); err != nil {
			b.Error(err)
		}
	}
	if err := topics.Create(ctx, conn, at.partitions, topics.BrokerDefault, topic, warm); err != nil {
		del()
		b.Fatal(err)
	}
	return benchSite{at.brokers, topic, warm, del}
}

// rounds is how many turns a run on a real broker splits a client's recs
// records into: KCHECK_BENCH_TURNS or benchTurns, at most one a record.
func (at benchPlace) rounds(recs int) int {
	n := at.turns
	if n == 0 {
		n = benchTurns
	}
	return max(min(n, recs), 1)
}

// warmup is how many of a leg's n records go to the timed topic before
// the timer starts: one on kfake (so each client pays the first batch of
// nearly every partition, the first-ack rule's cost, inside the
// measurement), n/4 on a real broker, whose fresh topic is slower at first
// (its log files are new): there the legs measure the steady rate, as
// bench/RESULTS.md's throughput does.
func (at benchPlace) warmup(n int) int {
	if at.brokers == nil {
		return 1
	}
	return max(n/4, 1)
}
