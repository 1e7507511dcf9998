// Package verify is kcheck verify: it reads a trace once, from a file or a
// pipe, and feeds every event to the spec mirror (checker/replay), the
// exactly-once ordering check (checker/order) and the linearizability check
// (checker/linz), to TLC's translation when TLC is to validate the trace
// too (checker/tv), and to any Observer (the HTML report's collector), and
// gathers one Report with the verdict first, quoting the lines its
// violations name. checker/report writes a Report as text, JSON, JUnit XML
// or HTML.
package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/checker/linz"
	"github.com/kcheck/kcheck/checker/order"
	"github.com/kcheck/kcheck/checker/replay"
	"github.com/kcheck/kcheck/checker/tv"
	"github.com/kcheck/kcheck/checker/txn"
	"github.com/kcheck/kcheck/tracer"
)

// Verdict is the outcome of verifying a trace.
type Verdict string

const (
	Valid        Verdict = "valid"        // every check passed
	Violations   Verdict = "violations"   // some check found something wrong
	Inconclusive Verdict = "inconclusive" // nothing wrong found, but a check could not finish: never a pass
)

// Options tune a verification.
type Options struct {
	LinzTimeout time.Duration // Porcupine's time limit; 0: 30s
	TLC         bool          // also validate with TLC
	Jar         string        // tla2tools.jar, for TLC
	SpecDir     string        // where IdempotentProducer.tla is, for TLC
	TLCTimeout  time.Duration
	TLCRuns     int        // at most this many TLC runs, in parallel (0: one per CPU; 1: the whole trace in one)
	Progress    io.Writer  // a progress line on long traces; nil for none
	Observers   []Observer // also fed every event of the one pass (the HTML report's collector)
	// Source, when the trace's bytes can be read again (a regular file),
	// is where the lines the report quotes are read from after the pass,
	// by the offsets it noted, instead of every line's text being kept in
	// memory as the trace is read (nil: a pipe).
	Source io.ReaderAt
}

// TLCResult is TLC's trace validation.
type TLCResult struct {
	Accepted bool
	Furthest int // the furthest line explained, when rejected
	States   int64
	Duration time.Duration
	Skipped  string // why TLC could not express the trace, if it could not
	// Spec is the trace spec TLC ran (tv.ClientSpec or tv.WireSpec), and
	// Established what its verdict establishes, in words.
	Spec        string `json:",omitempty"`
	Established string `json:",omitempty"`
	// Runs is how many TLC runs checked the trace: its partitions that
	// share nothing are checked apart, in parallel (tv.Split).
	Runs int
	// Rejected are the partitions of the run that rejected the trace.
	Rejected []int32 `json:",omitempty"`
	// Inconclusive says why TLC could not decide: never a pass.
	Inconclusive string `json:",omitempty"`
	// Violated names the spec's properties the final state violates, for a
	// trace TLC accepted (a transactional trace, tv.TxnSpec: NoAbortedRead,
	// CommittedAtomically, NoWriteInOtherTxn, AckedCommitInLog, LSOAdvances).
	Violated []string `json:",omitempty"`
	// At is the line TLC could not explain, when it rejected the trace.
	At int `json:",omitempty"`
	// Kind names TLC's finding on a transactional trace by the kind the Go
	// check gives the same anomaly (tv.TxnKind; "" for none).
	Kind checker.Kind `json:",omitempty"`
}

// Report is everything kcheck verify found.
type Report struct {
	File        string
	Header      tracer.Header
	Events      int
	Verdict     Verdict
	Conformance string // "" when the trace follows the spec
	Linz        linz.Verdict
	LinzNotes   []string
	Order       order.Stats
	TLC         *TLCResult
	Violations  []checker.Violation
	ReadBack    Coverage   // which partitions the trace read back; see Incomplete
	Txn         *txn.Stats `json:",omitempty"` // a transactional trace: what checker/txn saw
	// Slices holds the text of every trace line a violation names.
	Slices   map[int]string
	Duration time.Duration

	linz *linz.Result
}

// LinzResult returns Porcupine's result, for its visualization.
func (r *Report) LinzResult() *linz.Result { return r.linz }

// StdinName is the name of a trace read from standard input, in reports and
// errors.
const StdinName = "<stdin>"

// Observer is fed every event of the trace in the verification's one pass,
// in order, in a goroutine beside the checks' (all observers share one). The
// Event is reused once Observe returns; its Records and Log are not, and an
// observer may keep them.
type Observer interface {
	Observe(line int, e *tracer.Event)
}

// File verifies the trace at path, reading it once; the lines the report
// quotes are read again (Options.Source) when it is a regular file. A bad
// trace (unreadable, malformed) is an error naming file:line; findings are
// in the Report.
func File(ctx context.Context, path string, opts Options) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := tracer.NewReader(f, path)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		opts.Source = f
	}
	return Trace(ctx, r, opts)
}

// Trace verifies the trace r reads, which has read its header and no event
// yet, in one pass over it: r may read a pipe. The report names the trace
// r.Name(). A bad trace is an error naming r.Name():line.
func Trace(ctx context.Context, r *tracer.Reader, opts Options) (*Report, error) {
	start := time.Now()
	if r.Line() != 1 {
		return nil, fmt.Errorf("verify %s: the reader is past the header (line %d)", r.Name(), r.Line())
	}
	path := r.Name()
	h := r.Header()
	rep := &Report{File: path, Header: h}
	m, err := replay.New(h)
	if err != nil {
		return nil, fmt.Errorf("%s:1: %w", path, err)
	}
	// What the report quotes of each line: its text, or where it starts
	// when it can be read again.
	var lines lineStore
	offsets := lineOffsets{src: opts.Source}
	keepText := opts.Source == nil
	if keepText {
		lines.add(shown(r.Text()))
	} else {
		offsets.add(r.Offset())
	}
	oc := order.New(h)
	lc := linz.New(h)
	tc := txn.New(h)
	var txnErr error // bad input the transactional check found
	var translator *tv.Translator
	observers := slices.Clone(opts.Observers)
	if opts.TLC {
		translator = tv.NewTranslator(h)
		observers = append(observers, translatorObserver{translator})
	}
	var conformance *replay.Error
	// The trace is read and parsed in this goroutine and its events handed,
	// in batches, to two more: one for the spec replay and the ordering
	// check, one for the linearizability check; and to a third for the
	// observers, if any. Each sees every event in order; no check changes
	// an event or keeps it (they keep its Records and Log, which are never
	// reused), so once all are done with a batch its Events are decoded
	// into again.
	consumers := int32(2)
	if len(observers) > 0 {
		consumers++
	}
	var replayErr error
	free, made := make(chan *batch, batches), 0
	get := func() *batch { // a free batch, or a new one while fewer than batches exist
		select {
		case b := <-free:
			return b
		default:
		}
		if made < batches {
			made++
			b := new(batch)
			if keepText {
				b.text = make([]byte, 0, 32<<10)
			}
			return b
		}
		return <-free
	}
	done := func(b *batch) {
		if b.pending.Add(-1) == 0 {
			free <- b
		}
	}
	toOrder, toLinz, toObservers := make(chan *batch, batches), make(chan *batch, batches), make(chan *batch, batches)
	var wg sync.WaitGroup
	wg.Go(func() {
		for b := range toOrder {
			for i := range b.n {
				e := &b.events[i]
				if txnErr == nil {
					if err := tc.Add(b.lines[i], e); err != nil {
						txnErr = err
					}
				}
				if conformance == nil && replayErr == nil && txnErr == nil {
					if err := m.Step(b.lines[i], e); err != nil && !errors.As(err, &conformance) {
						replayErr = err
					}
				}
				oc.Add(b.lines[i], e)
			}
			done(b)
		}
	})
	wg.Go(func() {
		// This goroutine also keeps the lines' text, or their offsets, the
		// lightest of the three: the reader only copies them into the
		// batch, in memory reused.
		prev := 1 // the line of the event before: the events of a ToldRun or ToldBatch line share it
		for b := range toLinz {
			start := int32(0)
			for i := range b.n {
				lc.Add(b.lines[i], &b.events[i])
				if b.lines[i] != prev {
					if keepText {
						lines.add(b.text[start:b.textEnd[i]])
					} else {
						offsets.add(b.offset[i])
					}
					prev = b.lines[i]
				}
				start = b.textEnd[i]
			}
			done(b)
		}
	})
	if consumers > 2 {
		wg.Go(func() { observe(toObservers, observers, done) })
	}
	last := time.Now()
	var read []int32                 // the partitions read back
	firstRead, afterRead := 0, false // the first ReadBack's line; whether another event follows one
	lastLine := 1
	for err == nil {
		b := get()
		b.n, b.text = 0, b.text[:0]
		for b.n < len(b.events) {
			var line int
			if line, err = r.ReadInto(&b.events[b.n]); err != nil {
				break
			}
			if keepText {
				if line != lastLine { // a ToldRun or ToldBatch line's events after its first add no text
					b.text = append(b.text, shown(r.Text())...)
				}
				b.textEnd[b.n] = int32(len(b.text))
			} else {
				b.offset[b.n] = r.Offset()
			}
			if e := &b.events[b.n]; e.Kind == tracer.ReadBack || e.Kind == tracer.ReadBackShort || e.Kind == tracer.ReadCommitted {
				if e.Kind == tracer.ReadBack {
					read = append(read, e.Partition)
				}
				if firstRead == 0 {
					firstRead = line
				}
			} else if firstRead > 0 {
				afterRead = true
			}
			b.lines[b.n] = line
			lastLine = line
			b.n++
			if rep.Events++; opts.Progress != nil && rep.Events%65536 == 0 && time.Since(last) > time.Second {
				last = time.Now()
				fmt.Fprintf(opts.Progress, "kcheck verify: %d events read\n", rep.Events)
			}
		}
		if b.n == 0 {
			free <- b
			continue
		}
		b.pending.Store(consumers)
		toOrder <- b
		toLinz <- b
		if consumers > 2 {
			toObservers <- b
		}
	}
	close(toOrder)
	close(toLinz)
	close(toObservers)
	wg.Wait()
	if errors.Is(err, io.EOF) {
		err = nil
	}
	if bad := (*txn.BadInput)(nil); err == nil && errors.As(txnErr, &bad) {
		err = fmt.Errorf("%s:%d: %s", path, bad.Line, bad.Msg)
	}
	if err == nil {
		err = replayErr
	}
	if err != nil {
		return nil, err
	}
	slices.Sort(read)
	read = slices.Compact(read)
	rep.ReadBack = Coverage{Partitions: h.Partitions, Read: len(read), Unread: Missing(h.Partitions, read), LastLine: lastLine}
	if firstRead > 0 && !afterRead {
		rep.ReadBack.Cut = firstRead - 1
	}
	if conformance != nil {
		rep.Conformance = conformance.Error()
		rep.Violations = append(rep.Violations, checker.Violation{
			Kind: checker.NonConformance, Partition: -1, Seq: -1, Lines: []int{conformance.Line},
			Detail: fmt.Sprintf("%s is not enabled: %s. The spec's state: %s.", conformance.Action, conformance.Reason, conformance.State),
		})
	}
	timeout := opts.LinzTimeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	// The ordering check's matching runs beside the linearizability check.
	var ores order.Result
	wg.Go(func() { ores = oc.Finish() })
	lres := lc.Check(timeout)
	wg.Wait()
	rep.Order = ores.Stats
	rep.Violations = append(rep.Violations, ores.Violations...)
	txv, tst := tc.Finish()
	rep.Violations = append(rep.Violations, txv...)
	if h.TransactionalID != "" {
		rep.Txn = &tst
	}
	rep.linz = &lres
	rep.Linz = lres.Verdict
	// A partition the ordering check already faulted is not reported twice:
	// Porcupine's verdict there is the same finding seen as a history.
	faulted := map[int32]bool{}
	for _, v := range ores.Violations {
		faulted[v.Partition] = true
	}
	for _, v := range lres.Violations {
		if !faulted[v.Partition] {
			rep.Violations = append(rep.Violations, v)
		}
	}
	for _, pr := range lres.Partitions {
		if pr.Verdict == linz.Inconclusive && pr.Reason != "" && !rep.ReadBack.unread(pr.Partition) {
			rep.LinzNotes = append(rep.LinzNotes, fmt.Sprintf("partition %d: %s", pr.Partition, pr.Reason))
		}
	}
	if !rep.ReadBack.Complete() {
		// One note for every partition not read back, not one each.
		rep.LinzNotes = append(rep.LinzNotes, PartitionsText(rep.ReadBack.Unread)+": not checked: no ReadBack")
	}

	if opts.TLC {
		t, err := runTLC(ctx, translator, opts)
		if err != nil {
			return nil, err
		}
		rep.TLC = t
		if t.Spec == tv.TxnSpec {
			// TLC's finding, named by the kind checker/txn gives it, must be
			// among the Go checks' (a rejection at a read_committed line is
			// the aborted read or committed record unread they name).
			if v, ok := txnDisagreement(t, rep.Violations); ok {
				rep.Violations = append(rep.Violations, v)
			}
		} else if t.Skipped == "" && t.Inconclusive == "" && !t.Accepted && conformance == nil {
			at := t.Furthest + 1
			if t.At > 0 {
				at = t.At
			}
			rep.Violations = append(rep.Violations, checker.Violation{
				Kind: checker.NonConformance, Partition: -1, Seq: -1, Lines: []int{at},
				Detail: fmt.Sprintf("TLC found no behaviour of the spec that explains the trace past line %d (the Go mirror accepted it: a disagreement to report)", t.Furthest),
			})
		}
	}

	slices.SortStableFunc(rep.Violations, func(a, b checker.Violation) int {
		return firstLine(a) - firstLine(b)
	})
	switch {
	case len(rep.Violations) > 0:
		rep.Verdict = Violations
	case !rep.ReadBack.Complete(), lres.Verdict == linz.Inconclusive, rep.TLC != nil && rep.TLC.Inconclusive != "",
		rep.Txn != nil && rep.Txn.Poll.Inconclusive != "": // a poller gave up: its checks are never a pass
		rep.Verdict = Inconclusive
	default:
		rep.Verdict = Valid
	}
	var quoted quotedLines = storedLines{&lines}
	if !keepText {
		quoted = &offsets
	}
	if rep.Slices, err = quote(rep.Violations, quoted); err != nil {
		return nil, fmt.Errorf("verify %s: %w", path, err)
	}
	rep.Duration = time.Since(start)
	return rep, nil
}

// batch is a run of events on their way to the checks.
type batch struct {
	events  [256]tracer.Event
	lines   [256]int
	n       int
	text    []byte       // what the report would quote of each event's line (shown), one after another
	textEnd [256]int32   // where each one ends in text
	offset  [256]int64   // or, when the lines can be read again, where each starts
	pending atomic.Int32 // checks not done with it yet
}

// batches is how many batches may be in use at once: enough to keep both
// checks busy while the trace is read.
const batches = 8

func firstLine(v checker.Violation) int {
	if len(v.Lines) == 0 {
		return 0
	}
	return v.Lines[0]
}

// translatorObserver feeds the pass's events to TLC's translation.
type translatorObserver struct{ t *tv.Translator }

func (o translatorObserver) Observe(line int, e *tracer.Event) { o.t.Add(line, e) }

func runTLC(ctx context.Context, t *tv.Translator, opts Options) (*TLCResult, error) {
	runs := opts.TLCRuns
	if runs <= 0 {
		runs = runtime.NumCPU()
	}
	mods, err := t.Split(runs)
	if errors.Is(err, tv.ErrUnsupported) {
		return &TLCResult{Skipped: err.Error()}, nil
	}
	if err != nil {
		return nil, err
	}
	v, err := tv.CheckAll(ctx, mods, opts.SpecDir, opts.Jar, opts.TLCTimeout, runs)
	if err != nil {
		return nil, err
	}
	res := &TLCResult{Accepted: v.Accepted, Furthest: v.Furthest, States: v.States, Duration: v.Duration,
		Runs: v.Parts, Rejected: v.Rejected, Inconclusive: v.Inconclusive, Violated: v.Violated, At: v.At,
		Spec: mods[0].Spec, Established: established(mods[0].Spec, v)}
	if res.Spec == tv.TxnSpec {
		res.Kind, _ = tv.TxnKind(v)
	}
	return res, nil
}

// txnDisagreement is the violation to report when TLC's finding on a
// transactional trace (t.Kind) is not among the Go checks' violations vs,
// or the Go checks name a transactional anomaly and TLC none.
func txnDisagreement(t *TLCResult, vs []checker.Violation) (checker.Violation, bool) {
	if t.Skipped != "" || t.Inconclusive != "" {
		return checker.Violation{}, false
	}
	txnKinds := []checker.Kind{checker.AbortedRead, checker.CommittedUnread, checker.AbortCommitted,
		checker.TornTxn, checker.WriteInOtherTxn, checker.LostCommit, checker.HangingTxn}
	goKinds := map[checker.Kind]bool{}
	first := 0
	for _, v := range vs {
		goKinds[v.Kind] = true
		if slices.Contains(txnKinds, v.Kind) && first == 0 && len(v.Lines) > 0 {
			first = v.Lines[0]
		}
	}
	bad := checker.Violation{Kind: checker.NonConformance, Partition: -1, Seq: -1}
	switch {
	case t.Kind == checker.NonConformance && !goKinds[checker.NonConformance]:
		bad.Lines = []int{t.At}
		bad.Detail = fmt.Sprintf("TLC found no state of the transactional spec that explains line %d (the Go checks accepted it: a disagreement to report)", t.At)
	case t.Kind != "" && t.Kind != checker.NonConformance && !goKinds[t.Kind]:
		bad.Lines = []int{max(t.At, 1)}
		bad.Detail = fmt.Sprintf("TLC's finding is %s (%s), which the Go checks did not find: a disagreement to report", t.Kind, tlcFinding(t))
	case t.Kind == "" && first > 0:
		bad.Lines = []int{first}
		bad.Detail = "TLC found the transactional spec's properties hold, where the Go checks found a transactional anomaly: a disagreement to report"
	default:
		return checker.Violation{}, false
	}
	return bad, true
}

// tlcFinding says what TLC concluded of a transactional trace.
func tlcFinding(t *TLCResult) string {
	if !t.Accepted {
		return fmt.Sprintf("rejected at line %d", t.At)
	}
	s := "the final state violates"
	for i, n := range t.Violated {
		if i > 0 {
			s += ","
		}
		s += " " + n
	}
	return s
}

// established says what TLC's verdict v under spec establishes.
func established(spec string, v *tv.Verdict) string {
	switch {
	case spec == tv.TxnSpec && v.Accepted && len(v.Violated) > 0:
		names := v.Violated[0]
		for _, n := range v.Violated[1:] {
			names += ", " + n
		}
		return "the coordinator and leaders of the transactional spec explain every answer, and the log read back violates " + names
	case spec == tv.TxnSpec && v.Accepted:
		return "the coordinator and leaders of the transactional spec explain every answer (InitProducerId, " +
			"AddPartitionsToTxn, EndTxn and its epoch, TV2's add on produce, the markers, read_committed), and the " +
			"log read back holds every transactional property; the produce answers' sequences were left to the Go mirror"
	case spec == tv.TxnSpec && v.Inconclusive == "":
		return fmt.Sprintf("no state of the transactional spec's coordinator and leaders explains line %d", v.At)
	case spec == tv.TxnSpec:
		return ""
	case spec == tv.WireSpec && v.Accepted:
		return "the broker side of the spec (de-duplication, the no-state rule, epochs, sequence checks, offsets, " +
			"a connection's answers in order) explains every answer; the client's attempts were taken as given, " +
			"and the read-back was left to the Go checks"
	case spec == tv.WireSpec:
		return fmt.Sprintf("no state of the broker side of the spec explains the answers past line %d", v.Furthest)
	case v.Accepted:
		return "a behaviour of the spec, client and broker, explains every line"
	}
	return fmt.Sprintf("no behaviour of the spec explains the trace past line %d", v.Furthest)
}

// observe feeds every event of the batches that come to the observers, in
// order, and hands each batch back.
func observe(in <-chan *batch, observers []Observer, done func(*batch)) {
	for b := range in {
		for i := range b.n {
			for _, o := range observers {
				o.Observe(b.lines[i], &b.events[i])
			}
		}
		done(b)
	}
}
