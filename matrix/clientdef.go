package matrix

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kcheck/kcheck/builds"
)

// Unknown is the family of a defined client that claims none: each of its
// cells shows every family's prediction, and which families' predictions
// what it did matches (Like).
const Unknown = "unknown"

// A client definition (kcheck scenarios run --client-def FILE;
// drivers/DRIVERS.md) is a text file of lines "KEYWORD VALUE", each of
// name, family and command exactly once; blank lines and lines starting
// with # are skipped:
//
//	# franz-go under another name
//	name    my-kgo
//	family  unknown
//	command ./kcheck-kgo-driver --bootstrap {bootstrap} --topic {topic} {workload}
//
// The command's fields are separated by spaces; a field with a space in it
// is written in double quotes, as a Go string. Its first field is the
// program: a path if it has a / (relative to the definition's directory),
// else a name looked up on $PATH. Its placeholders are {bootstrap} (the
// proxy's address), {topic} (the cell's topic), {workload} (the workload's
// flags, drivers/WORKLOADS.md, each its own argument: a field of its own)
// and {outcomes} (where the client writes its outcomes report,
// drivers/OUTCOMES.md); all but {outcomes} are required.
var placeholders = []string{"bootstrap", "topic", "workload", "outcomes"}

// placeholder is a {name} in a command's field.
var placeholder = regexp.MustCompile(`\{([A-Za-z0-9_.-]+)\}`)

// clientName is what a defined client may be called: it names the client in
// the Markdown, the JSON, file and topic names.
var clientName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ReadClientDefs reads the client definitions at paths, in order. families
// are the family names a definition may claim (besides Unknown). A
// definition that does not parse, names a family not in families, a
// command that is not there, a placeholder that is not one, or a name
// that is a stock client's, a family's, a buildable client's or an earlier
// definition's is an error naming the file and line.
func ReadClientDefs(paths, families []string) ([]Client, error) {
	var out []Client
	first := map[string]string{} // name → where an earlier definition gave it
	for _, path := range paths {
		c, nameAt, err := readClientDef(path, families)
		if err != nil {
			return nil, err
		}
		if at, ok := first[c.Name]; ok {
			return nil, fmt.Errorf("%s: name %s: %s already defines a client so named", nameAt, c.Name, at)
		}
		first[c.Name] = nameAt
		out = append(out, c)
	}
	return out, nil
}

// readClientDef reads one definition; nameAt is FILE:LINE of its name.
func readClientDef(path string, families []string) (c Client, nameAt string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return Client{}, "", err
	}
	defer f.Close()
	at := func(n int) string { return fmt.Sprintf("%s:%d", path, n) }
	lines := map[string]int{}     // keyword → its line
	values := map[string]string{} // keyword → its value
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		key, value := l, ""
		if i := strings.IndexAny(l, " \t"); i >= 0 {
			key, value = l[:i], strings.TrimSpace(l[i:])
		}
		switch key {
		case "name", "family", "command":
		default:
			return Client{}, "", fmt.Errorf("%s: unknown keyword %q (want name, family or command)", at(n), key)
		}
		if m, ok := lines[key]; ok {
			return Client{}, "", fmt.Errorf("%s: a second %s line (the first is line %d)", at(n), key, m)
		}
		if value == "" {
			return Client{}, "", fmt.Errorf("%s: %s has no value", at(n), key)
		}
		lines[key], values[key] = n, value
	}
	if err := sc.Err(); err != nil {
		return Client{}, "", fmt.Errorf("%s: %w", path, err)
	}
	for _, k := range []string{"name", "family", "command"} {
		if _, ok := lines[k]; !ok {
			return Client{}, "", fmt.Errorf("%s: no %s line (a definition has name, family and command; drivers/DRIVERS.md)", path, k)
		}
	}
	name, nameAt := values["name"], at(lines["name"])
	if !clientName.MatchString(name) {
		return Client{}, "", fmt.Errorf("%s: name %q: want letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64", nameAt, name)
	}
	if whose := taken(name, families); whose != "" {
		return Client{}, "", fmt.Errorf("%s: name %s is %s: choose another", nameAt, name, whose)
	}
	fam := values["family"]
	if fam != Unknown && !slices.Contains(families, fam) {
		return Client{}, "", fmt.Errorf("%s: unknown family %q (known: %s, or %s)", at(lines["family"]), fam, strings.Join(families, ", "), Unknown)
	}
	argv, err := parseCommand(values["command"], filepath.Dir(path))
	if err != nil {
		return Client{}, "", fmt.Errorf("%s: command: %w", at(lines["command"]), err)
	}
	return Client{Name: name, Def: path, fam: fam,
		prepare: func(context.Context, *Env) ([]string, error) { return argv, nil }}, nameAt, nil
}

// taken says whose name name is, if it is taken: a stock client's, a
// buildable client's (NAME@VERSION), a family's; "" if none.
func taken(name string, families []string) string {
	switch {
	case slices.Contains(ClientNames(), name):
		return "a stock client's"
	case slices.Contains(builds.Clients(), name):
		return "a stock client's, of which builds are made (" + name + "@VERSION)"
	case slices.Contains(families, name) || name == Unknown:
		return "a family's"
	}
	return ""
}

// parseCommand splits a definition's command into its fields, checks its
// placeholders and finds its program (relative to dir if a relative path),
// returning the template with the program's absolute path first.
func parseCommand(s, dir string) ([]string, error) {
	fields, err := splitFields(s)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, f := range fields {
		for _, m := range placeholder.FindAllStringSubmatch(f, -1) {
			if !slices.Contains(placeholders, m[1]) {
				return nil, fmt.Errorf("unknown placeholder %s (known: {%s})", m[0], strings.Join(placeholders, "} {"))
			}
			if i == 0 {
				return nil, fmt.Errorf("the program, %q, cannot be a placeholder", f)
			}
			if m[1] == "workload" && f != m[0] {
				return nil, fmt.Errorf("{workload} stands for several arguments: it must be a field of its own, not part of %q", f)
			}
			seen[m[1]] = true
		}
	}
	for _, need := range []string{"bootstrap", "topic", "workload"} {
		if !seen[need] {
			return nil, fmt.Errorf("no {%s}: the client must be given it (drivers/DRIVERS.md)", need)
		}
	}
	prog, err := findProgram(fields[0], dir)
	if err != nil {
		return nil, err
	}
	fields[0] = prog
	return fields, nil
}

// splitFields splits s at spaces and tabs; a field that starts with a
// double quote is a Go string literal, and must end at a space or the end.
func splitFields(s string) ([]string, error) {
	var out []string
	for s = strings.TrimLeft(s, " \t"); s != ""; s = strings.TrimLeft(s, " \t") {
		if s[0] != '"' {
			end := strings.IndexAny(s, " \t")
			if end < 0 {
				end = len(s)
			}
			if strings.Contains(s[:end], `"`) {
				return nil, fmt.Errorf("a double quote may only start a field (a quoted field is a Go string): %s", s[:end])
			}
			out = append(out, s[:end])
			s = s[end:]
			continue
		}
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return nil, fmt.Errorf("a quoted field (a Go string) that does not end, or has a bad escape: %s", s)
		}
		rest := s[len(q):]
		if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
			return nil, fmt.Errorf("a quoted field must end at a space: %s", s)
		}
		v, _ := strconv.Unquote(q)
		out = append(out, v)
		s = rest
	}
	return out, nil
}

// findProgram returns the absolute path of the program prog names: a path
// if it has a / (relative to dir), else looked up on $PATH. It must be an
// executable file.
func findProgram(prog, dir string) (string, error) {
	if !strings.Contains(prog, "/") {
		p, err := exec.LookPath(prog)
		if err != nil {
			return "", fmt.Errorf("program %q: not found on $PATH (give a path, with a /, to run a file)", prog)
		}
		return filepath.Abs(p)
	}
	p := prog
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	where := ""
	if p != prog {
		where = " (" + p + ")"
	}
	st, err := os.Stat(p)
	switch {
	case os.IsNotExist(err):
		return "", fmt.Errorf("program %s%s: no such file", prog, where)
	case err != nil:
		return "", fmt.Errorf("program %s: %w", prog, err)
	case st.IsDir():
		return "", fmt.Errorf("program %s%s: is a directory", prog, where)
	case st.Mode()&0o111 == 0:
		return "", fmt.Errorf("program %s%s: not executable", prog, where)
	}
	return filepath.Abs(p)
}

// expand fills in a defined client's template for one cell: {topic} in
// every field, {workload} replaced by the workload's flags. {bootstrap} and
// {outcomes} are left to kcheck proxy, which knows them.
func expand(template []string, topic string, workload []string) []string {
	var out []string
	for _, f := range template {
		if f == "{workload}" {
			out = append(out, workload...)
			continue
		}
		out = append(out, strings.ReplaceAll(f, "{topic}", topic))
	}
	return out
}
