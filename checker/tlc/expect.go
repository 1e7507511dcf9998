package tlc

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// DefaultModule is the module checked by an expectation that names none.
const DefaultModule = "IdempotentProducer"

// Expectation is one line of an expectations file (spec/expect.tsv): how TLC
// must conclude when checking module Module with configuration Name.cfg.
type Expectation struct {
	Name        string  // configuration: Name.cfg in the spec directory
	Expect      Outcome // never an Error outcome
	Description string  // what the configuration is about
	Module      string  // module to check: Module.tla in the spec directory
	File        string  // the expectations file, for messages
	Line        int     // the line of File
}

// Config returns the configuration file name, Name.cfg.
func (e Expectation) Config() string { return e.Name + ".cfg" }

// ModuleFile returns the module file name, Module.tla.
func (e Expectation) ModuleFile() string { return e.Module + ".tla" }

// Pos returns "file:line", where e was read.
func (e Expectation) Pos() string { return fmt.Sprintf("%s:%d", e.File, e.Line) }

var reIdent = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// ReadExpectations reads the expectations file at path; see
// ParseExpectations.
func ReadExpectations(path string) ([]Expectation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseExpectations(f, path)
}

// ParseExpectations parses an expectations file; name is used in errors.
// Lines are tab-separated fields: name, expect, description and an optional
// module (default DefaultModule). Expect is "pass", "invariant:<Name>",
// "liveness" or "deadlock". Blank lines and lines starting with # are
// ignored. Names must be unique.
func ParseExpectations(r io.Reader, name string) ([]Expectation, error) {
	var exps []Expectation
	seen := make(map[string]int)
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		e, err := parseExpectation(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if prev, ok := seen[e.Name]; ok {
			return nil, fmt.Errorf("%s:%d: %q is already listed on line %d", name, n, e.Name, prev)
		}
		seen[e.Name] = n
		e.File, e.Line = name, n
		exps = append(exps, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return exps, nil
}

func parseExpectation(line string) (Expectation, error) {
	f := strings.Split(line, "\t")
	if len(f) < 3 || len(f) > 4 {
		return Expectation{}, fmt.Errorf("want 3 or 4 tab-separated fields (name, expect, description[, module]), got %d", len(f))
	}
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	e := Expectation{Name: f[0], Description: f[2], Module: DefaultModule}
	if !reIdent.MatchString(e.Name) {
		return e, fmt.Errorf("name %q: want a configuration name, such as happy_path for happy_path.cfg", e.Name)
	}
	o, err := ParseOutcome(f[1])
	if err != nil {
		return e, err
	}
	e.Expect = o
	if e.Description == "" {
		return e, fmt.Errorf("empty description for %q", e.Name)
	}
	if len(f) == 4 {
		e.Module = strings.TrimSuffix(f[3], ".tla")
		if !reTLAIdent.MatchString(e.Module) {
			return e, fmt.Errorf("module %q: want a module name, such as %s", f[3], DefaultModule)
		}
	}
	return e, nil
}

// ParseOutcome parses an expected outcome: "pass", "invariant:<Name>",
// "liveness" or "deadlock".
func ParseOutcome(s string) (Outcome, error) {
	switch kind, name, hasName := strings.Cut(s, ":"); {
	case s == string(Pass), s == string(Liveness), s == string(Deadlock):
		return Outcome{Kind: Kind(s)}, nil
	case kind == string(Invariant) && hasName && reTLAIdent.MatchString(name):
		return Outcome{Kind: Invariant, Name: name}, nil
	}
	return Outcome{}, fmt.Errorf("expect %q: want pass, invariant:<Name>, liveness or deadlock", s)
}

var reTLAIdent = regexp.MustCompile(`^[A-Za-z0-9_]*[A-Za-z][A-Za-z0-9_]*$`)
