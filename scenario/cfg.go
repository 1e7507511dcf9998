package scenario

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// cfg is a TLC model configuration of the form spec/*.cfg use: a
// SPECIFICATION, CONSTANTS one assignment a line, INVARIANTS and PROPERTY
// lists. Other keywords are refused, so that a generated configuration
// never silently drops part of its source.
type cfg struct {
	spec       string
	constants  []cfgConstant
	invariants []string
	properties []string
}

type cfgConstant struct {
	name, op, value string // op is "=" or "<-"
}

var (
	reCfgKeyword  = regexp.MustCompile(`^(SPECIFICATION|CONSTANTS?|INVARIANTS?|PROPERTY|PROPERTIES)\b\s*(.*)$`)
	reCfgConstant = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*(=|<-)\s*(\S.*)$`)
	reCfgOther    = regexp.MustCompile(`^(INIT|NEXT|SYMMETRY|CONSTRAINTS?|ACTION_CONSTRAINTS?|VIEW|CHECK_DEADLOCK|POSTCONDITION|ALIAS)\b`)
)

// parseCfg parses a configuration's text; name is used in errors
// (name:line).
func parseCfg(text, name string) (*cfg, error) {
	c := &cfg{}
	section := ""
	for n, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, `\*`); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		errf := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", name, n+1, fmt.Sprintf(format, args...))
		}
		if strings.Contains(line, "(*") {
			return nil, errf("block comments are not supported here")
		}
		if reCfgOther.MatchString(line) {
			return nil, errf("%q: scenario derivation supports SPECIFICATION, CONSTANTS, INVARIANTS and PROPERTY only", strings.Fields(line)[0])
		}
		rest := line
		if m := reCfgKeyword.FindStringSubmatch(line); m != nil {
			section, rest = m[1], m[2]
			if section == "SPECIFICATION" {
				if c.spec != "" || !reName.MatchString(rest) {
					return nil, errf("SPECIFICATION %q: want one, naming the spec's formula", rest)
				}
				c.spec, rest = rest, ""
			}
			if rest == "" {
				continue
			}
		}
		switch section {
		case "CONSTANT", "CONSTANTS":
			m := reCfgConstant.FindStringSubmatch(rest)
			if m == nil {
				return nil, errf("%q: want one constant a line, Name = value or Name <- Op", rest)
			}
			if c.constant(m[1]) >= 0 {
				return nil, errf("constant %s assigned twice", m[1])
			}
			c.constants = append(c.constants, cfgConstant{m[1], m[2], strings.TrimSpace(m[3])})
		case "INVARIANT", "INVARIANTS":
			c.invariants = append(c.invariants, strings.Fields(rest)...)
		case "PROPERTY", "PROPERTIES":
			c.properties = append(c.properties, strings.Fields(rest)...)
		default:
			return nil, errf("%q outside any section", rest)
		}
	}
	if c.spec == "" {
		return nil, fmt.Errorf("%s: no SPECIFICATION", name)
	}
	for _, id := range append(slices.Clone(c.invariants), c.properties...) {
		if !reName.MatchString(id) {
			return nil, fmt.Errorf("%s: %q is not an operator name", name, id)
		}
	}
	return c, nil
}

func (c *cfg) constant(name string) int {
	return slices.IndexFunc(c.constants, func(k cfgConstant) bool { return k.name == name })
}

// get returns the value of constant name, or "".
func (c *cfg) get(name string) string {
	if i := c.constant(name); i >= 0 {
		return c.constants[i].value
	}
	return ""
}

// with returns a copy of c with the constants set (added after the others
// when c has no value for one).
func (c *cfg) with(set ...Constant) *cfg {
	d := &cfg{spec: c.spec, constants: slices.Clone(c.constants), invariants: c.invariants, properties: c.properties}
	for _, k := range set {
		if i := d.constant(k.Name); i >= 0 {
			d.constants[i].op, d.constants[i].value = "=", k.Value
		} else {
			d.constants = append(d.constants, cfgConstant{k.Name, "=", k.Value})
		}
	}
	return d
}

// checking returns a copy of c that checks only the invariants and
// properties given.
func (c *cfg) checking(invariants, properties []string) *cfg {
	return &cfg{spec: c.spec, constants: c.constants, invariants: invariants, properties: properties}
}

// text writes c as a .cfg file.
func (c *cfg) text(comment string) string {
	var b strings.Builder
	if comment != "" {
		fmt.Fprintf(&b, "\\* %s\n", comment)
	}
	fmt.Fprintf(&b, "SPECIFICATION %s\nCONSTANTS\n", c.spec)
	for _, k := range c.constants {
		fmt.Fprintf(&b, "    %s %s %s\n", k.name, k.op, k.value)
	}
	if len(c.invariants) > 0 {
		fmt.Fprintf(&b, "INVARIANTS %s\n", strings.Join(c.invariants, " "))
	}
	if len(c.properties) > 0 {
		fmt.Fprintf(&b, "PROPERTY %s\n", strings.Join(c.properties, " "))
	}
	return b.String()
}

// moduleConstants returns the constants a TLA+ module declares (in its
// CONSTANT or CONSTANTS statements).
func moduleConstants(text string) []string {
	text = stripComments(text)
	var out []string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		f := strings.Fields(lines[i])
		if len(f) == 0 || (f[0] != "CONSTANT" && f[0] != "CONSTANTS") {
			continue
		}
		// The declaration runs on while its items end with a comma.
		decl := strings.Join(f[1:], " ")
		for strings.HasSuffix(strings.TrimSpace(decl), ",") || strings.TrimSpace(decl) == "" {
			i++
			if i >= len(lines) {
				break
			}
			decl += " " + strings.TrimSpace(lines[i])
		}
		for _, item := range strings.Split(decl, ",") {
			item = strings.TrimSpace(item)
			if j := strings.IndexAny(item, "( "); j >= 0 {
				item = item[:j] // an operator constant, Op(_, _)
			}
			if reName.MatchString(item) {
				out = append(out, item)
			}
		}
	}
	return out
}

// stripComments removes \* line comments and (* block comments *).
func stripComments(text string) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(text); i++ {
		switch {
		case strings.HasPrefix(text[i:], "(*"):
			depth++
			i++
		case depth > 0 && strings.HasPrefix(text[i:], "*)"):
			depth--
			i++
		case depth > 0:
			if text[i] == '\n' {
				b.WriteByte('\n')
			}
		case strings.HasPrefix(text[i:], `\*`):
			for i < len(text) && text[i] != '\n' {
				i++
			}
			if i < len(text) {
				b.WriteByte('\n')
			}
		default:
			b.WriteByte(text[i])
		}
	}
	return b.String()
}
