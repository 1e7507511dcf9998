// Package intern numbers the strings a checker's records name (error names,
// causes), so each record holds a small number instead of a string.
package intern

// ID is a string's number in its Table; 0 is "".
type ID int32

// Table numbers strings in the order they are first seen. Its zero value is
// empty and ready to use.
type Table struct {
	all []string // by ID; all[0] is ""
	of  map[string]ID
}

// ID returns s's number, giving it one if it has none.
func (t *Table) ID(s string) ID {
	if s == "" {
		return 0
	}
	id, ok := t.of[s]
	if !ok {
		if t.of == nil {
			t.of = map[string]ID{}
			t.all = []string{""}
		}
		id = ID(len(t.all))
		t.all = append(t.all, s)
		t.of[s] = id
	}
	return id
}

// String returns the string id stands for.
func (t *Table) String(id ID) string {
	if id == 0 {
		return ""
	}
	return t.all[id]
}

// All returns every string by its ID (nil while the table is empty, when
// only ID 0 exists). The caller must not change it.
func (t *Table) All() []string { return t.all }
