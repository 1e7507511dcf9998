// Command produce is kcheck's own idempotent producer (package producer) in
// the throughput mode the drivers in drivers/ have (--bench): the same flags,
// loop and one line of JSON (bench/loadgen), plus the producer's two rules.
// bench/run.sh runs it next to the Java client, kgo and librdkafka.
//
//	go build -o bin/kcheck-bench-produce ./bench/cmd/produce
//	bin/kcheck-bench-produce --bench --bootstrap HOST:PORT --topic T [--first-ack on|off] [--hold-while-retrying on|off] [--wait-markers on|off] [--cpuprofile FILE] ...
//	bin/kcheck-bench-produce --bench --transactional --txn-records N [--txn-abort-every K] [--transactional-id ID] ...
//
// With --transactional the producer is transactional (producer.TransactionalID;
// TV2 when the cluster's transaction.version is 2, else TV1), and the JSON's
// "version" names the transaction version spoken and the cluster's
// transaction.version level.
//
// --cpuprofile writes a pprof CPU profile of the warm-up and the timed part
// (go tool pprof -top FILE).
//
// The topic must exist. "--bench" is accepted and optional (this command has
// no other mode). Exit status: 0 every record acknowledged, 1 some failed,
// 2 bad usage or setup errors.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/kcheck/kcheck/bench/loadgen"
	"github.com/kcheck/kcheck/producer"
	"github.com/kcheck/kcheck/recordbatch"
)

const prefix = "kcheck bench produce: "

func main() {
	t0 := time.Now()
	_, argv := loadgen.HasFlag(os.Args[1:])
	cfg, err := loadgen.Parse(argv, map[string]string{"first-ack": "on", "hold-while-retrying": "on", "wait-markers": "on", "cpuprofile": ""}, prefix)
	if err != nil {
		die(err.Error())
	}
	res, err := run(cfg, t0)
	if err != nil {
		die(prefix + err.Error())
	}
	if err := res.Write(os.Stdout); err != nil {
		die(prefix + err.Error())
	}
	os.Exit(res.ExitCode())
}

func die(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(2)
}

func onOff(cfg *loadgen.Config, k string) (bool, error) {
	switch cfg.Extra[k] {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("--%s wants on or off, not %q", k, cfg.Extra[k])
}

// sender is our producer as a loadgen.Sender.
type sender struct {
	p    *producer.Producer
	done func(*producer.Message, error)
}

func (s *sender) Send(ctx context.Context, topic string, key, value []byte, start time.Time) {
	s.p.Produce(ctx, &producer.Message{Topic: topic, Key: key, Value: value, Timestamp: start}, s.done)
}

func (s *sender) Begin() error                     { return s.p.BeginTransaction() }
func (s *sender) Commit(ctx context.Context) error { return s.p.CommitTransaction(ctx) }
func (s *sender) Abort(ctx context.Context) error  { return s.p.AbortTransaction(ctx) }

func (s *sender) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.p.Close(ctx)
}

func run(cfg *loadgen.Config, t0 time.Time) (*loadgen.Result, error) {
	firstAck, err := onOff(cfg, "first-ack")
	if err != nil {
		return nil, err
	}
	hold, err := onOff(cfg, "hold-while-retrying")
	if err != nil {
		return nil, err
	}
	waitMarkers, err := onOff(cfg, "wait-markers")
	if err != nil {
		return nil, err
	}
	codec, err := recordbatch.ParseCodec(cfg.Compression)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	nctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	var txn []producer.Opt
	if cfg.Transactional {
		txn = append(txn, producer.TransactionalID(cfg.TransactionalID), producer.WaitForMarkers(waitMarkers))
	}
	p, err := producer.New(nctx, append(txn,
		producer.Brokers(strings.Split(cfg.Bootstrap, ",")...),
		producer.ClientID("kcheck-bench"),
		producer.Linger(time.Duration(cfg.LingerMs)*time.Millisecond),
		producer.BatchBytes(cfg.BatchBytes),
		producer.MaxInFlight(cfg.MaxInFlight),
		producer.MaxBufferedRecords(cfg.MaxBuffered),
		producer.Compression(codec),
		producer.FirstAckRule(firstAck),
		producer.HoldWhileRetrying(hold),
		producer.DeliveryTimeout(time.Duration(cfg.DeliveryTimeoutMs)*time.Millisecond),
		producer.RequestTimeout(time.Duration(cfg.RequestTMs)*time.Millisecond),
	)...)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("starting the producer at %s: %w", cfg.Bootstrap, err)
	}
	if f := cfg.Extra["cpuprofile"]; f != "" {
		out, err := os.Create(f)
		if err != nil {
			return nil, err
		}
		defer out.Close()
		if err := pprof.StartCPUProfile(out); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	rec := loadgen.NewRecorder(errorName)
	s := &sender{p: p, done: func(m *producer.Message, err error) { rec.Callback(m.Timestamp, err) }}
	defer s.Close()
	res, err := loadgen.Run(ctx, cfg, s, rec, t0)
	if err != nil {
		return nil, err
	}
	res.Client = "kcheck"
	res.ClientStats = p.Stats()
	res.Version = fmt.Sprintf("first-ack %s, hold-while-retrying %s", cfg.Extra["first-ack"], cfg.Extra["hold-while-retrying"])
	if cfg.Transactional {
		res.Version += fmt.Sprintf(", TV%d (transaction.version %d), wait-markers %s", p.TxnVersion(), p.TxnFeature(), cfg.Extra["wait-markers"])
	}
	return res, nil
}

// errorName names a failed record's error for failed_errors.
func errorName(err error) string {
	for _, e := range []error{producer.ErrDeliveryTimeout, producer.ErrClosed, context.DeadlineExceeded} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	return err.Error()
}
