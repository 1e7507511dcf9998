package tlc

import (
	"strconv"
	"strings"
)

// A change is one part of a variable that a step changed: the path to it
// from the variable (".st", "[p1][2]", or "" for the whole value) and its new
// value. A partial record lists only the fields that changed, and ends in
// "..." when others did not.
type change struct {
	path  string
	value string
}

// diff returns the parts of a variable's value that differ between old and
// new, as printed by TLC. Records, sequences and functions whose keys are the
// same on both sides are compared key by key, down to the parts that
// changed; two or more changed fields of one record that cannot be taken
// apart further are reported together, as a partial record. A value that does not
// parse, or whose keys differ (a sequence that grew), is reported whole.
func diff(old, new string) []change {
	if old == new {
		return nil
	}
	o, ok1 := parseValue(old)
	n, ok2 := parseValue(new)
	if !ok1 || !ok2 {
		return []change{{"", new}}
	}
	var out []change
	diffItems("", o, n, &out)
	return out
}

func diffItems(path string, old, new []elem, out *[]change) {
	ko, vo, ok1 := entries(old)
	kn, vn, ok2 := entries(new)
	if !ok1 || !ok2 || !sameKeys(ko, kn) {
		*out = append(*out, change{path, flatItem(new)})
		return
	}
	record := new[0].list.open == "["
	var fields []string // a record's changed fields that are reported whole
	var deeper []int    // the keys whose changes are reported by recursion
	for i := range kn {
		if flatItem(vo[i]) == flatItem(vn[i]) {
			continue
		}
		if record && !decomposable(vo[i], vn[i]) {
			fields = append(fields, kn[i]+" |-> "+flatItem(vn[i]))
			continue
		}
		deeper = append(deeper, i)
	}
	switch {
	case len(fields) == 1:
		name, val, _ := strings.Cut(fields[0], " |-> ")
		*out = append(*out, change{path + "." + name, val})
	case len(fields) > 1:
		if len(fields) < len(kn) {
			fields = append(fields, "...")
		}
		*out = append(*out, change{path, "[" + strings.Join(fields, ", ") + "]"})
	}
	for _, i := range deeper {
		diffItems(path+keyPath(new[0].list.open, kn[i]), vo[i], vn[i], out)
	}
}

// decomposable reports whether diffItems would compare old and new key by
// key rather than report new whole.
func decomposable(old, new []elem) bool {
	ko, _, ok1 := entries(old)
	kn, _, ok2 := entries(new)
	return ok1 && ok2 && sameKeys(ko, kn)
}

// keyPath is how key is written after a path into a value that opens with
// open: a record's field as ".f", a sequence's index or a function's argument
// in brackets.
func keyPath(open, key string) string {
	if open == "[" {
		return "." + key
	}
	return "[" + key + "]"
}

// entries takes apart a value that is one record, sequence or function into
// its keys (field names, indexes from 1, arguments) and values. It reports
// false for anything else: atoms, sets, and values of several elements.
func entries(item []elem) (keys []string, vals [][]elem, ok bool) {
	if len(item) != 1 || item[0].list == nil {
		return nil, nil, false
	}
	l := item[0].list
	switch l.open {
	case "[":
		for _, it := range l.items {
			if len(it) < 3 || it[0].list != nil || it[1].atom != "|->" {
				return nil, nil, false
			}
			keys, vals = append(keys, it[0].atom), append(vals, it[2:])
		}
	case "<<":
		for i, it := range l.items {
			keys, vals = append(keys, strconv.Itoa(i+1)), append(vals, it)
		}
	case "(":
		// (k1 :> v1 @@ k2 :> v2): one item, pairs separated by "@@".
		if len(l.items) != 1 {
			return nil, nil, false
		}
		rest := l.items[0]
		for len(rest) > 0 {
			end := len(rest)
			for j, e := range rest {
				if e.list == nil && e.atom == "@@" {
					end = j
					break
				}
			}
			pair := rest[:end]
			if len(pair) < 3 || pair[0].list != nil || pair[1].atom != ":>" {
				return nil, nil, false
			}
			keys, vals = append(keys, pair[0].atom), append(vals, pair[2:])
			if end == len(rest) {
				break
			}
			rest = rest[end+1:]
		}
	default:
		return nil, nil, false
	}
	return keys, vals, true
}

func sameKeys(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
