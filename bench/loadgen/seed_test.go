// Tests of the seed's experiment's flags, records and read-back count.

package loadgen

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseSeed(t *testing.T) {
	c, err := ParseSeed([]string{"--bootstrap", "h:1", "--topic", "t"}, map[string]string{"outcomes": ""}, "x: ", SeedUsage)
	if err != nil {
		t.Fatal(err)
	}
	if c.Partitions != 64 || c.Records != 3000 || c.ValueBytes != 10240 || c.Keys != 1024 || c.Compression != "gzip" ||
		c.DeliveryTimeout != 5*time.Second || c.RequestTimeout != 2*time.Second || c.Extra["outcomes"] != "" ||
		c.BatchRecords != BatchDefault || c.IdleAfter != -1 || c.Idle != 0 || c.ReplicationFactor != 1 {
		t.Errorf("defaults: %+v", c)
	}
	c, err = ParseSeed([]string{"--bootstrap", "h:1", "--topic", "t", "--outcomes", "f", "--records", "0"},
		map[string]string{"outcomes": ""}, "x: ", SeedUsage)
	if err != nil || c.Extra["outcomes"] != "f" || c.Records != 0 {
		t.Errorf("extra flag: %+v, %v", c, err)
	}
	for _, rf := range []int16{3, -1, 32767} {
		c, err = ParseSeed([]string{"--bootstrap", "h:1", "--topic", "t", "--replication-factor", strconv.Itoa(int(rf))}, nil, "x: ", SeedUsage)
		if err != nil || c.ReplicationFactor != rf {
			t.Errorf("--replication-factor %d: %+v, %v", rf, c, err)
		}
	}
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"--bootstrap", "h:1", "--topic"}, SeedUsage},
		{[]string{"bootstrap", "h:1"}, SeedUsage},
		{[]string{"--bootstrap", "h:1", "--topic", "t", "--bogus", "1"}, "x: unknown flag --bogus\n" + SeedUsage},
		{[]string{"--bootstrap", "h:1", "--topic", "t", "--outcomes", "f"}, "x: unknown flag --outcomes\n" + SeedUsage},
		{[]string{"--topic", "t"}, "x: --bootstrap is required"},
		{[]string{"--bootstrap", "h:1"}, "x: --topic is required"},
		{[]string{"--bootstrap", "h:1", "--topic", "t", "--records", "x"}, "x: --records wants a number, not x"},
		{[]string{"--bootstrap", "h:1", "--topic", "t", "--keys", "2147483648"}, "x: --keys wants a number, not 2147483648"},
		{[]string{"--bootstrap", "h:1", "--topic", "t", "--partitions", "0"}, "x: --partitions wants a number of at least 1, not 0"},
		{[]string{"--bootstrap", "h:1", "--topic", "t", "--replication-factor", "0"}, "x: --replication-factor wants a number from 1 to 32767, or -1 (the brokers' default.replication.factor), not 0"},
		{[]string{"--bootstrap", "h:1", "--topic", "t", "--replication-factor", "-2"}, "x: --replication-factor wants a number from 1 to 32767, or -1 (the brokers' default.replication.factor), not -2"},
		{[]string{"--bootstrap", "h:1", "--topic", "t", "--replication-factor", "32768"}, "x: --replication-factor wants a number from 1 to 32767, or -1 (the brokers' default.replication.factor), not 32768"},
		{[]string{"--bootstrap", "h:1", "--topic", "t", "--replication-factor", "three"}, "x: --replication-factor wants a number, not three"},
		{[]string{"--bootstrap", "h:1", "--topic", "t", "--compression", "brotli"}, "x: --compression wants none, gzip, snappy, lz4 or zstd, not brotli"},
		{[]string{"--bootstrap", "h:1", "--topic", "t", "--records", "-1", "--keys", "x"}, "x: --records wants a number of at least 0, not -1"},
		{[]string{"--bootstrap", "h:1", "--topic", "t", "--batch-records", "few"}, "x: --batch-records wants one, many or default, not few"},
		{[]string{"--bootstrap", "h:1", "--topic", "t", "--batch-records", ""}, "x: --batch-records wants one, many or default, not "},
		{[]string{"--bootstrap", "h:1", "--topic", "t", "--idle-after", "-1", "--idle-ms", "5"}, "x: --idle-after wants a number of at least 0, not -1"},
		{[]string{"--bootstrap", "h:1", "--topic", "t", "--idle-after", "1", "--idle-ms", "-5"}, "x: --idle-ms wants a number of at least 0, not -5"},
		{[]string{"--bootstrap", "h:1", "--topic", "t", "--idle-after", "x", "--idle-ms", "5"}, "x: --idle-after wants a number, not x"},
		{[]string{"--bootstrap", "h:1", "--topic", "t", "--records", "10", "--idle-after", "11", "--idle-ms", "5"}, "x: --idle-after wants a number of at most --records (10), not 11"},
		{[]string{"--bootstrap", "h:1", "--topic", "t", "--idle-after", "10"}, "x: --idle-after needs --idle-ms (how long the idle phase lasts)"},
		{[]string{"--bootstrap", "h:1", "--topic", "t", "--idle-ms", "10"}, "x: --idle-ms needs --idle-after (how many records come before the idle phase)"},
	} {
		var ue *UsageError
		_, err := ParseSeed(tc.argv, nil, "x: ", SeedUsage)
		if !errors.As(err, &ue) || ue.Msg != tc.want {
			t.Errorf("ParseSeed(%q): %v, want a usage error %q", tc.argv, err, tc.want)
		}
	}
}

// TestParseShapes: --batch-records and the idle phase's flags, as given.
func TestParseShapes(t *testing.T) {
	for _, tc := range []struct {
		argv  []string
		batch string
		after int
		idle  time.Duration
	}{
		{[]string{"--batch-records", "one"}, BatchOne, -1, 0},
		{[]string{"--batch-records", "many", "--idle-after", "100", "--idle-ms", "1500"}, BatchMany, 100, 1500 * time.Millisecond},
		{[]string{"--batch-records", "default", "--idle-after", "0", "--idle-ms", "0"}, BatchDefault, 0, 0},
		{[]string{"--records", "7", "--idle-after", "7", "--idle-ms", "1"}, BatchDefault, 7, time.Millisecond},
	} {
		c, err := ParseSeed(append([]string{"--bootstrap", "h:1", "--topic", "t"}, tc.argv...), nil, "x: ", SeedUsage)
		if err != nil || c.BatchRecords != tc.batch || c.IdleAfter != tc.after || c.Idle != tc.idle {
			t.Errorf("%q: %+v, %v", tc.argv, c, err)
		}
	}
}

// TestIdlePhase: Before waits at IdleAfter only, until the records before it
// are answered, then idles; without an idle phase (nil) nothing happens.
func TestIdlePhase(t *testing.T) {
	var none *IdlePhase
	none.Answered(0)
	none.Before(0, time.Hour)
	if NewIdlePhase(&SeedConfig{IdleAfter: -1}) != nil || none.Result() != nil {
		t.Fatal("no idle phase is nil")
	}
	ip := NewIdlePhase(&SeedConfig{IdleAfter: 2, Idle: 50 * time.Millisecond})
	ip.Before(0, time.Hour)
	ip.Before(1, time.Hour)
	if ip.Result() != nil {
		t.Fatal("an idle before record 2")
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		ip.Answered(5) // not one of the first two
		ip.Answered(0)
		ip.Answered(1)
	}()
	t0 := time.Now()
	ip.Before(2, time.Hour)
	r := ip.Result()
	if r == nil || r.IdleAfter != 2 || r.IdleMs != 50 || r.IdleUnanswered != 0 || r.IdleEndMs-r.IdleStartMs < 50 ||
		r.IdleStartMs < t0.UnixMilli()+15 || time.Since(t0) < 70*time.Millisecond {
		t.Errorf("idle %+v after %v", r, time.Since(t0))
	}
	// The wait for the answers is bounded: one record unanswered.
	ip = NewIdlePhase(&SeedConfig{IdleAfter: 2, Idle: time.Millisecond})
	ip.Answered(1)
	ip.Before(2, 10*time.Millisecond)
	if r := ip.Result(); r == nil || r.IdleUnanswered != 1 {
		t.Errorf("bounded wait: %+v", r)
	}
	line, _ := EncodeLine(&SeedResult{FailedErrors: map[string]int{}, Ms: 1, BatchRecords: BatchOne, IdleResult: &IdleResult{IdleAfter: 2, IdleMs: 3, IdleStartMs: 4, IdleEndMs: 7}})
	if want := `"ms":1,"batch_records":"one","idle_after":2,"idle_ms":3,"idle_start_ms":4,"idle_end_ms":7,"idle_unanswered":0}`; !strings.HasSuffix(string(line), want+"\n") {
		t.Errorf("JSON %s, want it to end %s", line, want)
	}
	if line, _ := EncodeLine(&SeedResult{FailedErrors: map[string]int{}, Ms: 1}); !strings.HasSuffix(string(line), `"ms":1}`+"\n") {
		t.Errorf("JSON without shapes %s", line)
	}
}

func TestRecordNumber(t *testing.T) {
	for v, want := range map[string]int64{
		"rec=0;abc": 0, "rec=2999;x": 2999, "rec=12;": 12, "rec=;abc": 0, "rec=1": -1, "rec=1x;": -1,
		"rek=1;abc": -1, "": -1, "rec=12345678901;": -1, "rec=1234567890;": 1234567890,
	} {
		if got := RecordNumber([]byte(v)); got != want {
			t.Errorf("RecordNumber(%q) = %d, want %d", v, got, want)
		}
	}
	if v := string(SeedValue([]byte("abcdefghij"), 42)); v != "rec=42;hij" {
		t.Errorf("SeedValue: %q", v)
	}
	if v := string(SeedValue([]byte("abc"), 42)); v != "rec" {
		t.Errorf("SeedValue, short: %q", v)
	}
}

// TestTally counts a read-back of records 0-5 (keys 0, 1, 0, 1, -1, 0):
// 0 and 2 on partition 0, 1 and 3 on partition 1, 1 again and 2 again (on
// the other partition: duplicates), two foreign values ("other" and 6, not
// of the 6 sent); 4 lost though acknowledged, 5 lost. Then one partition
// reordered.
func TestTally(t *testing.T) {
	ta := NewTally([]int32{0, 1, 0, 1, -1, 0})
	for _, r := range []struct {
		p int32
		v string
	}{{0, "rec=0;"}, {0, "rec=2;"}, {1, "rec=1;"}, {1, "rec=3;"}, {1, "rec=1;"}, {0, "other"}, {0, "rec=6;"}} {
		ta.Add(r.p, []byte(r.v))
	}
	ta.Add(1, []byte("rec=2;")) // 2 again, on another partition: a duplicate
	ta.Finish(6, []bool{true, true, true, true, true, false})
	if ta.ReadBack != 4 || ta.Duplicated != 2 || ta.OutOfOrder != 0 || ta.Foreign != 2 || ta.Lost != 2 || ta.LostAcked != 1 {
		t.Errorf("tally %+v", ta)
	}
	// Out of order per partition, whatever the keys: 1 (key 1) after 2 (key 0).
	ta = NewTally([]int32{0, 1, 0})
	for _, v := range []string{"rec=0;", "rec=2;", "rec=1;"} {
		ta.Add(0, []byte(v))
	}
	if ta.OutOfOrder != 1 {
		t.Errorf("tally, reordered across keys: %+v", ta)
	}
	ta = NewTally([]int32{0, 0, 0})
	for _, v := range []string{"rec=0;", "rec=2;", "rec=1;"} {
		ta.Add(3, []byte(v))
	}
	ta.Finish(3, make([]bool, 3))
	if ta.ReadBack != 3 || ta.OutOfOrder != 1 || ta.Lost != 0 {
		t.Errorf("tally, reordered: %+v", ta)
	}
}

// TestModuleVersion: loadgen links no module; drivers/sarama's test checks
// a version it does link.
func TestModuleVersion(t *testing.T) {
	if v := ModuleVersion("example.com/none"); v != "unknown" {
		t.Errorf("ModuleVersion(none) = %q, want unknown", v)
	}
}
