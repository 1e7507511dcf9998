package txn_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/checker/verify"
)

// txnKinds are the kinds a traces/fixtures/txn/bad-<kind>.jsonl must exist for.
var txnKinds = []checker.Kind{checker.AbortedRead, checker.CommittedUnread, checker.AbortCommitted, checker.TornTxn,
	checker.WriteInOtherTxn, checker.LostCommit, checker.HangingTxn}

// Every transactional fixture (traces/fixtures/txn/README.md) is judged by
// kcheck verify as its name says: ok-* valid, bad-KIND[.what] with that kind
// and no other, each violation with sorted lines and a detail; every
// transactional kind has one.
func TestFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "traces", "fixtures", "txn", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures (%v)", err)
	}
	covered := map[checker.Kind]bool{}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			rep, err := verify.File(context.Background(), path, verify.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Txn == nil || rep.Txn.Transactions == 0 || rep.Txn.ReadCommitted == 0 {
				t.Fatalf("not checked as transactional: %+v", rep.Txn)
			}
			for _, v := range rep.Violations {
				t.Logf("%s lines %v: %s", v.Kind, v.Lines, v.Detail)
				if len(v.Lines) == 0 || !slices.IsSorted(v.Lines) || v.Detail == "" {
					t.Errorf("%s: lines %v, detail %q", v.Kind, v.Lines, v.Detail)
				}
			}
			switch {
			case strings.HasPrefix(name, "ok-"):
				if rep.Verdict != verify.Valid {
					t.Errorf("verdict %s, want valid", rep.Verdict)
				}
			case strings.HasPrefix(name, "bad-"):
				kind := checker.Kind(strings.SplitN(strings.TrimPrefix(name, "bad-"), ".", 2)[0])
				if !slices.Contains(txnKinds, kind) {
					t.Fatalf("fixture for unknown kind %q", kind)
				}
				covered[kind] = true
				if len(rep.Violations) == 0 {
					t.Errorf("want %s, got none", kind)
				}
				for _, v := range rep.Violations {
					if v.Kind != kind {
						t.Errorf("want only %s, got %s: %s", kind, v.Kind, v.Detail)
					}
				}
			default:
				t.Fatalf("fixture name %q is neither ok-* nor bad-*", name)
			}
		})
	}
	for _, k := range txnKinds {
		if !covered[k] {
			t.Errorf("no fixture bad-%s.jsonl", k)
		}
	}
}

// Real transactional runs (checker/tv's testdata: ours on kfake, ours, kgo
// and sarama through kcheck proxy on Kafka 4.4.0, and our TV1 abort after a
// failed batch with its KIP-360 bump) are valid.
func TestRealRunsValid(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "tv", "testdata", "txn*.jsonl"))
	if err != nil || len(files) < 5 {
		t.Fatalf("%d real runs (%v)", len(files), err)
	}
	for _, path := range files {
		rep, err := verify.File(context.Background(), path, verify.Options{})
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if rep.Verdict != verify.Valid || rep.Txn == nil {
			t.Errorf("%s: %s, %+v: %v", path, rep.Verdict, rep.Txn, rep.Violations)
		}
	}
}
