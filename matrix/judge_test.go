package matrix

import (
	"strings"
	"testing"

	"github.com/kcheck/kcheck/checker/order"
)

func TestParseSummary(t *testing.T) {
	s, err := ParseSummary([]byte("starting\n{\"client\":\"x\",\"sent\":10,\"acked\":9,\"failed\":1,\"lost\":2,\"lost_acked\":1,\"duplicated\":3,\"out_of_order\":4}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Summary{Sent: 10, Acked: 9, Failed: 1, Lost: 2, LostAcked: 1, Duplicated: 3, OutOfOrder: 4}); s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
	for _, bad := range []string{"", "no json here\n", "{\"sent\":\"ten\"}\n"} {
		if _, err := ParseSummary([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseRunSummary(t *testing.T) {
	out := "kcheck run: records lost\n  sent 200, acknowledged 190, failed 10, read back 199\n  lost 1 (1 of them acknowledged), duplicated 0, out of order 2\n"
	s, err := ParseRunSummary([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Summary{Sent: 200, Acked: 190, Failed: 10, ReadBack: 199, Lost: 1, LostAcked: 1, OutOfOrder: 2}); s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
	if _, err := ParseRunSummary([]byte("kcheck run: setup failed\n")); err == nil {
		t.Error("no error for a run without a summary")
	}
	txn := "  sent 40, acknowledged 39, failed 1, read back 40: committed 26, aborted 12, open 0\n" +
		"  of committed transactions lost or aborted 2; of aborted ones committed 1; duplicated 3, out of order 4\n"
	s, err = ParseRunSummary([]byte(txn))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Summary{Sent: 40, Acked: 39, Failed: 1, ReadBack: 40, Lost: 2, LostAcked: 2, Duplicated: 3, OutOfOrder: 4}); s != want {
		t.Errorf("transactional: got %+v, want %+v", s, want)
	}
}

func TestJudge(t *testing.T) {
	clean := Happen(Summary{Sent: 5, Acked: 5, ReadBack: 5}, order.Stats{})
	failed := Happen(Summary{Sent: 5, Acked: 4, Failed: 1, Lost: 1}, order.Stats{})
	lostTold := Happen(Summary{Sent: 5, Acked: 5, Lost: 1}, order.Stats{LostTold: 1})
	reordered := Happen(Summary{OutOfOrder: 3}, order.Stats{Stalls: 1})
	cases := []struct {
		name      string
		h         Happened
		flagged   bool
		predicted string
		agree     Agreement
		worse     bool
		what      string
	}{
		{"clean and valid", clean, false, "pass", Agrees, false, "clean"},
		{"clean and flagged", clean, true, "pass", FalseAlarm, false, "clean"},
		{"failed records are no anomaly", failed, false, "pass", Agrees, false, "lost (failed to the application) 1, failed 1"},
		{"failed records may be flagged", failed, true, "pass", Agrees, false, ""},
		{"lost though told delivered, missed", lostTold, false, "pass", Missed, true, "lost though acknowledged to the application 1"},
		{"lost though told delivered, predicted", lostTold, true, "invariant:AckedInLog", Agrees, false, ""},
		{"reordered, not modelled", reordered, true, "not modelled", Agrees, false, "reordered 3, stalled batches 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Agree(c.flagged, c.h); got != c.agree {
				t.Errorf("Agree: got %q, want %q", got, c.agree)
			}
			if got := Worse(c.predicted, c.h); got != c.worse {
				t.Errorf("Worse: got %v, want %v", got, c.worse)
			}
			if got := c.h.String(); !strings.Contains(got, c.what) {
				t.Errorf("String: got %q, want %q in it", got, c.what)
			}
		})
	}
}
