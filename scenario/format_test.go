package scenario

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// sample is a scenario with every kind of line.
func sample() *Scenario {
	return &Scenario{
		Name: "Cfg.NoGap", Config: "Cfg", Expect: "invariant:NoGap", Invariant: "NoGap",
		Steps: []Step{
			{State: 2, Action: "SendNew", Fields: []Field{{"p", "p1"}, {"b", "1"}, {"ep", "0"}, {"seq", "0"}}},
			{State: 3, Action: "RejectBeforeAppend", Fields: []Field{{"p", "p1"}, {"err", "NOT_LEADER_OR_FOLLOWER"}, {"odd", "a b=c"}}},
		},
		Loop:     2,
		Schedule: []string{"state-expiry:delay=2s", "reject:err=NOT_LEADER_OR_FOLLOWER,epoch=0,seq=0,until=next,delay=1500ms,partitions=0"},
		Needs: Needs{Partitions: 2, NoStateRule: "v45", PreWritten: true, MaxInFlight: 5, DedupWindow: 5,
			ExpiryMs: 2000, ExpiryCheckMs: 500, Idle: true, DeliveryTimeout: true, AppResends: true},
		Notes:       []string{"state 3 ExpireBatch: a note"},
		Predictions: map[string]string{"ours": "pass", "java": "invariant:NoGap", "kafkajs": NotModelled, "one-in-flight": "liveness"},
		On:          map[string]map[string]string{"tansu": {"librdkafka": "liveness", "ours": "pass", "one-in-flight": NotModelled}},
	}
}

const sampleText = header + `
scenario Cfg.NoGap
config Cfg
expect invariant:NoGap
violates invariant NoGap

step 2 SendNew p=p1 b=1 ep=0 seq=0
step 3 RejectBeforeAppend p=p1 err=NOT_LEADER_OR_FOLLOWER odd="a b=c"
loop 2

fault state-expiry:delay=2s
fault reject:err=NOT_LEADER_OR_FOLLOWER,epoch=0,seq=0,until=next,delay=1500ms,partitions=0

need partitions 2
need no-state-rule v45
need prewritten
need max-in-flight 5
need dedup-window 5
need expiry-ms 2000
need expiry-check-ms 500
need idle
need delivery-timeout
need app-resends

note state 3 ExpireBatch: a note

predict ours pass
predict java invariant:NoGap
predict one-in-flight liveness
predict kafkajs not modelled

predict-on tansu ours pass
predict-on tansu one-in-flight not modelled
predict-on tansu librdkafka liveness
`

func TestWriteRead(t *testing.T) {
	s := sample()
	var b bytes.Buffer
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	if b.String() != sampleText {
		t.Fatalf("Write:\n%s\nwant:\n%s", b.String(), sampleText)
	}
	got, err := Read(strings.NewReader(b.String()), "x.scenario")
	if err != nil {
		t.Fatal(err)
	}
	got.file, got.faultLines, got.nameLine = "", nil, 0
	if !reflect.DeepEqual(got, s) {
		t.Errorf("Read(Write(s)):\n%+v\nwant:\n%+v", got, s)
	}
	// A liveness scenario that stutters, with no faults, needs, notes or predictions.
	s = &Scenario{Name: "C.EventuallyAcked", Config: "C", Expect: "liveness", Invariant: "EventuallyAcked", Liveness: true,
		Steps: []Step{{State: 2, Action: "SendNew"}}, Stutter: true, Predictions: map[string]string{}}
	b.Reset()
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	got, err = Read(&b, "y")
	if err != nil {
		t.Fatal(err)
	}
	got.file, got.nameLine = "", 0
	if !reflect.DeepEqual(got, s) {
		t.Errorf("Read(Write(s)):\n%+v\nwant:\n%+v", got, s)
	}
}

func TestWriteInvalid(t *testing.T) {
	for _, change := range []func(*Scenario){
		func(s *Scenario) { s.Name = "Other.NoGap" },
		func(s *Scenario) { s.Expect = "maybe" },
		func(s *Scenario) { s.Steps = nil },
		func(s *Scenario) { s.Steps[1].State = 5 },
		func(s *Scenario) { s.Schedule = append(s.Schedule, "reject: err=X") },
		func(s *Scenario) { s.Notes = append(s.Notes, "two\nlines") },
		func(s *Scenario) { s.Predictions["nobody"] = "pass" },
		func(s *Scenario) { s.Predictions["ours"] = "fine" },
	} {
		s := sample()
		change(s)
		if err := s.Write(&bytes.Buffer{}); err == nil {
			t.Errorf("Write of an invalid scenario: no error (%+v)", s)
		}
	}
}

// Read's errors name the file and line.
func TestReadErrors(t *testing.T) {
	line := func(n int) string { return strings.Split(sampleText, "\n")[n-1] }
	// replace returns sampleText with line n replaced by with (or removed if "").
	replace := func(n int, with string) string {
		ls := strings.Split(sampleText, "\n")
		if with == "" {
			ls = append(ls[:n-1], ls[n:]...)
		} else {
			ls[n-1] = with
		}
		return strings.Join(ls, "\n")
	}
	if line(4) != "scenario Cfg.NoGap" || line(9) != "step 2 SendNew p=p1 b=1 ep=0 seq=0" || line(13) != "fault state-expiry:delay=2s" ||
		line(16) != "need partitions 2" || line(29) != "predict ours pass" {
		t.Fatalf("sampleText's lines moved: fix the test")
	}
	tests := []struct {
		text, want string
	}{
		{replace(4, "scenario Cfg.NoDup"), `s.scenario:4: scenario "Cfg.NoDup": want Cfg.NoGap (config and violates say so)`},
		{replace(5, "config 9x"), `s.scenario:5: config "9x": want a configuration name, such as SeedGap`},
		{replace(6, "expect sometimes"), `s.scenario:6: expect "sometimes": want pass, invariant:<Name>, liveness or deadlock`},
		{replace(7, "violates NoGap"), `s.scenario:7: violates "NoGap": want invariant <Name> or property <Name>`},
		{replace(9, "step 1 SendNew p=p1"), `s.scenario:10: step 3 after step 1: want consecutive states`},
		{replace(9, "step two SendNew"), `s.scenario:9: step "two": want its state number, then the action`},
		{replace(9, "step 2 SendNew p"), `s.scenario:9: step 2: "p": want name=value`},
		{replace(9, "step 2 SendNew p=p1 p=p2"), `s.scenario:9: step 2: field p twice`},
		{replace(9, `step 2 SendNew p="p1`), `s.scenario:9: step 2: p: an unterminated quoted value`},
		{replace(11, "loop 7"), `s.scenario:11: loop "7": want the state (1 to 3) the lasso returns to`},
		{replace(13, "fault reject: err=X"), `s.scenario:13: fault "reject: err=X": want kind:key=value,... with no space (fault.Parse's form)`},
		{replace(16, "need partitions none"), `s.scenario:16: need partitions: "none": want a whole number, 1 or more (a number of partitions, 1 or more)`},
		{replace(16, "need wings 2"), `s.scenario:16: need "wings": want one of partitions, no-state-rule, prewritten, max-in-flight, dedup-window, expiry-ms, expiry-check-ms, idle, delivery-timeout, app-resends`},
		{replace(16, "need idle"), `s.scenario:23: a second need idle (the first is line 16)`},
		{replace(18, "need prewritten yes"), `s.scenario:18: need prewritten: takes no value (no value)`},
		{replace(29, "predict nobody pass"), `s.scenario:29: predict "nobody": no such family (want one of ours, ours-norearm, java, ours-off, kgo, sarama, aiokafka, one-in-flight, kafkajs, librdkafka)`},
		{replace(29, "predict java pass"), `s.scenario:30: a second prediction for java`},
		{replace(29, "predict ours fine"), `s.scenario:29: prediction "fine": want pass, invariant:<Name>, liveness, deadlock or "not modelled"`},
		{replace(29, "frobnicate"), `s.scenario:29: unknown line "frobnicate": want one of scenario, config, expect, violates, step, loop, stutter, fault, need, note, predict, predict-on`},
		{replace(29, "config Cfg"), `s.scenario:29: a second config line (the first is line 5)`},
		{replace(30, "step 4 Receive"), `s.scenario:30: step line after a predict line: want the order scenario, config, expect, violates, step, loop, stutter, fault, need, note, predict, predict-on`},
		{replace(29, " predict ours pass"), `s.scenario:29: leading or trailing space`},
		{replace(27, "note"), `s.scenario:27: an empty note`},
		{replace(7, ""), `s.scenario:35: no violates line`},
		{replace(34, "predict-on kafka ours pass"), `s.scenario:34: predict-on "kafka": no such broker variant (want one of tansu)`},
		{replace(34, "predict-on tansu nobody pass"), `s.scenario:34: predict-on tansu "nobody": no such family (want one of ours, `},
		{replace(34, "predict-on tansu librdkafka pass"), `s.scenario:36: a second prediction on tansu for librdkafka`},
		{replace(34, "predict-on tansu ours fine"), `s.scenario:34: prediction "fine": want pass`},
		{replace(35, "predict aiokafka pass"), `s.scenario:35: predict line after a predict-on line`},
		{replace(12, "stutter"), `s.scenario:12: stutter after loop: a lasso ends one way`},
		{strings.Repeat("#", maxLine+1), `s.scenario:1: a line longer than 65536 bytes`},
	}
	for _, tt := range tests {
		_, err := Read(strings.NewReader(tt.text), "s.scenario")
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("error:\n  %v\nwant:\n  %s", err, tt.want)
		}
	}
}

func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	s := sample()
	var b bytes.Buffer
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Cfg.NoGap.scenario"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("not a scenario"), 0o644); err != nil {
		t.Fatal(err)
	}
	ss, err := ReadDir(dir)
	if err != nil || len(ss) != 1 || ss[0].Name != "Cfg.NoGap" {
		t.Fatalf("ReadDir: %v, %v", ss, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Other.scenario"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDir(dir); err == nil || err.Error() != filepath.Join(dir, "Other.scenario")+":4: scenario Cfg.NoGap in a file named for Other" {
		t.Errorf("ReadDir with a misnamed file: %v", err)
	}
	if _, err := ReadDir(filepath.Join(dir, "none")); err == nil {
		t.Errorf("ReadDir of no directory: no error")
	}
}

// Faults parses the schedule; an error names the file and line.
func TestFaults(t *testing.T) {
	s := sample()
	s.Schedule = []string{"seed-race:delay=100ms", "reject:err=NO_SUCH_ERROR"}
	var b bytes.Buffer
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	got, err := Read(strings.NewReader(text), "f.scenario")
	if err != nil {
		t.Fatal(err)
	}
	_, err = got.Faults()
	line := strings.Count(text[:strings.Index(text, "fault reject")], "\n") + 1
	if want := "f.scenario:" + strconv.Itoa(line) + ": fault \"reject:err=NO_SUCH_ERROR\": err:"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Faults: %v, want %s...", err, want)
	}
	got.Schedule = got.Schedule[:1]
	fs, err := got.Faults()
	if err != nil || len(fs) != 1 || fs[0].String() != "seed-race:delay=100ms" {
		t.Errorf("Faults: %v, %v", fs, err)
	}
	// A scenario not read from a file names itself and the fault's place.
	s.Schedule = []string{"nope"}
	if _, err := s.Faults(); err == nil || !strings.HasPrefix(err.Error(), "scenario Cfg.NoGap: fault 1: unknown fault") {
		t.Errorf("Faults: %v", err)
	}
}
