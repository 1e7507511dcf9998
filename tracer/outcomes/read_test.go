package outcomes

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kcheck/kcheck/tracer"
)

// What the writer writes, the reader reads back as the Told events it means.
func TestReadWhatIsWritten(t *testing.T) {
	var b bytes.Buffer
	w := New(&b)
	w.Delivered(7, 3, 41)
	w.Delivered(8, 0, -1)
	w.Failed(9, 2, "INVALID_RECORD: x", 87)
	w.Failed(10, -1, `"quoted" <text>`, 0)
	w.None(12)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := Read(&b, "o.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := []tracer.Event{
		{Kind: tracer.Told, RecordID: 7, Partition: 3, Offset: 41, Result: tracer.Delivered},
		{Kind: tracer.Told, RecordID: 8, Partition: 0, Offset: -1, Result: tracer.Delivered},
		{Kind: tracer.Told, RecordID: 9, Partition: 2, Offset: -1, Result: tracer.Failed, Err: "INVALID_RECORD", Reason: "INVALID_RECORD: x"},
		{Kind: tracer.Told, RecordID: 10, Partition: -1, Offset: -1, Result: tracer.Failed, Reason: `"quoted" <text>`},
		{Kind: tracer.Told, RecordID: 12, Partition: -1, Offset: -1, Result: tracer.NoAnswer},
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].Told.Kind != want[i].Kind || got[i].Told.RecordID != want[i].RecordID || got[i].Told.Partition != want[i].Partition ||
			got[i].Told.Offset != want[i].Offset || got[i].Told.Result != want[i].Result || got[i].Told.Err != want[i].Err ||
			got[i].Told.Reason != want[i].Reason || got[i].Line != i+1 {
			t.Errorf("line %d: got %+v, want %+v", i+1, got[i], want[i])
		}
	}
}

// A transactional report: each record's line belongs to the transaction
// after the last one named before it; a failed commit may be followed by
// the same transaction's abort; records after the last end are in the
// next transaction, which never ended.
func TestReadTxnReport(t *testing.T) {
	report := `{"id":0,"p":0,"off":0}
{"id":1,"p":1,"off":0}
{"tx":1,"commit":true,"res":"committed"}
{"id":2,"p":0,"err":"x","code":87}
{"tx":2,"commit":true,"res":"failed","err":"INVALID_TXN_STATE: must abort","code":48}
{"tx":2,"commit":false,"res":"aborted"}
{"id":3,"none":true}
{"tx":3,"commit":false,"res":"failed","err":"closed"}
{"id":4,"p":0,"off":5}
`
	got, err := Read(strings.NewReader(report), "o.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		kind        tracer.Kind
		txn, tx     int64
		commit      bool
		res, errStr string
		reason      string
	}
	wants := []want{
		{tracer.Told, 1, 0, false, tracer.Delivered, "", ""},
		{tracer.Told, 1, 0, false, tracer.Delivered, "", ""},
		{tracer.TxnTold, 0, 1, true, tracer.Committed, "", ""},
		{tracer.Told, 2, 0, false, tracer.Failed, "INVALID_RECORD", "x"},
		{tracer.TxnTold, 0, 2, true, tracer.Failed, "INVALID_TXN_STATE", "INVALID_TXN_STATE: must abort"},
		{tracer.TxnTold, 0, 2, false, tracer.Aborted, "", ""},
		{tracer.Told, 3, 0, false, tracer.NoAnswer, "", ""},
		{tracer.TxnTold, 0, 3, false, tracer.Failed, "", "closed"},
		{tracer.Told, 4, 0, false, tracer.Delivered, "", ""},
	}
	if len(got) != len(wants) {
		t.Fatalf("%d lines, want %d", len(got), len(wants))
	}
	for i, w := range wants {
		g := got[i]
		if g.Told.Kind != w.kind || g.Txn != w.txn || g.Told.Tx != w.tx || g.Told.Commit != w.commit || g.Told.Result != w.res ||
			g.Told.Err != w.errStr || g.Told.Reason != w.reason || g.Line != i+1 {
			t.Errorf("line %d: got %+v (txn %d), want %+v", i+1, g.Told, g.Txn, w)
		}
	}
	// A report without transaction lines is not transactional: no Txn.
	got, err = Read(strings.NewReader(`{"id":0,"p":0,"off":0}`+"\n"), "o.jsonl")
	if err != nil || got[0].Txn != 0 {
		t.Errorf("an idempotent report: %+v, %v", got, err)
	}
}

// A malformed report is refused with the file and the line.
func TestReadBadReport(t *testing.T) {
	good := `{"id":1,"p":0,"off":0}` + "\n"
	for _, tc := range []struct{ name, report, want string }{
		{"not JSON", good + "{id:2}\n", "o.jsonl:2: not an outcome"},
		{"unknown key", good + `{"id":2,"p":0,"off":1,"x":1}` + "\n", `o.jsonl:2: not an outcome: json: unknown field "x"`},
		{"no id", `{"p":0,"off":0}` + "\n", `o.jsonl:1: "id", the record's kcheck-id, is missing or negative`},
		{"negative id", `{"id":-3,"p":0,"off":0}` + "\n", `o.jsonl:1: "id"`},
		{"two kinds", `{"id":1,"p":0,"off":0,"none":true}` + "\n", `o.jsonl:1: want exactly one of "off" (delivered), "err" (failed) and "none"`},
		{"no kind", `{"id":1,"p":0}` + "\n", `o.jsonl:1: want exactly one of`},
		{"code without err", `{"id":1,"p":0,"off":0,"code":3}` + "\n", `o.jsonl:1: "code" goes with "err" only`},
		{"code out of range", `{"id":1,"p":0,"err":"x","code":70000}` + "\n", `o.jsonl:1: "code" 70000 is not a Kafka error code`},
		{"code zero", `{"id":1,"p":0,"err":"x","code":0}` + "\n", `o.jsonl:1: "code" 0 is not a Kafka error code`},
		{"none false", `{"id":1,"none":false}` + "\n", `o.jsonl:1: a record with no answer is {"id":N,"none":true}`},
		{"none with p", `{"id":1,"p":2,"none":true}` + "\n", `o.jsonl:1: a record with no answer`},
		{"no p", `{"id":1,"off":4}` + "\n", `o.jsonl:1: "p", the partition (-1 if unknown), is missing or out of range`},
		{"p below -1", `{"id":1,"p":-2,"off":4}` + "\n", `o.jsonl:1: "p"`},
		{"bad offset", `{"id":1,"p":0,"off":-1001}` + "\n", `o.jsonl:1: "off" -1001 is not an offset (-1 if none)`},
		{"twice", good + good, "o.jsonl:2: record 1 was reported already on line 1"},
		{"empty line", good + "\n" + good, "o.jsonl:2: an empty line"},
		{"two objects", `{"id":1,"p":0,"off":0}{"id":2,"p":0,"off":1}` + "\n", "o.jsonl:1: not an outcome: text after the object"},
		{"tx and id", good + `{"id":2,"tx":1,"commit":true,"res":"committed"}` + "\n", `o.jsonl:2: a line is a record's ("id") or a transaction's ("tx"), not both`},
		{"tx zero", good + `{"tx":0,"commit":true,"res":"committed"}` + "\n", `o.jsonl:2: "tx", the transaction's number (1 for the first the driver began), is missing or below 1`},
		{"no tx", good + `{"commit":true,"res":"committed"}` + "\n", `o.jsonl:2: "tx"`},
		{"no commit", good + `{"tx":1,"res":"committed"}` + "\n", `o.jsonl:2: "commit" (true: the driver asked to commit, false: to abort) is missing`},
		{"no res", good + `{"tx":1,"commit":true}` + "\n", `o.jsonl:2: "res" (committed, aborted or failed) is missing`},
		{"res unknown", good + `{"tx":1,"commit":true,"res":"delivered"}` + "\n", `o.jsonl:2: "res" "delivered": want committed, aborted or failed`},
		{"abort committed", good + `{"tx":1,"commit":false,"res":"committed"}` + "\n", `o.jsonl:2: a transaction committed with "commit" false`},
		{"committed with err", good + `{"tx":1,"commit":true,"res":"committed","err":"x"}` + "\n", `o.jsonl:2: a transaction committed has no "err" or "code"`},
		{"failed without err", good + `{"tx":1,"commit":true,"res":"failed"}` + "\n", `o.jsonl:2: a failed transaction has "err"`},
		{"failed bad code", good + `{"tx":1,"commit":true,"res":"failed","err":"x","code":-1}` + "\n", `o.jsonl:2: "code" -1 is not a Kafka error code`},
		{"never begun", good + `{"tx":2,"commit":true,"res":"committed"}` + "\n", "o.jsonl:2: transaction 2 was never begun: the last transaction reported is 0"},
		{"skips one", good + `{"tx":1,"commit":true,"res":"committed"}` + "\n" + `{"id":2,"p":0,"off":1}` + "\n" + `{"tx":3,"commit":true,"res":"committed"}` + "\n",
			"o.jsonl:4: transaction 3 was never begun: the last transaction reported is 1"},
		{"backwards", good + `{"tx":1,"commit":true,"res":"committed"}` + "\n" + `{"id":2,"p":0,"off":1}` + "\n" + `{"tx":2,"commit":true,"res":"committed"}` + "\n" +
			`{"id":3,"p":0,"off":2}` + "\n" + `{"tx":1,"commit":false,"res":"aborted"}` + "\n", "o.jsonl:6: transaction 1 after transaction 2 (line 4)"},
		{"ended twice", good + `{"tx":1,"commit":true,"res":"committed"}` + "\n" + `{"tx":1,"commit":false,"res":"aborted"}` + "\n",
			"o.jsonl:3: transaction 1 was reported ended already on line 2"},
		{"commit after failed commit", good + `{"tx":1,"commit":true,"res":"failed","err":"x"}` + "\n" + `{"tx":1,"commit":true,"res":"committed"}` + "\n",
			"o.jsonl:3: transaction 1 was reported ended already on line 2 (only a failed commit may be followed by the transaction's abort)"},
		{"abort after failed abort", good + `{"tx":1,"commit":false,"res":"failed","err":"x"}` + "\n" + `{"tx":1,"commit":false,"res":"aborted"}` + "\n",
			"o.jsonl:3: transaction 1 was reported ended already on line 2"},
		{"no record", `{"tx":1,"commit":true,"res":"committed"}` + "\n", "o.jsonl:1: transaction 1 ends with no record reported in it"},
		{"no record in the second", good + `{"tx":1,"commit":true,"res":"committed"}` + "\n" + `{"tx":2,"commit":false,"res":"aborted"}` + "\n",
			"o.jsonl:3: transaction 2 ends with no record reported in it"},
		{"huge line", good + `{"id":2,"p":0,"err":"` + strings.Repeat("x", maxOutcomeLine) + `"}` + "\n", "o.jsonl:2: a line longer than 65536 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.report), "o.jsonl")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
