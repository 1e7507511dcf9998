package tlc

import (
	"reflect"
	"testing"
)

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		want           []change
	}{
		{"same", "(p1 :> 1)", "(p1 :> 1)", nil},
		{"atom", "0", "1", []change{{"", "1"}}},
		{"function argument", "(p1 :> 1 @@ p2 :> 5)", "(p1 :> 1 @@ p2 :> 6)", []change{{"[p2]", "6"}}},
		{"one field", "[a |-> 1, b |-> 2]", "[a |-> 1, b |-> 3]", []change{{".b", "3"}}},
		{"fields together", "[a |-> 1, b |-> 2, c |-> 3]", "[a |-> 0, b |-> 2, c |-> 4]",
			[]change{{"", "[a |-> 0, c |-> 4, ...]"}}},
		{"every field", "[a |-> 1, b |-> <<>>]", "[a |-> 2, b |-> <<7>>]",
			[]change{{"", "[a |-> 2, b |-> <<7>>]"}}},
		{"nested", "(p1 :> <<[st |-> \"unsent\", seq |-> -1], [st |-> \"unsent\", seq |-> -1]>>)",
			"(p1 :> <<[st |-> \"unsent\", seq |-> -1], [st |-> \"sent\", seq |-> 1]>>)",
			[]change{{"[p1][2]", "[st |-> \"sent\", seq |-> 1]"}}},
		{"a record field that is a function", "[ep |-> 0, m |-> (x :> 1 @@ y :> 2)]", "[ep |-> 1, m |-> (x :> 1 @@ y :> 3)]",
			[]change{{".ep", "1"}, {".m[y]", "3"}}},
		{"a sequence that grew", "(0 :> <<1>>)", "(0 :> <<1, 2>>)", []change{{"[0]", "<<1, 2>>"}}},
		{"keys differ", "(a :> 1)", "(b :> 1)", []change{{"", "(b :> 1)"}}},
		{"set", "{1}", "{1, 2}", []change{{"", "{1, 2}"}}},
		{"laid out on lines", "[ a |-> 1,\n  b |-> 2 ]", "[ a |-> 1,\n  b |-> 9 ]", []change{{".b", "9"}}},
		{"unbalanced", "<<1", "<<2", []change{{"", "<<2"}}},
	} {
		if got := diff(tc.old, tc.new); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: diff(%q, %q) = %q, want %q", tc.name, tc.old, tc.new, got, tc.want)
		}
	}
}
