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
