package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kcheck/kcheck/checker/tlc/tlctest"
)

func TestVerifyRealTraces(t *testing.T) {
	code, stdout, stderr := runKcheck(t, "verify", "../../traces/run.jsonl")
	if code != exitOK || !strings.HasPrefix(stdout, "kcheck verify ../../traces/run.jsonl: VALID") {
		t.Fatalf("run.jsonl: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = runKcheck(t, "verify", "--format", "json", "../../traces/first-ack-off.jsonl")
	if code != exitMismatch {
		t.Fatalf("first-ack-off.jsonl: exit %d, want 1", code)
	}
	var rep struct {
		Verdict    string
		Violations []struct{ Kind string }
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, v := range rep.Violations {
		kinds[v.Kind] = true
	}
	if rep.Verdict != "violations" || !kinds["lost-write"] {
		t.Fatalf("first-ack-off.jsonl: verdict %q kinds %v, want the loss named", rep.Verdict, kinds)
	}
}

// Every fixture gets the verdict its name says: ok-* valid, bad-<kind> (or
// bad-<kind>.proxy) failing with that kind and no other, inconclusive-*
// inconclusive with no violation and its read-back incomplete.
func TestVerifyFixtures(t *testing.T) {
	files, _ := filepath.Glob("../../traces/fixtures/*.jsonl")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := runKcheck(t, "verify", "--format", "json", f)
			var rep struct {
				Verdict    string
				Violations []struct{ Kind, Detail string }
				ReadBack   struct{ Complete bool } `json:"read_back"`
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("exit %d: %v\n%s", code, err, stderr)
			}
			if strings.HasPrefix(name, "inconclusive-") {
				if code != exitMismatch || rep.Verdict != "inconclusive" || len(rep.Violations) > 0 || rep.ReadBack.Complete {
					t.Fatalf("exit %d, verdict %s, read-back complete %v, violations %+v", code, rep.Verdict, rep.ReadBack.Complete, rep.Violations)
				}
				return
			}
			if strings.HasPrefix(name, "ok-") {
				if code != exitOK || rep.Verdict != "valid" {
					t.Fatalf("exit %d, verdict %s, violations %+v", code, rep.Verdict, rep.Violations)
				}
				return
			}
			// bad-KIND[.what][.proxy] (traces/fixtures/README.md)
			want := strings.SplitN(strings.TrimPrefix(name, "bad-"), ".", 2)[0]
			if code != exitMismatch || len(rep.Violations) == 0 {
				t.Fatalf("exit %d, verdict %s: want a %s", code, rep.Verdict, want)
			}
			for _, v := range rep.Violations {
				if v.Kind != want {
					t.Errorf("found %s (%s), want only %s", v.Kind, v.Detail, want)
				}
			}
		})
	}
}

func TestVerifyBadInput(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile("../../traces/run.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(good), "\n")
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"verify"}, "verify takes one trace file"},
		{[]string{"verify", filepath.Join(dir, "missing.jsonl")}, "no such file"},
		{[]string{"verify", write("trunc.jsonl", lines[0]+lines[1]+strings.TrimSuffix(lines[2], "\n"))}, "trunc.jsonl:3: truncated last line"},
		{[]string{"verify", write("junk.jsonl", lines[0]+"not json\n")}, "junk.jsonl:2: not a valid event"},
		{[]string{"verify", write("newer.jsonl", `{"kcheck_trace":9}`+"\n")}, "newer.jsonl:1"},
		{[]string{"verify", write("noheader.jsonl", lines[1])}, "noheader.jsonl:1"},
		{[]string{"verify", "--format", "yaml", "../../traces/run.jsonl"}, `--format "yaml"`},
		{[]string{"verify", "--tlc", "--jar", filepath.Join(dir, "none.jar"), "../../traces/run.jsonl"}, "--tlc"},
		{[]string{"verify", "--tlc", "--tlc-runs", "-1", "../../traces/run.jsonl"}, "--tlc-runs -1"},
	} {
		code, _, stderr := runKcheck(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestVerifyJUnitAndHTML(t *testing.T) {
	dir := t.TempDir()
	junit := filepath.Join(dir, "junit.xml")
	html := filepath.Join(dir, "html")
	code, _, stderr := runKcheck(t, "verify", "--junit", junit, "--html", html, "../../traces/first-ack-off.jsonl")
	if code != exitMismatch {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(x), `<testcase name="order"`) || !strings.Contains(string(x), "lost-write") {
		t.Fatalf("junit:\n%s", x)
	}
	h, err := os.ReadFile(filepath.Join(html, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(h), "lost-write") {
		t.Fatal("index.html does not name the loss")
	}
}

// Traces of clients kcheck did not write, taken on the wire by kcheck proxy
// against a real broker: the stock Java client's KAFKA-14359 loss is found
// and named; kgo's and librdkafka's runs pass.
func TestVerifyProxyTraces(t *testing.T) {
	code, stdout, stderr := runKcheck(t, "verify", "../../traces/proxy/java-4.3.1-on-kafka-4.1.0.jsonl")
	if code != exitMismatch {
		t.Fatalf("stock Java client: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"VIOLATIONS", "by kcheck-proxy (kcheck-java)", "spec replay: follows the spec", "lost-write", "stall", "KAFKA-14359"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the Java trace's report lacks %q", want)
		}
	}
	for _, f := range []string{"kgo-1.22.3-on-kafka-4.1.0.jsonl", "librdkafka-2.16.0-on-kafka-4.1.0.jsonl"} {
		code, stdout, stderr := runKcheck(t, "verify", "../../traces/proxy/"+f)
		if code != exitOK || !strings.Contains(stdout, "VALID") {
			t.Errorf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", f, code, stdout, stderr)
		}
	}
}

// A trace cut off before its read-back is incomplete: inconclusive, exit 1,
// the command that completes it, what was checked and what was not; not a
// violation per partition. One with part of a read-back names the
// partitions without one. Every report says it.
func TestVerifyIncomplete(t *testing.T) {
	const none, part = "../../traces/fixtures/inconclusive-no-readback.jsonl", "../../traces/fixtures/inconclusive-partial-readback.jsonl"
	for _, tc := range []struct {
		path string
		want []string
	}{
		{none, []string{
			"kcheck verify " + none + ": INCONCLUSIVE\n",
			"incomplete trace: no read-back: it ends at line 11 with no ReadBack event",
			"checked: the spec replay of every event",
			"skipped, as they need the partitions' logs: lost-write, duplicate, nonmonotonic-send, gap, inconsistent-offsets, failed-but-present and linearizability (Porcupine)",
			"complete it with: kcheck readback --bootstrap ADDR " + none + "\n",
			"spec replay: follows the spec",
			"linearizability (Porcupine): skipped (no read-back)",
		}},
		{part, []string{
			"kcheck verify " + part + ": INCONCLUSIVE\n",
			"incomplete read-back: 1 of the 2 partitions has no ReadBack: 1\n",
			"on the partition read back, every check",
			"skipped on partition 1, as they need the partition's log",
			"head -n 14 " + part + " > CUT && kcheck readback --bootstrap ADDR CUT",
			"linearizability (Porcupine): inconclusive\n    partition 1: not checked: no ReadBack\n",
		}},
	} {
		dir := t.TempDir()
		junit, html := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "html")
		code, stdout, stderr := runKcheck(t, "verify", "--junit", junit, "--html", html, tc.path)
		if code != exitMismatch {
			t.Fatalf("%s: exit %d, want 1\n%s%s", tc.path, code, stdout, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%s: the report lacks %q:\n%s", tc.path, w, stdout)
			}
		}
		for _, bad := range []string{"violation", "nonconformance"} {
			if strings.Contains(stdout, bad) {
				t.Errorf("%s: the report names a %s:\n%s", tc.path, bad, stdout)
			}
		}
		x, err := os.ReadFile(junit)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(x), `<testcase name="read-back"`) || !strings.Contains(string(x), `type="incomplete"`) {
			t.Errorf("%s: junit does not fail the read-back:\n%s", tc.path, x)
		}
		h, err := os.ReadFile(filepath.Join(html, "index.html"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(h), "incomplete") || !strings.Contains(string(h), "kcheck readback") {
			t.Errorf("%s: index.html does not say the trace is incomplete", tc.path)
		}
	}

	// JSON: the same, as data.
	code, stdout, _ := runKcheck(t, "verify", "--format", "json", part)
	var rep struct {
		Verdict  string
		ReadBack struct {
			Complete bool
			Read     int        `json:"partitions_read"`
			Unread   [][2]int32 `json:"unread"`
			Summary  string
		} `json:"read_back"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if code != exitMismatch || rep.Verdict != "inconclusive" || rep.ReadBack.Complete || rep.ReadBack.Read != 1 ||
		len(rep.ReadBack.Unread) != 1 || rep.ReadBack.Unread[0] != [2]int32{1, 1} || rep.ReadBack.Summary == "" {
		t.Errorf("json: exit %d, %+v", code, rep)
	}

	// A complete trace says nothing of it.
	_, stdout, _ = runKcheck(t, "verify", "../../traces/run.jsonl")
	if strings.Contains(stdout, "incomplete") {
		t.Errorf("a complete trace called incomplete:\n%s", stdout)
	}
}

// runKcheckStdin is runKcheck with stdin as standard input.
func runKcheckStdin(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = runWithStdin(context.Background(), append([]string{"kcheck"}, args...), strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// A trace on standard input, as "-" or as no argument, gets the report the
// file gets, named <stdin>; one cut short gets the file's error, exit 2.
func TestVerifyStdin(t *testing.T) {
	for _, path := range []string{"../../traces/run.jsonl", "../../traces/first-ack-off.jsonl", "../../traces/fixtures/bad-duplicate.jsonl"} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		wantCode, want, _ := runKcheck(t, "verify", path)
		want = strings.ReplaceAll(want, path, "<stdin>")
		for _, args := range [][]string{{"verify", "-"}, {"verify"}} {
			code, got, stderr := runKcheckStdin(t, string(data), args...)
			if code != wantCode || got != want {
				t.Errorf("%s on stdin (%q): exit %d, want %d; stderr %q\ngot:\n%s\nwant:\n%s", path, args, code, wantCode, stderr, got, want)
			}
		}
	}
	data, err := os.ReadFile("../../traces/run.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	cut := strings.Join(lines[:40], "") + strings.TrimSuffix(lines[40], "\n")
	code, stdout, stderr := runKcheckStdin(t, cut, "verify", "-")
	if code != exitUsage || !strings.Contains(stderr, "<stdin>:41: truncated last line") || stdout != "" {
		t.Errorf("a trace cut short on stdin: exit %d, stdout %q, stderr %q; want exit 2 and <stdin>:41", code, stdout, stderr)
	}
	code, _, stderr = runKcheckStdin(t, lines[0]+"not json\n", "verify")
	if code != exitUsage || !strings.Contains(stderr, "<stdin>:2: not a valid event") {
		t.Errorf("junk on stdin: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runKcheckStdin(t, "", "verify", "-")
	if code != exitUsage || !strings.Contains(stderr, "<stdin>:1: empty trace") {
		t.Errorf("empty stdin: exit %d, stderr %q", code, stderr)
	}
	// No argument and no input to read: the usage error it always was.
	code, _, stderr = runKcheck(t, "verify")
	if code != exitUsage || !strings.Contains(stderr, "verify takes one trace file") {
		t.Errorf("no argument, no stdin: exit %d, stderr %q", code, stderr)
	}
}

// --tlc of a trace of the wire (kcheck proxy) runs the broker side of the
// spec (TraceWire) and says what that established.
func TestVerifyTLCProxy(t *testing.T) {
	jar := tlctest.Jar(t)
	data, err := os.ReadFile("../../traces/fixtures/ok-not-definite.proxy.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runKcheckStdin(t, string(data), "verify", "--tlc", "--jar", jar, "--spec-dir", "../../spec", "-")
	if code != exitOK || !strings.Contains(stdout, "TLC trace validation: accepted") ||
		!strings.Contains(stdout, "TLC (TraceWire): the broker side of the spec") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runKcheckStdin(t, string(data), "verify", "--tlc", "--format", "json", "--jar", jar, "--spec-dir", "../../spec", "-")
	var rep struct {
		TLC struct {
			Accepted          bool
			Spec, Established string
		} `json:"tlc"`
	}
	if code != exitOK || json.Unmarshal([]byte(stdout), &rep) != nil || !rep.TLC.Accepted || rep.TLC.Spec != "TraceWire" ||
		!strings.HasPrefix(rep.TLC.Established, "the broker side of the spec") {
		t.Errorf("json: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// A wrong answer: the broker side of the spec explains none past it.
	bad := strings.Replace(string(data), `"seq":3,"req":2,"node":1,"err":"NONE","off":3`, `"seq":3,"req":2,"node":1,"err":"NONE","off":2`, 1)
	if bad == string(data) {
		t.Fatal("the fixture changed: no answer to doctor")
	}
	code, stdout, _ = runKcheckStdin(t, bad, "verify", "--tlc", "--jar", jar, "--spec-dir", "../../spec", "-")
	if code != exitMismatch || !strings.Contains(stdout, "TLC trace validation: REJECTED after line 10") ||
		!strings.Contains(stdout, "TLC (TraceWire): no state of the broker side of the spec explains the answers past line 10") {
		t.Errorf("doctored: exit %d\nstdout:\n%s", code, stdout)
	}
}

// --tlc reads standard input once too: TLC validates the translation made in
// verify's one pass, and needs no trace file.
func TestVerifyTLCStdin(t *testing.T) {
	jar := tlctest.Jar(t)
	data, err := os.ReadFile("../../traces/fixtures/ok-disconnect-retry.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runKcheckStdin(t, string(data), "verify", "--tlc", "--jar", jar, "--spec-dir", "../../spec", "-")
	if code != exitOK || !strings.Contains(stdout, "TLC trace validation: accepted") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// A TLC run that cannot decide in its time leaves the verdict inconclusive,
// exit 1, never a pass; the text, JSON and JUnit reports say why. The
// partitions of traces/run.jsonl share nothing, so they are checked in
// parallel runs, and the report says so.
func TestVerifyTLCInconclusiveAndSplit(t *testing.T) {
	jar := tlctest.Jar(t)
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code, stdout, stderr := runKcheck(t, "verify", "--tlc", "--jar", jar, "--spec-dir", "../../spec", "--tlc-timeout", "1ms",
		"--junit", junit, "../../traces/run.jsonl")
	if code != exitMismatch || !strings.Contains(stdout, "INCONCLUSIVE") || !strings.Contains(stdout, "TLC trace validation: INCONCLUSIVE: partitions") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if b, err := os.ReadFile(junit); err != nil || !strings.Contains(string(b), `type="inconclusive"`) {
		t.Fatalf("junit: %v\n%s", err, b)
	}
	code, stdout, stderr = runKcheck(t, "verify", "--tlc", "--jar", jar, "--spec-dir", "../../spec", "--tlc-runs", "2", "--format", "json", "../../traces/run.jsonl")
	if code != exitOK || !strings.Contains(stdout, `"Accepted": true`) || !strings.Contains(stdout, `"Runs": 2`) {
		t.Fatalf("--tlc-runs 2: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// --html and --junit from standard input: the page the file gets, drawn from
// the one pass, with the trace named <stdin>.
func TestVerifyStdinHTML(t *testing.T) {
	const path = "../../traces/first-ack-off.jsonl"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fromFile, fromStdin := filepath.Join(dir, "file"), filepath.Join(dir, "stdin")
	if code, _, stderr := runKcheck(t, "verify", "--html", fromFile, path); code != exitMismatch {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := runKcheckStdin(t, string(data), "verify", "--html", fromStdin, "--junit", filepath.Join(dir, "junit.xml"), "-"); code != exitMismatch {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checked := regexp.MustCompile(`checked in [0-9.]+[µmn]?s`)
	page := func(dir string) string {
		b, err := os.ReadFile(filepath.Join(dir, "index.html"))
		if err != nil {
			t.Fatal(err)
		}
		return checked.ReplaceAllString(string(b), "checked in X")
	}
	want := strings.ReplaceAll(page(fromFile), path, "&lt;stdin&gt;")
	if got := page(fromStdin); got != want {
		t.Errorf("the page from stdin differs from the file's (%d bytes, want %d)", len(got), len(want))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "junit.xml")); err != nil || !strings.Contains(string(b), `name="kcheck verify &lt;stdin&gt;"`) {
		t.Errorf("junit.xml: %v\n%s", err, b)
	}
}

// A transactional trace whose events cannot all be true is bad input: the
// file and line that show it, exit 2, no report.
func TestVerifyTransactionalBadInput(t *testing.T) {
	good, err := os.ReadFile("../../traces/fixtures/txn/ok-tv2.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	idem, err := os.ReadFile("../../traces/run.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	idem = []byte(strings.Replace(string(idem), `{"kcheck_trace":2,`, `{"kcheck_trace":6,`, 1)) // markers are a key of version 5 on
	polls, err := os.ReadFile("../../traces/fixtures/txn/ok-polls.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// mutate writes good with old replaced by new on line n (1-based).
	mutate := func(name string, src []byte, n int, old, new string) string {
		lines := strings.SplitAfter(string(src), "\n")
		if !strings.Contains(lines[n-1], old) {
			t.Fatalf("%s: line %d lacks %q: %s", name, n, old, lines[n-1])
		}
		lines[n-1] = strings.Replace(lines[n-1], old, new, 1)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	idemRB := 0 // the idempotent trace's first ReadBack line
	for i, l := range strings.SplitAfter(string(idem), "\n") {
		if strings.Contains(l, `"ev":"ReadBack"`) {
			idemRB = i + 1
			break
		}
	}
	for _, tc := range []struct {
		path, want string
	}{
		{mutate("never.jsonl", good, 7, `"tx":1`, `"tx":2`), "never.jsonl:7: EndTxn for transaction 2, never begun: the trace is in transaction 1"},
		{mutate("again.jsonl", good, 14, `"tx":2`, `"tx":1`), "again.jsonl:14: EndTxn for transaction 1, which ended at line 8"},
		{mutate("unasked.jsonl", good, 8, `"commit":true`, `"commit":false`), "unasked.jsonl:8: EndTxnReceive for transaction 1 (an abort), which no unanswered EndTxn asked for"},
		{mutate("told.jsonl", good, 9, `"tx":1`, `"tx":5`), "told.jsonl:9: TxnTold for transaction 5, never begun"},
		{mutate("nobump.jsonl", good, 8, `"nep":1`, `"nep":0`), "nobump.jsonl:8: the header claims transaction version 2, but EndTxn of epoch 0 was answered epoch 0"},
		{mutate("stranger.jsonl", good, 24, `"ctl":[[2,1000,`, `"ctl":[[2,999,`), "stranger.jsonl:24: partition 0: a control record at offset 2 for producer 999, which no InitProducerId or batch of this trace has"},
		{mutate("collide.jsonl", good, 24, `"ctl":[[2,1000,`, `"ctl":[[1,1000,`), "collide.jsonl:24: partition 0: a control record and a data record at offset 1"},
		{mutate("idem.jsonl", idem, idemRB, `"log":`, `"ctl":[[0,1,0,1]],"log":`), fmt.Sprintf("idem.jsonl:%d: partition 0: control records (ctl), but the header names no transactional_id", idemRB)},
		// A read_committed consumer's polls (format version 7).
		{mutate("pollpart.jsonl", polls, 11, `"p":1,`, `"p":2,`), `pollpart.jsonl:11: field "p": partition 2 is not one of the header's 2 partitions`},
		{mutate("pollorder.jsonl", polls, 28, `[[4,1000,2,-1,8],[5,1000,2,-1,9]]`, `[[5,1000,2,-1,9],[4,1000,2,-1,8]]`), `pollorder.jsonl:28: field "log": offset 4 after offset 5: the records of one poll are in increasing offset order`},
		{mutate("pollfrom.jsonl", polls, 19, `"off":3`, `"off":-1`), `pollfrom.jsonl:19: field "off": -1: a poll asks from an offset`},
		{mutate("poller.jsonl", polls, 11, `"poll":1`, `"poll":0`), `poller.jsonl:11: field "poll": 0: pollers are numbered from 1`},
		{mutate("pollafter.jsonl", polls, 30, `"ev":"PollEnd","p":1,"err":"NONE","off":7,"reason":""`, `"ev":"Poll","p":0,"off":8,"log":[]`), "pollafter.jsonl:30: Poll of poller 1 on partition 0 after its PollEnd at line 29"},
		{mutate("pollv6.jsonl", polls, 1, `"kcheck_trace":7`, `"kcheck_trace":6`), `pollv6.jsonl:10: field "ev": Poll is an event of format version 7`},
		{mutate("pollidem.jsonl", []byte(strings.Replace(string(idem), `{"kcheck_trace":6,`, `{"kcheck_trace":7,`, 1)), idemRB, `"ev":"ReadBack","p":0,"log":`, `"ev":"Poll","p":0,"off":0,"poll":1,"log":`),
			fmt.Sprintf("pollidem.jsonl:%d: Poll, but the header names no transactional_id", idemRB)},
	} {
		code, stdout, stderr := runKcheck(t, "verify", tc.path)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and %q", filepath.Base(tc.path), code, stdout, stderr, tc.want)
		}
	}
}
