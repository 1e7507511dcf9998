// Package txnmode is the Go drivers' transactional mode (drivers/WORKLOADS.md,
// "Transactions"): its flags, the same as kcheck run's, which transactions
// are aborted on purpose, the Kafka errors that mean the client or broker
// cannot run transactions at all, and the keys it adds to the JSON line.
// The driver itself uses its client's own transactional API and writes each
// transaction's end to its outcomes report (tracer/outcomes).
package txnmode

import (
	"fmt"
	"strconv"

	"github.com/kcheck/kcheck/bench/loadgen"
	"github.com/kcheck/kcheck/tracer/outcomes"
)

// Usage lists the mode's flags.
const Usage = "[--transactional [--txn-records N] [--txn-abort-every K] [--transactional-id ID]]"

// DefaultRecords is --txn-records without the flag, kcheck run's default.
const DefaultRecords = 100

// Config is the transactional mode's command line.
type Config struct {
	Records    int    // records a transaction (the last may hold fewer)
	AbortEvery int    // every AbortEvery-th transaction is aborted on purpose; 0: none
	ID         string // the transactional id; "" until Resolve: kcheck-TOPIC
}

// Split takes the mode's flags out of argv and returns the rest, for the
// driver's flag parser (loadgen.ParseSeed). cfg is nil without
// --transactional. A value missing or bad, or a --txn-* flag without
// --transactional, is a *loadgen.UsageError whose message starts with
// prefix.
func Split(argv []string, prefix string) (cfg *Config, rest []string, err error) {
	on := false
	given := map[string]string{}
	for i := 0; i < len(argv); i++ {
		switch k := argv[i]; k {
		case "--transactional":
			on = true
		case "--txn-records", "--txn-abort-every", "--transactional-id":
			if i+1 == len(argv) {
				return nil, nil, &loadgen.UsageError{Msg: prefix + k + " needs a value"}
			}
			given[k] = argv[i+1]
			i++
		default:
			rest = append(rest, k)
		}
	}
	if !on {
		for _, k := range []string{"--txn-records", "--txn-abort-every", "--transactional-id"} {
			if _, ok := given[k]; ok {
				return nil, nil, &loadgen.UsageError{Msg: prefix + k + " needs --transactional"}
			}
		}
		return nil, rest, nil
	}
	cfg = &Config{Records: DefaultRecords, ID: given["--transactional-id"]}
	if v, ok := given["--txn-records"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, nil, &loadgen.UsageError{Msg: fmt.Sprintf("%s--txn-records wants a number of at least 1, not %s", prefix, v)}
		}
		cfg.Records = n
	}
	if v, ok := given["--txn-abort-every"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, nil, &loadgen.UsageError{Msg: fmt.Sprintf("%s--txn-abort-every wants a number of at least 0 (0: none aborted), not %s", prefix, v)}
		}
		cfg.AbortEvery = n
	}
	if v, ok := given["--transactional-id"]; ok && v == "" {
		return nil, nil, &loadgen.UsageError{Msg: prefix + "--transactional-id is empty"}
	}
	return cfg, rest, nil
}

// Check refuses what the mode cannot run with, as kcheck run does: an idle
// phase (a transactional run has none). It sets the default transactional
// id, kcheck-TOPIC.
func (c *Config) Check(seed *loadgen.SeedConfig, prefix string) error {
	if seed.IdleAfter >= 0 {
		return &loadgen.UsageError{Msg: prefix + "--idle-after with --transactional: a transactional run has no idle phase"}
	}
	if c.ID == "" {
		c.ID = "kcheck-" + seed.Topic
	}
	return nil
}

// Abort reports whether transaction tx (1 for the first) is aborted on
// purpose: every AbortEvery-th.
func (c *Config) Abort(tx int) bool { return c.AbortEvery > 0 && tx%c.AbortEvery == 0 }

// Result is what the mode adds to the JSON line, after the seed's keys:
// the flags, and the transactions as their ends were told to the
// application. Failed counts each transaction whose commit or abort
// failed once (a failed commit then aborted is failed, not aborted).
type Result struct {
	TransactionalID string `json:"transactional_id"`
	TxnRecords      int    `json:"txn_records"`
	TxnAbortEvery   int    `json:"txn_abort_every"`
	TxnCommitted    int    `json:"txn_committed"`
	TxnAborted      int    `json:"txn_aborted"`
	TxnFailed       int    `json:"txn_failed"`
}

// NewResult is the mode's JSON keys for cfg, nothing counted yet.
func NewResult(cfg *Config) *Result {
	return &Result{TransactionalID: cfg.ID, TxnRecords: cfg.Records, TxnAbortEvery: cfg.AbortEvery}
}

// Clean reports whether every transaction ended as asked.
func (r *Result) Clean() bool { return r == nil || r.TxnFailed == 0 }

// cannotRun are the Kafka error codes that say the broker (or the client's
// rights on it) cannot run transactions at all, whatever the workload:
// 31 CLUSTER_AUTHORIZATION_FAILED, 35 UNSUPPORTED_VERSION,
// 43 UNSUPPORTED_FOR_MESSAGE_FORMAT, 50 INVALID_TRANSACTION_TIMEOUT (the
// client's default transaction timeout above the broker's
// transaction.max.timeout.ms), 53 TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
var cannotRun = map[int16]bool{31: true, 35: true, 43: true, 50: true, 53: true}

// CannotRun reports whether a Kafka error code says the broker cannot run
// transactions with this client: the driver could not run (exit 2, the
// client's words), no verdict.
func CannotRun(code int16) bool { return cannotRun[code] }

// End writes transaction tx's end to out (drivers/OUTCOMES.md): committed
// or aborted as asked (commit), or failed with err and its Kafka code. It
// counts it in r (nil: not counted, as the abort after a failed commit,
// whose transaction is counted failed) and reports whether it ended.
func End(out *outcomes.Writer, r *Result, tx int, commit bool, err error, code int16) bool {
	switch {
	case err != nil:
		out.TxnFailed(tx, commit, err.Error(), code)
		if r != nil {
			r.TxnFailed++
		}
		return false
	case commit:
		out.Committed(tx)
		if r != nil {
			r.TxnCommitted++
		}
	default:
		out.Aborted(tx)
		if r != nil {
			r.TxnAborted++
		}
	}
	return true
}
