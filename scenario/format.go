package scenario

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kcheck/kcheck/checker/tlc"
)

// Ext is the extension of a scenario file: <Name>.scenario.
const Ext = ".scenario"

// header is written at the top of every scenario file; Read skips it, as
// every comment.
const header = `# A TLC counterexample as a fault schedule (spec/scenarios/README.md).
# Written by kcheck scenarios derive (make scenarios-derive): do not edit.
`

// The keywords of a scenario file, in the order its lines come in. A
// keyword of rank r may follow only keywords of rank <= r.
type keyword struct {
	word string
	once bool // at most once
	need bool // required
}

var keywords = []keyword{
	{"scenario", true, true},
	{"config", true, true},
	{"expect", true, true},
	{"violates", true, true},
	{"step", false, true},
	{"loop", true, false},
	{"stutter", true, false},
	{"fault", false, false},
	{"need", false, false},
	{"note", false, false},
	{"predict", false, false},
	{"predict-on", false, false},
}

func keywordRank(w string) int {
	return slices.IndexFunc(keywords, func(k keyword) bool { return k.word == w })
}

// The need lines: their key, and how each is read and written.
type needKey struct {
	key   string
	get   func(*Needs) string // "" when not needed (not written), "-" for a flag that is set
	set   func(*Needs, string) error
	usage string
}

var needKeys = []needKey{
	{"partitions", func(n *Needs) string { return itoaZero(int64(n.Partitions)) },
		func(n *Needs, v string) (err error) { n.Partitions, err = positive(v); return }, "a number of partitions, 1 or more"},
	{"no-state-rule", func(n *Needs) string { return n.NoStateRule },
		func(n *Needs, v string) error {
			if !slices.Contains([]string{"pre25", "v25to44", "v45", "kafka19880"}, v) {
				return fmt.Errorf("want pre25, v25to44, v45 or kafka19880")
			}
			n.NoStateRule = v
			return nil
		}, "the spec's NoStateRule"},
	{"prewritten", func(n *Needs) string { return flag(n.PreWritten) }, func(n *Needs, v string) error { return setFlag(&n.PreWritten, v) }, "no value"},
	{"max-in-flight", func(n *Needs) string { return itoaZero(int64(n.MaxInFlight)) },
		func(n *Needs, v string) (err error) { n.MaxInFlight, err = positive(v); return }, "a number, 1 or more"},
	{"dedup-window", func(n *Needs) string { return itoaZero(int64(n.DedupWindow)) },
		func(n *Needs, v string) (err error) { n.DedupWindow, err = positive(v); return }, "a number, 1 or more"},
	{"expiry-ms", func(n *Needs) string { return itoaZero(n.ExpiryMs) },
		func(n *Needs, v string) (err error) { n.ExpiryMs, err = positive64(v); return }, "milliseconds, 1 or more"},
	{"expiry-check-ms", func(n *Needs) string { return itoaZero(n.ExpiryCheckMs) },
		func(n *Needs, v string) (err error) { n.ExpiryCheckMs, err = positive64(v); return }, "milliseconds, 1 or more"},
	{"idle", func(n *Needs) string { return flag(n.Idle) }, func(n *Needs, v string) error { return setFlag(&n.Idle, v) }, "no value"},
	{"delivery-timeout", func(n *Needs) string { return flag(n.DeliveryTimeout) }, func(n *Needs, v string) error { return setFlag(&n.DeliveryTimeout, v) }, "no value"},
	{"app-resends", func(n *Needs) string { return flag(n.AppResends) }, func(n *Needs, v string) error { return setFlag(&n.AppResends, v) }, "no value"},
	{"transactional", func(n *Needs) string { return n.TxnVersion },
		func(n *Needs, v string) error {
			if v != "tv1" && v != "tv2" {
				return fmt.Errorf("want tv1 or tv2")
			}
			n.TxnVersion = v
			return nil
		}, "tv1 or tv2"},
	{"txn-verification", func(n *Needs) string { return flag(n.TxnVerification) }, func(n *Needs, v string) error { return setFlag(&n.TxnVerification, v) }, "no value"},
	{"txn-timeout", func(n *Needs) string { return flag(n.TxnTimeout) }, func(n *Needs, v string) error { return setFlag(&n.TxnTimeout, v) }, "no value"},
	{"new-instance", func(n *Needs) string { return flag(n.NewInstance) }, func(n *Needs, v string) error { return setFlag(&n.NewInstance, v) }, "no value"},
}

func itoaZero(n int64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

// flag is how a boolean need is written: "need idle" alone.
func flag(b bool) string {
	if b {
		return "-"
	}
	return ""
}

func setFlag(b *bool, v string) error {
	if v != "" {
		return fmt.Errorf("takes no value")
	}
	*b = true
	return nil
}

func positive(v string) (int, error) {
	n, err := positive64(v)
	return int(n), err
}

func positive64(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q: want a whole number, 1 or more", v)
	}
	return n, nil
}

// Write writes s in the scenario file format: a comment header, then
//
//	scenario <Config>.<Invariant>
//	config <Config>
//	expect <the configuration's expected outcome>
//	violates invariant <Invariant> | violates property <Invariant>
//	step <state> <Action> <field>=<value> ...   one per step
//	loop <state> | stutter                      a lasso's end, if any
//	fault <kind>:<key>=<value>,...               the schedule, one per fault
//	need <key> [<value>]                         what a run needs
//	note <text>                                  what is no fault
//	predict <family> <outcome>                   one per family
//	predict-on <variant> <family> <outcome>      one per broker variant and family
//
// with a blank line between the groups.
func (s *Scenario) Write(w io.Writer) error {
	if err := s.validate(); err != nil {
		return fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	var b bytes.Buffer
	b.WriteString(header)
	fmt.Fprintf(&b, "\nscenario %s\nconfig %s\nexpect %s\n", s.Name, s.Config, s.Expect)
	kind := "invariant"
	if s.Liveness {
		kind = "property"
	}
	fmt.Fprintf(&b, "violates %s %s\n\n", kind, s.Invariant)
	for _, st := range s.Steps {
		fmt.Fprintf(&b, "step %d %s\n", st.State, st)
	}
	if s.Loop != 0 {
		fmt.Fprintf(&b, "loop %d\n", s.Loop)
	}
	if s.Stutter {
		b.WriteString("stutter\n")
	}
	group := func(lines []string) {
		if len(lines) > 0 {
			b.WriteString("\n" + strings.Join(lines, "\n") + "\n")
		}
	}
	var lines []string
	for _, f := range s.Schedule {
		lines = append(lines, "fault "+f)
	}
	group(lines)
	lines = nil
	for _, k := range needKeys {
		switch v := k.get(&s.Needs); v {
		case "":
		case "-":
			lines = append(lines, "need "+k.key)
		default:
			lines = append(lines, "need "+k.key+" "+v)
		}
	}
	group(lines)
	lines = nil
	for _, n := range s.Notes {
		lines = append(lines, "note "+n)
	}
	group(lines)
	lines = nil
	for _, name := range familyOrder() {
		if p, ok := s.Predictions[name]; ok {
			lines = append(lines, "predict "+name+" "+p)
		}
	}
	group(lines)
	lines = nil
	for _, v := range Variants {
		for _, f := range Families {
			if p, ok := s.On[v.Name][f.Name]; ok {
				lines = append(lines, "predict-on "+v.Name+" "+f.Name+" "+p)
			}
		}
	}
	group(lines)
	_, err := w.Write(b.Bytes())
	return err
}

// validate checks what Write would write, so that what it writes reads back.
func (s *Scenario) validate() error {
	switch {
	case !reName.MatchString(s.Config) || !reName.MatchString(s.Invariant):
		return fmt.Errorf("config %q, invariant %q: want names such as SeedGap and NoGap", s.Config, s.Invariant)
	case s.Name != s.Config+"."+s.Invariant:
		return fmt.Errorf("the name must be %s.%s", s.Config, s.Invariant)
	case len(s.Steps) == 0:
		return errors.New("no step")
	}
	if _, err := tlc.ParseOutcome(s.Expect); err != nil {
		return err
	}
	for i, st := range s.Steps {
		if !reName.MatchString(st.Action) || (i > 0 && st.State != s.Steps[i-1].State+1) {
			return fmt.Errorf("step %d %q: want consecutive states and an action name", st.State, st.Action)
		}
		for _, f := range st.Fields {
			if !reField.MatchString(f.Name) {
				return fmt.Errorf("step %d: field %q", st.State, f.Name)
			}
		}
	}
	for _, f := range s.Schedule {
		if !reFault.MatchString(f) {
			return fmt.Errorf("fault %q: want kind:key=value,... with no space", f)
		}
	}
	for _, n := range s.Notes {
		if strings.ContainsAny(n, "\n\r") || strings.TrimSpace(n) != n || n == "" {
			return fmt.Errorf("note %q: want one line, no leading or trailing space", n)
		}
	}
	for name, p := range s.Predictions {
		if _, ok := family(name); !ok {
			return fmt.Errorf("prediction for %q: no such family", name)
		}
		if err := checkPrediction(p); err != nil {
			return err
		}
	}
	for v, ps := range s.On {
		if _, ok := VariantOf(v); !ok {
			return fmt.Errorf("predictions on %q: no such broker variant", v)
		}
		for name, p := range ps {
			if _, ok := family(name); !ok {
				return fmt.Errorf("prediction on %s for %q: no such family", v, name)
			}
			if err := checkPrediction(p); err != nil {
				return err
			}
		}
	}
	return nil
}

var (
	reName  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)
	reField = regexp.MustCompile(`^[a-z][A-Za-z0-9_]*$`)
	reFault = regexp.MustCompile(`^[a-z][a-z-]*(:[^\s]+)?$`)
)

func checkPrediction(p string) error {
	if p == NotModelled {
		return nil
	}
	if _, err := tlc.ParseOutcome(p); err != nil {
		return fmt.Errorf("prediction %q: want pass, invariant:<Name>, liveness, deadlock or %q", p, NotModelled)
	}
	return nil
}

// ReadFile reads the scenario file at path.
func ReadFile(path string) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path)
}

// ReadDir reads every <Name>.scenario file in dir, in name order; each
// file's scenario must be called as the file is.
func ReadDir(dir string) ([]*Scenario, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*"+Ext))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var out []*Scenario
	for _, p := range paths {
		s, err := ReadFile(p)
		if err != nil {
			return nil, err
		}
		if want := strings.TrimSuffix(filepath.Base(p), Ext); s.Name != want {
			return nil, fmt.Errorf("%s:%d: scenario %s in a file named for %s", p, s.nameLine, s.Name, want)
		}
		out = append(out, s)
	}
	return out, nil
}

// maxLine bounds a scenario file's line.
const maxLine = 64 << 10

// Read reads a scenario file from r (called name in errors, which give
// name:line). It is strict: every line is a keyword and its arguments, in
// the order Write writes them; blank lines and lines starting with # are
// skipped. The fault lines are checked for form only; Faults parses them.
func Read(r io.Reader, name string) (*Scenario, error) {
	s := &Scenario{file: name, Predictions: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	seen := map[string]int{} // keyword -> line it was first seen on
	needSeen := map[string]int{}
	rank, n := 0, 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		errf := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", name, n, fmt.Sprintf(format, args...))
		}
		if strings.TrimSpace(line) != line {
			return nil, errf("leading or trailing space")
		}
		word, rest, _ := strings.Cut(line, " ")
		r := keywordRank(word)
		if r < 0 {
			return nil, errf("unknown line %q: want one of %s", abbrev(line), keywordList())
		}
		k := keywords[r]
		if prev, ok := seen[word]; ok && k.once {
			return nil, errf("a second %s line (the first is line %d)", word, prev)
		}
		if r < rank {
			return nil, errf("%s line after a %s line: want the order %s", word, keywords[rank].word, keywordList())
		}
		rank = r
		if _, ok := seen[word]; !ok {
			seen[word] = n
		}
		switch word {
		case "scenario":
			s.Name, s.nameLine = rest, n
		case "config":
			if !reName.MatchString(rest) {
				return nil, errf("config %q: want a configuration name, such as SeedGap", rest)
			}
			s.Config = rest
		case "expect":
			if _, err := tlc.ParseOutcome(rest); err != nil {
				return nil, errf("%v", err)
			}
			s.Expect = rest
		case "violates":
			kind, inv, _ := strings.Cut(rest, " ")
			if (kind != "invariant" && kind != "property") || !reName.MatchString(inv) {
				return nil, errf("violates %q: want invariant <Name> or property <Name>", rest)
			}
			s.Invariant, s.Liveness = inv, kind == "property"
		case "step":
			st, err := readStep(rest)
			if err != nil {
				return nil, errf("%v", err)
			}
			if k := len(s.Steps); k > 0 && st.State != s.Steps[k-1].State+1 {
				return nil, errf("step %d after step %d: want consecutive states", st.State, s.Steps[k-1].State)
			}
			s.Steps = append(s.Steps, st)
		case "loop":
			st, err := strconv.Atoi(rest)
			last := 0
			if k := len(s.Steps); k > 0 {
				last = s.Steps[k-1].State
			}
			if err != nil || st < 1 || st > last {
				return nil, errf("loop %q: want the state (1 to %d) the lasso returns to", rest, last)
			}
			s.Loop = st
		case "stutter":
			if rest != "" {
				return nil, errf("stutter takes no argument")
			}
			if s.Loop != 0 {
				return nil, errf("stutter after loop: a lasso ends one way")
			}
			s.Stutter = true
		case "fault":
			if !reFault.MatchString(rest) {
				return nil, errf("fault %q: want kind:key=value,... with no space (fault.Parse's form)", rest)
			}
			s.Schedule = append(s.Schedule, rest)
			s.faultLines = append(s.faultLines, n)
		case "need":
			key, val, _ := strings.Cut(rest, " ")
			i := slices.IndexFunc(needKeys, func(k needKey) bool { return k.key == key })
			if i < 0 {
				return nil, errf("need %q: want one of %s", key, needList())
			}
			if prev, ok := needSeen[key]; ok {
				return nil, errf("a second need %s (the first is line %d)", key, prev)
			}
			needSeen[key] = n
			if err := needKeys[i].set(&s.Needs, val); err != nil {
				return nil, errf("need %s: %v (%s)", key, err, needKeys[i].usage)
			}
		case "note":
			if rest == "" {
				return nil, errf("an empty note")
			}
			s.Notes = append(s.Notes, rest)
		case "predict":
			fam, p, _ := strings.Cut(rest, " ")
			if _, ok := family(fam); !ok {
				return nil, errf("predict %q: no such family (want one of %s)", fam, familyList())
			}
			if _, ok := s.Predictions[fam]; ok {
				return nil, errf("a second prediction for %s", fam)
			}
			if err := checkPrediction(p); err != nil {
				return nil, errf("%v", err)
			}
			s.Predictions[fam] = p
		case "predict-on":
			v, r, _ := strings.Cut(rest, " ")
			fam, p, _ := strings.Cut(r, " ")
			if _, ok := VariantOf(v); !ok {
				return nil, errf("predict-on %q: no such broker variant (want one of %s)", v, variantList())
			}
			if _, ok := family(fam); !ok {
				return nil, errf("predict-on %s %q: no such family (want one of %s)", v, fam, familyList())
			}
			if _, ok := s.On[v][fam]; ok {
				return nil, errf("a second prediction on %s for %s", v, fam)
			}
			if err := checkPrediction(p); err != nil {
				return nil, errf("%v", err)
			}
			if s.On == nil {
				s.On = map[string]map[string]string{}
			}
			if s.On[v] == nil {
				s.On[v] = map[string]string{}
			}
			s.On[v][fam] = p
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: a line longer than %d bytes", name, n+1, maxLine)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, k := range keywords {
		if _, ok := seen[k.word]; k.need && !ok {
			return nil, fmt.Errorf("%s:%d: no %s line", name, n, k.word)
		}
	}
	if want := s.Config + "." + s.Invariant; s.Name != want {
		return nil, fmt.Errorf("%s:%d: scenario %q: want %s (config and violates say so)", name, s.nameLine, s.Name, want)
	}
	return s, nil
}

// readStep reads "<state> <Action> name=value ...".
func readStep(rest string) (Step, error) {
	num, rest, _ := strings.Cut(rest, " ")
	state, err := strconv.Atoi(num)
	if err != nil || state < 1 {
		return Step{}, fmt.Errorf("step %q: want its state number, then the action", num)
	}
	action, rest, _ := strings.Cut(rest, " ")
	if !reName.MatchString(action) {
		return Step{}, fmt.Errorf("step %d: action %q: want a spec action's name", state, action)
	}
	st := Step{State: state, Action: action}
	for rest != "" {
		var name, val string
		var ok bool
		name, rest, ok = strings.Cut(rest, "=")
		if !ok || !reField.MatchString(name) {
			return Step{}, fmt.Errorf("step %d: %q: want name=value", state, abbrev(name))
		}
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return Step{}, fmt.Errorf("step %d: %s: an unterminated quoted value", state, name)
			}
			val, _ = strconv.Unquote(q)
			rest = rest[len(q):]
			if rest != "" && rest[0] != ' ' {
				return Step{}, fmt.Errorf("step %d: %s: want a space after the quoted value", state, name)
			}
			rest = strings.TrimPrefix(rest, " ")
		} else {
			val, rest, _ = strings.Cut(rest, " ")
			if val == "" {
				return Step{}, fmt.Errorf("step %d: %s: an empty value", state, name)
			}
		}
		if slices.ContainsFunc(st.Fields, func(f Field) bool { return f.Name == name }) {
			return Step{}, fmt.Errorf("step %d: field %s twice", state, name)
		}
		st.Fields = append(st.Fields, Field{name, val})
	}
	return st, nil
}

func keywordList() string {
	var ws []string
	for _, k := range keywords {
		ws = append(ws, k.word)
	}
	return strings.Join(ws, ", ")
}

func needList() string {
	var ks []string
	for _, k := range needKeys {
		ks = append(ks, k.key)
	}
	return strings.Join(ks, ", ")
}

func familyList() string {
	return strings.Join(familyOrder(), ", ")
}

func variantList() string {
	var vs []string
	for _, v := range Variants {
		vs = append(vs, v.Name)
	}
	return strings.Join(vs, ", ")
}
