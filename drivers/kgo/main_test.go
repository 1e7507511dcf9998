package main

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kcheck/kcheck/bench/loadgen"
	"github.com/kcheck/kcheck/kafka"
)

// TestJavaRandom checks loadgen.JavaRandom, which this driver draws with,
// against values printed by Java's new java.util.Random(1): the letters'
// String.hashCode, then a hash of 3,000 nextInt(1024) draws (the seed's
// keys), then five draws of a bound that is no power of two.
func TestJavaRandom(t *testing.T) {
	r := loadgen.NewJavaRandom(1)
	var h int32
	for range 10240 {
		h = 31*h + ('a' + r.NextInt(26))
	}
	if h != -272447338 {
		t.Errorf("letters hash %d, want -272447338", h)
	}
	var s int64
	for range 3000 {
		s = s*31 + int64(r.NextInt(1024))
	}
	if s != -4138879308510851376 {
		t.Errorf("keys hash %d, want -4138879308510851376", s)
	}
	for i, want := range []int32{775073953, 96911320, 206625761, 506627155, 720236926} {
		if got := r.NextInt(1000000007); got != want {
			t.Errorf("draw %d: %d, want %d", i, got, want)
		}
	}
}

func TestParseArgs(t *testing.T) {
	cfg, err := parseArgs([]string{"--bootstrap", "h:1", "--topic", "t"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.partitions != 64 || cfg.records != 3000 || cfg.valueBytes != 10240 || cfg.keys != 1024 ||
		cfg.compression != "gzip" || cfg.deliveryTimeout != 5*time.Second || cfg.requestTimeout != 2*time.Second {
		t.Errorf("defaults: %+v", cfg)
	}
	for _, argv := range [][]string{
		{"--bootstrap", "h:1", "--topic"},
		{"--bootstrap", "h:1", "--topic", "t", "--bogus", "1"},
		{"--bootstrap", "h:1", "--topic", "t", "--records", "x"},
		{"--bootstrap", "h:1", "--topic", "t", "--partitions", "0"},
		{"--bootstrap", "h:1", "--topic", "t", "--compression", "brotli"},
		{"--topic", "t"},
		{"bootstrap", "h:1"},
	} {
		var se *setupError
		if _, err := parseArgs(argv); !errors.As(err, &se) {
			t.Errorf("parseArgs(%q): %v, want a setup error", argv, err)
		}
	}
}

// TestKafka runs a small workload against a real broker: it fetches Kafka
// with mvn, so it runs only with KCHECK_KAFKA=1, as kafka/kafka_test.go.
func TestKafka(t *testing.T) {
	if os.Getenv("KCHECK_KAFKA") != "1" {
		t.Skip("set KCHECK_KAFKA=1 to fetch and run a real Kafka (make kafka-test)")
	}
	ctx := context.Background()
	cp, err := kafka.Fetch(ctx, "4.1.0", "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := kafka.Start(ctx, kafka.Config{Version: "4.1.0", Classpath: cp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	argv := []string{"--bootstrap", c.Bootstrap(), "--topic", "kgo-test", "--partitions", "8", "--records", "500",
		"--value-bytes", "200", "--compression", "lz4", "--delivery-timeout-ms", "30000"}
	cfg, err := parseArgs(argv)
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := loadgen.EncodeLine(res)
	t.Logf("%s", line)
	if res.Sent != 500 || res.ReadBack+res.Lost != 500 || res.Duplicated != 0 || res.OutOfOrder != 0 || res.Foreign != 0 ||
		res.LostAcked != 0 || res.Acked+res.Failed != 500 || res.Version == "unknown" {
		t.Errorf("result: %s", line)
	}

	var se *setupError
	if _, err := run(ctx, cfg); !errors.As(err, &se) || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("the same topic again: %v, want a setup error saying it exists", err)
	}
}
