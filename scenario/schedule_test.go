package scenario

import (
	"testing"

	"github.com/kcheck/kcheck/fault"
)

// Every fault line of the committed scenarios parses with fault.Parse, and
// reads back as it is written.
func TestScheduleLinesParse(t *testing.T) {
	ss, err := ReadDir("../spec/scenarios")
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) == 0 {
		t.Fatal("no scenario in spec/scenarios")
	}
	for _, s := range ss {
		fs, err := s.Faults()
		if err != nil {
			t.Error(err)
			continue
		}
		for i, f := range fs {
			again, err := fault.Parse(f.String())
			if err != nil || again.String() != f.String() {
				t.Errorf("%s: %s is %s, which reads back as %s (%v)", s.faultPos(i), s.Schedule[i], f, again, err)
			}
		}
	}
}
