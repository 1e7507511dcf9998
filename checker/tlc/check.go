package tlc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// Report is the result of checking one expectation.
type Report struct {
	Expectation
	Result *Result
}

// OK reports whether TLC concluded as expected.
func (r Report) OK() bool {
	return r.Result != nil && r.Result.Outcome.Matches(r.Expect)
}

// Matches reports whether o is the expected outcome want: the same kind and,
// for an invariant violation, the same invariant. An Error outcome matches
// nothing, not even an expected Error.
func (o Outcome) Matches(want Outcome) bool {
	if o.Kind == Error || o.Kind != want.Kind {
		return false
	}
	return o.Kind != Invariant || o.Name == want.Name
}

// Check runs TLC on the module and configuration of e, found in dir, with the
// jar, java executable, workers, timeout and log of opts. Deadlock checking is
// on only if e expects a deadlock. An error means TLC could not be run, or
// the files of e are missing.
func Check(ctx context.Context, dir string, e Expectation, opts Options) (Report, error) {
	if err := e.Stat(dir); err != nil {
		return Report{}, err
	}
	opts.Dir = dir
	opts.Module = e.ModuleFile()
	opts.Config = e.Config()
	opts.CheckDeadlock = e.Expect.Kind == Deadlock
	res, err := Run(ctx, opts)
	if err != nil {
		return Report{}, fmt.Errorf("%s: %w", e.Name, err)
	}
	return Report{Expectation: e, Result: res}, nil
}

// Stat reports an error, naming where e was read, if its configuration or
// its module is not in dir.
func (e Expectation) Stat(dir string) error {
	for _, f := range []string{e.Config(), e.ModuleFile()} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("%s: %s: %w", e.Pos(), e.Name, err)
		}
	}
	return nil
}
