package tlc

import (
	"strings"
)

// TLC lays values out for a width of 80 columns starting at column 0, which
// makes records of a few fields take a line per field. WriteTrace lays them
// out again: a value is printed on one line if it fits, and otherwise each
// element of a sequence, set, record or function goes on its own line, laid
// out in turn the same way.

// An elem is an element of a value: an atom (a number, a string, a name, an
// operator such as |-> or :>) or a bracketed list of items.
type elem struct {
	atom string
	list *list
}

// A list is a bracketed, comma-separated list of items, each a sequence of
// elements: <<1, 2>>, [a |-> 1], {x}, (p1 :> 1 @@ p2 :> 2).
type list struct {
	open, close string
	items       [][]elem
}

var closers = map[string]string{"<<": ">>", "[": "]", "(": ")", "{": "}"}

// parseValue parses a value printed by TLC into its elements. It reports
// false if the brackets do not balance.
func parseValue(v string) ([]elem, bool) {
	p := valueParser{s: v}
	item, ok := p.item("")
	return item, ok && p.i == len(p.s)
}

type valueParser struct {
	s string
	i int
}

// item parses elements up to a comma or the closing bracket close, which it
// leaves unread.
func (p *valueParser) item(close string) ([]elem, bool) {
	var item []elem
	for {
		p.space()
		if p.i == len(p.s) {
			return item, close == ""
		}
		rest := p.s[p.i:]
		if rest[0] == ',' || (close != "" && strings.HasPrefix(rest, close)) {
			return item, close != ""
		}
		if open := opener(rest); open != "" {
			p.i += len(open)
			l, ok := p.list(open)
			if !ok {
				return nil, false
			}
			item = append(item, elem{list: l})
			continue
		}
		if strings.HasPrefix(rest, ">>") || strings.ContainsRune("])}", rune(rest[0])) {
			return nil, false // a closer that closes nothing
		}
		item = append(item, elem{atom: p.atom()})
	}
}

// list parses the items of a list whose opening bracket has been read, and
// its closing bracket.
func (p *valueParser) list(open string) (*list, bool) {
	l := &list{open: open, close: closers[open]}
	for {
		p.space()
		if strings.HasPrefix(p.s[p.i:], l.close) {
			p.i += len(l.close)
			return l, true
		}
		item, ok := p.item(l.close)
		if !ok {
			return nil, false
		}
		l.items = append(l.items, item)
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
		}
	}
}

func opener(s string) string {
	if strings.HasPrefix(s, "<<") {
		return "<<"
	}
	if strings.ContainsRune("[({", rune(s[0])) {
		return s[:1]
	}
	return ""
}

func (p *valueParser) space() {
	for p.i < len(p.s) && strings.ContainsRune(" \t\r\n", rune(p.s[p.i])) {
		p.i++
	}
}

// atom reads a string literal or a run of other characters up to a space,
// comma or bracket.
func (p *valueParser) atom() string {
	start := p.i
	if p.s[p.i] == '"' {
		for p.i++; p.i < len(p.s); p.i++ {
			if p.s[p.i] == '\\' {
				p.i++
			} else if p.s[p.i] == '"' {
				p.i++
				break
			}
		}
		return p.s[start:min(p.i, len(p.s))]
	}
	for p.i < len(p.s) {
		rest := p.s[p.i:]
		if strings.ContainsRune(" \t\r\n,[](){}", rune(rest[0])) ||
			strings.HasPrefix(rest, "<<") || strings.HasPrefix(rest, ">>") {
			break
		}
		p.i++
	}
	return p.s[start:p.i]
}

func (l *list) flat() string {
	var b strings.Builder
	b.WriteString(l.open)
	for i, item := range l.items {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(flatItem(item))
	}
	b.WriteString(l.close)
	return b.String()
}

func flatItem(item []elem) string {
	var b strings.Builder
	for i, e := range item {
		if i > 0 {
			b.WriteByte(' ')
		}
		if e.list != nil {
			b.WriteString(e.list.flat())
		} else {
			b.WriteString(e.atom)
		}
	}
	return b.String()
}

// flatten returns v on one line, the way TLC prints a short value:
// "[ a |-> 1,\n  b |-> 2 ]" becomes "[a |-> 1, b |-> 2]". A value it cannot
// parse is returned unchanged.
func flatten(v string) string {
	if !strings.Contains(v, "\n") {
		return v
	}
	item, ok := parseValue(v)
	if !ok {
		return v
	}
	return flatItem(item)
}

// layout lays v out for a line of width columns, v starting in column col.
// Like TLC, it indents continuation lines as if v started in column 0.
func layout(v string, col, width int) string {
	item, ok := parseValue(v)
	if !ok {
		return v
	}
	w := layoutWriter{width: width}
	w.item(item, col)
	return strings.ReplaceAll(w.b.String(), "\n"+strings.Repeat(" ", col), "\n")
}

type layoutWriter struct {
	b     strings.Builder
	width int
}

// item writes item starting at column col and returns the column it ends in.
// An item that does not fit is broken before each "@@" of a function.
func (w *layoutWriter) item(item []elem, col int) int {
	if flat := flatItem(item); col+len(flat) <= w.width {
		w.b.WriteString(flat)
		return col + len(flat)
	}
	cur := col
	for i, e := range item {
		if i > 0 {
			if e.atom == "@@" {
				w.newline(col)
				cur = col
			} else {
				w.b.WriteByte(' ')
				cur++
			}
		}
		if e.list != nil {
			cur = w.list(e.list, cur)
		} else {
			w.b.WriteString(e.atom)
			cur += len(e.atom)
		}
	}
	return cur
}

// list writes l starting at column col and returns the column it ends in.
// A list that does not fit gets one item a line.
func (w *layoutWriter) list(l *list, col int) int {
	if flat := l.flat(); col+len(flat) <= w.width || len(l.items) == 0 {
		w.b.WriteString(flat)
		return col + len(flat)
	}
	w.b.WriteString(l.open + " ")
	inner := col + len(l.open) + 1
	cur := inner
	for i, item := range l.items {
		if i > 0 {
			w.b.WriteByte(',')
			w.newline(inner)
		}
		cur = w.item(item, inner)
	}
	w.b.WriteString(" " + l.close)
	return cur + 1 + len(l.close)
}

func (w *layoutWriter) newline(col int) {
	w.b.WriteByte('\n')
	w.b.WriteString(strings.Repeat(" ", col))
}
