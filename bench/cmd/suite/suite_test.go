// Tests of the suite's pieces that need no broker: spreads, ratios, the
// order of clients, benchmark-line parsing, the SVG charts and the TCP delay.

package main

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSpread(t *testing.T) {
	s := spread([]float64{3, nan, 1, 2, 10})
	if s.Min != 1 || s.Med != 2.5 || s.Max != 10 || s.N != 4 {
		t.Errorf("spread: %+v", s)
	}
	if s := spread([]float64{nan}); s.ok() || !math.IsNaN(s.Med) {
		t.Errorf("spread of nothing: %+v", s)
	}
	if r := ratios([]float64{2, 3, nan}, []float64{1, 6, 1}); r[0] != 2 || r[1] != 0.5 || !math.IsNaN(r[2]) {
		t.Errorf("ratios: %v", r)
	}
	for x, want := range map[float64]string{0: "0", 1234: "1234", 12345: "12.3k", 123456: "123k", 1.5e6: "1.50M", 0.5: "0.50", 12.34: "12.3"} {
		if got := num(x); got != want {
			t.Errorf("num(%v) = %q, want %q", x, got, want)
		}
	}
	for x, want := range map[float64]string{10: "10", 2500: "2500", 1e6: "1M", 0: "0", 1e4: "10k"} {
		if got := tick(x); got != want {
			t.Errorf("tick(%v) = %q, want %q", x, got, want)
		}
	}
	if got := fmtSpread(Spread{1, 2, 3, 3}); got != "2.00 (1.00–3.00)" {
		t.Errorf("fmtSpread: %q", got)
	}
}

func TestRotate(t *testing.T) {
	xs := []string{"a", "b", "c"}
	for i, want := range [][]string{{"a", "b", "c"}, {"c", "b", "a"}, {"b", "c", "a"}, {"a", "c", "b"}, {"c", "a", "b"}} {
		if got := rotate(xs, i); !slices.Equal(got, want) {
			t.Errorf("rotate(%d) = %v, want %v", i, got, want)
		}
	}
}

func TestParseBench(t *testing.T) {
	out := "goos: linux\nBenchmarkVerify/events=10000-2   \t       3\t  19185623 ns/op\t    521236 events/s\t      1919 ns/event\t 7418181 B/op\t   63493 allocs/op\nPASS\n"
	m, err := parseBench(out)
	if err != nil {
		t.Fatal(err)
	}
	if m["N"] != 3 || m["ns/event"] != 1919 || m["B/op"] != 7418181 || m["events/s"] != 521236 {
		t.Errorf("parseBench: %v", m)
	}
	if _, err := parseBench("FAIL\n"); err == nil {
		t.Error("parseBench of no result: want an error")
	}
}

func TestChartIsSVG(t *testing.T) {
	for _, log := range []bool{false, true} {
		c := Chart{Title: "t <&>", YLabel: "y", Groups: []string{"g1", "g2"}, Log: log,
			Series: []Series{{Name: "a", Vals: []Spread{{1, 2, 3, 3}, {}}}, {Name: "b", Vals: []Spread{{10, 20, 30, 3}, {5, 5, 5, 1}}}},
			Refs:   []Ref{{25, "goal"}, {26, "other"}}}
		d := xml.NewDecoder(strings.NewReader(c.SVG()))
		for {
			_, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("log %v: not XML: %v", log, err)
			}
		}
	}
}

// TestDelayProxy checks that bytes are held for the delay, pipelined (two
// writes 50 ms apart arrive 50 ms apart, each after the delay), and that
// answers pass.
func TestDelayProxy(t *testing.T) {
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	got := make(chan time.Time, 2)
	go func() {
		c, err := up.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b := make([]byte, 1)
		for range 2 {
			if _, err := io.ReadFull(c, b); err != nil {
				return
			}
			got <- time.Now()
			c.Write(b)
		}
	}()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const delay = 200 * time.Millisecond
	d := newDelayProxy(ln, up.Addr().String(), delay)
	defer d.close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t0 := time.Now()
	c.Write([]byte("a"))
	time.Sleep(50 * time.Millisecond)
	c.Write([]byte("b"))
	a1, a2 := <-got, <-got
	if a1.Sub(t0) < delay || a2.Sub(t0) < delay+50*time.Millisecond {
		t.Errorf("delivered after %v and %v, want at least %v and %v", a1.Sub(t0), a2.Sub(t0), delay, delay+50*time.Millisecond)
	}
	if a2.Sub(t0) > 2*delay {
		t.Errorf("second byte after %v: not pipelined", a2.Sub(t0))
	}
	b := make([]byte, 2)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(c, b); err != nil || string(b) != "ab" {
		t.Errorf("answers %q, %v", b, err)
	}
}

// turnsLine is a BenchmarkProduce line with the given ratios.
func turnsLine(onKgo, onOff, traceOn float64) string {
	return fmt.Sprintf("BenchmarkProduce-2 \t 40000\t 123 ns/op\t 1500 kgo-cpu-ns/rec\t 1000 on-cpu-ns/rec\t 1000 off-cpu-ns/rec\t 1050 trace-cpu-ns/rec\t"+
		" %g on/kgo\t 1.0 off/kgo\t 1.0 trace/kgo\t %g on/off\t %g trace/on", onKgo, onOff, traceOn)
}

// TestReportTurns: the turns phase's runs pooled by bench/pool.py into the
// table and the goals, each judged on the interval of the median; runs
// bench/pool.py cannot pool are the report's error, naming the count.
func TestReportTurns(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found: bench/pool.py pools the runs")
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	var good, costly, wide []string
	for i := range 20 {
		d := float64(i%5) / 1000 // 0 to 0.004
		good = append(good, turnsLine(1.05+d, 0.995+d, 0.97+d))
		costly = append(costly, turnsLine(1.05+d, 0.95+d, 0.90+d))
		wide = append(wide, turnsLine(1.05+d, 0.95+float64(i%5)*0.02, 0.97+d)) // 0.95 to 1.03
	}
	for _, c := range []struct {
		name  string
		lines []string
		want  []string
	}{
		{"met", good, []string{"| ours ≥ kgo's records/s, in turns | 1.052", "| the rule costs at most 2%, in turns | 0.997 (0.996–0.998) (1p), 0.997 (0.996–0.998) (64p) | **met** |",
			"| tracing costs at most 5% of records/s, in turns | 0.972", "20 runs"}},
		{"costly", costly, []string{"| the rule costs at most 2%, in turns | 0.952 (0.951–0.953) (1p), 0.952 (0.951–0.953) (64p) | **not met** |",
			"| tracing costs at most 5% of records/s, in turns | 0.902 (0.901–0.903) (1p), 0.902 (0.901–0.903) (64p) | **not met** |"}},
		{"wide", wide, []string{"| the rule costs at most 2%, in turns | 0.990 (0.970–1.010) (1p), 0.990 (0.970–1.010) (64p) | **not resolved**"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &suite{path: paths{Root: root}, res: &results{Turns: []turnsRun{{Partitions: 1, Lines: c.lines}, {Partitions: 64, Lines: c.lines}}}}
			var b strings.Builder
			if err := s.reportTurns(&b); err != nil {
				t.Fatal(err)
			}
			var goals strings.Builder
			for _, g := range s.goals {
				fmt.Fprintf(&goals, "| %s | %s | %s |\n", g.Goal, g.Measured, g.Verdict)
			}
			all := b.String() + goals.String()
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("the report lacks %q:\n%s", w, all)
				}
			}
		})
	}
	s := &suite{path: paths{Root: root}, res: &results{Turns: []turnsRun{{Partitions: 8, Lines: []string{"BenchmarkProduce-2 \t 10\t 1.0 on/off"}}}}}
	var b strings.Builder
	if err := s.reportTurns(&b); err == nil || !strings.Contains(err.Error(), "turns, 8 partitions: bench/pool.py: exit 2") {
		t.Errorf("unpoolable runs: got %v, want bench/pool.py's exit 2 for 8 partitions", err)
	}
}
