package main

import (
	"context"
	"errors"
	"testing"

	"github.com/kcheck/kcheck/checker/tlc"
)

// checkAll gives the results in the expectations' order whatever order the
// runs end in: the second run ends first here (the first waits for it).
func TestCheckAllKeepsOrder(t *testing.T) {
	exps := []tlc.Expectation{{Name: "A"}, {Name: "B"}, {Name: "C"}}
	secondDone := make(chan struct{})
	next := checkAll(context.Background(), exps, 2, func(ctx context.Context, i int) (tlc.Report, error) {
		switch i {
		case 0:
			<-secondDone
		case 1:
			defer close(secondDone)
		}
		return tlc.Report{Expectation: exps[i]}, nil
	})
	for i := range exps {
		rep, err := next()
		if err != nil || rep.Expectation.Name != exps[i].Name {
			t.Fatalf("result %d: %s, %v; want %s", i, rep.Expectation.Name, err, exps[i].Name)
		}
	}
}

// After a run fails, the runs still going are cancelled and next gives the
// error at its place.
func TestCheckAllStopsAtAnError(t *testing.T) {
	exps := []tlc.Expectation{{Name: "A"}, {Name: "B"}}
	boom := errors.New("TLC could not run")
	started := make(chan struct{})
	cancelled := make(chan error, 1)
	next := checkAll(context.Background(), exps, 2, func(ctx context.Context, i int) (tlc.Report, error) {
		if i == 1 {
			close(started)
			<-ctx.Done()
			cancelled <- ctx.Err()
			return tlc.Report{}, ctx.Err()
		}
		<-started
		return tlc.Report{}, boom
	})
	if _, err := next(); !errors.Is(err, boom) {
		t.Fatalf("first result: %v; want %v", err, boom)
	}
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("the second run saw %v; want it cancelled", err)
	}
}
