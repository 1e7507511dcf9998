package scenario

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kcheck/kcheck/fault"
)

// Every fault line of the committed scenarios parses with fault.Parse.
//
// The schedules use keys that branch schedule-kinds adds to the fault
// language (epoch, try, idle, until=seq:K, cut, until on more than reject).
// On a base without them, the test tells those refusals from any other
// error: it skips, naming the missing keys, when they are all a line's
// parse fails on, and fails otherwise.
func TestScheduleLinesParse(t *testing.T) {
	ss, err := ReadDir("../spec/scenarios")
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) == 0 {
		t.Fatal("no scenario in spec/scenarios")
	}
	missing := map[string]bool{}
	lines := 0
	for _, s := range ss {
		for i, line := range s.Schedule {
			lines++
			if _, err := fault.Parse(line); err == nil {
				continue
			}
			keys, err := missingKeys(line)
			if err != nil {
				t.Errorf("%s: %v", s.faultPos(i), err)
				continue
			}
			for _, k := range keys {
				missing[k] = true
			}
		}
	}
	if len(missing) > 0 && !t.Failed() {
		var ks []string
		for k := range missing {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		t.Skipf("fault.Parse on this base lacks %s (branch schedule-kinds): every other part of the %d fault lines parses", strings.Join(ks, ", "), lines)
	}
}

var (
	reUnknownParam = regexp.MustCompile(`: ([a-z]+): unknown parameter`)
	reUnknownKind  = regexp.MustCompile(`^unknown fault "([a-z-]+)"`)
	reUntil        = regexp.MustCompile(`: until: "([a-z]+):?[^"]*": the one condition is next`)
	reUntilKind    = regexp.MustCompile(`until=next holds a refused attempt's answer, at most delay=D \(set it\): ([a-z-]+) refuses none`)
)

// missingKeys returns the keys of line that fault.Parse refuses as unknown,
// taking each out in turn until the rest parses; an error if the line fails
// for any other reason.
func missingKeys(line string) ([]string, error) {
	var keys []string
	for range 20 {
		_, err := fault.Parse(line)
		if err == nil {
			return keys, nil
		}
		msg := err.Error()
		switch {
		case reUnknownKind.MatchString(msg):
			return append(keys, "the kind "+reUnknownKind.FindStringSubmatch(msg)[1]), nil
		case reUnknownParam.MatchString(msg):
			k := reUnknownParam.FindStringSubmatch(msg)[1]
			keys = append(keys, k)
			line = dropParam(line, k)
		case reUntil.MatchString(msg):
			keys = append(keys, "until="+reUntil.FindStringSubmatch(msg)[1]+":K")
			line = dropParam(line, "until")
			line = dropParam(line, "delay")
		case reUntilKind.MatchString(msg):
			keys = append(keys, "until on "+reUntilKind.FindStringSubmatch(msg)[1])
			line = dropParam(line, "until")
			line = dropParam(line, "delay")
		default:
			return nil, err
		}
	}
	return nil, errors.New("too many unknown keys")
}

// dropParam removes key=value from a fault line.
func dropParam(line, key string) string {
	kind, params, _ := strings.Cut(line, ":")
	var kept []string
	for _, kv := range strings.Split(params, ",") {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			kept = append(kept, kv)
		}
	}
	if len(kept) == 0 {
		return kind
	}
	return kind + ":" + strings.Join(kept, ",")
}

// The skip is for unknown keys only: a line wrong in another way fails.
func TestMissingKeys(t *testing.T) {
	if _, err := missingKeys("reject:err=NO_SUCH_ERROR,epoch=0,partitions=0"); err == nil {
		t.Errorf("missingKeys of a bad error name: no error")
	}
	keys, err := missingKeys("reject:err=NOT_LEADER_OR_FOLLOWER,partitions=0")
	if err != nil || len(keys) != 0 {
		t.Errorf("missingKeys of a line that parses: %q, %v", keys, err)
	}
}
