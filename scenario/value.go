package scenario

import (
	"fmt"
	"strings"
)

// A value is a TLA+ value as TLC prints it, taken apart: an atom (a number,
// a string with its quotes, a name such as p1 or TRUE), a record
// [f |-> v, ...], a sequence <<v, ...>>, a set {v, ...} or a function
// (k :> v @@ ...). Records and functions keep their keys, as printed, in
// Keys beside Elems.
type value struct {
	kind  byte // 'a' atom, 'r' record, 's' sequence, 'S' set, 'f' function
	atom  string
	keys  []string
	elems []value
}

// get returns a record's field or a function's value at key.
func (v value) get(key string) (value, bool) {
	if v.kind != 'r' && v.kind != 'f' {
		return value{}, false
	}
	for i, k := range v.keys {
		if k == key {
			return v.elems[i], true
		}
	}
	return value{}, false
}

// text returns an atom's text, a string without its quotes.
func (v value) text() string {
	if len(v.atom) >= 2 && v.atom[0] == '"' && v.atom[len(v.atom)-1] == '"' {
		return v.atom[1 : len(v.atom)-1]
	}
	return v.atom
}

// parseValue parses a value printed by TLC (on one line or several).
func parseValue(s string) (value, error) {
	p := &valueParser{toks: tokenize(s)}
	v, err := p.value()
	if err != nil {
		return value{}, fmt.Errorf("value %q: %w", abbrev(s), err)
	}
	if p.i != len(p.toks) {
		return value{}, fmt.Errorf("value %q: unexpected %q after the value", abbrev(s), p.toks[p.i])
	}
	return v, nil
}

func abbrev(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// tokenize splits a printed value into brackets, separators (",", "|->",
// ":>", "@@"), strings and atoms.
func tokenize(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(s))
			toks = append(toks, s[i:j])
			i = j
		default:
			if t := punct(s[i:]); t != "" {
				toks = append(toks, t)
				i += len(t)
				continue
			}
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\r\n\",", rune(s[j])) && punct(s[j:]) == "" {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks
}

var puncts = []string{"<<", ">>", "|->", ":>", "@@", "[", "]", "{", "}", "(", ")", ","}

func punct(s string) string {
	for _, p := range puncts {
		if strings.HasPrefix(s, p) {
			return p
		}
	}
	return ""
}

type valueParser struct {
	toks []string
	i    int
}

func (p *valueParser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func (p *valueParser) next() string {
	t := p.peek()
	if p.i < len(p.toks) {
		p.i++
	}
	return t
}

func (p *valueParser) expect(t string) error {
	if got := p.next(); got != t {
		if got == "" {
			return fmt.Errorf("want %q, got the end", t)
		}
		return fmt.Errorf("want %q, got %q", t, got)
	}
	return nil
}

func (p *valueParser) value() (value, error) {
	switch t := p.next(); t {
	case "":
		return value{}, fmt.Errorf("want a value, got the end")
	case "<<":
		v := value{kind: 's'}
		return v, p.items(">>", &v, false)
	case "{":
		v := value{kind: 'S'}
		return v, p.items("}", &v, false)
	case "[":
		v := value{kind: 'r'}
		return v, p.items("]", &v, true)
	case "(":
		return p.function()
	default:
		if punct(t) != "" {
			return value{}, fmt.Errorf("unexpected %q", t)
		}
		return value{kind: 'a', atom: t}, nil
	}
}

// items reads comma-separated elements up to close; a record's are
// "name |-> value".
func (p *valueParser) items(close string, v *value, record bool) error {
	if p.peek() == close {
		p.next()
		return nil
	}
	for {
		if record {
			k := p.next()
			if k == "" || punct(k) != "" {
				return fmt.Errorf("want a field name, got %q", k)
			}
			if err := p.expect("|->"); err != nil {
				return err
			}
			v.keys = append(v.keys, k)
		}
		e, err := p.value()
		if err != nil {
			return err
		}
		v.elems = append(v.elems, e)
		switch t := p.next(); t {
		case ",":
		case close:
			return nil
		default:
			return fmt.Errorf("want \",\" or %q, got %q", close, t)
		}
	}
}

// function reads "k :> v @@ k :> v)" after its "(".
func (p *valueParser) function() (value, error) {
	v := value{kind: 'f'}
	for {
		k, err := p.value()
		if err != nil {
			return value{}, err
		}
		if k.kind != 'a' {
			return value{}, fmt.Errorf("a function's argument that is not an atom")
		}
		if err := p.expect(":>"); err != nil {
			return value{}, err
		}
		e, err := p.value()
		if err != nil {
			return value{}, err
		}
		v.keys, v.elems = append(v.keys, k.atom), append(v.elems, e)
		switch t := p.next(); t {
		case "@@":
		case ")":
			return v, nil
		default:
			return value{}, fmt.Errorf("want \"@@\" or \")\", got %q", t)
		}
	}
}
