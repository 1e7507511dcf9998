package tracer

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// parseEvent decodes one event line. Event lines are flat JSON objects whose
// values are integers, strings, booleans, arrays of integers and arrays of
// arrays of integers (the read-back); this hand-written decoder for exactly
// that shape is what lets kcheck verify read a million events a second, where
// encoding/json's reflection reads a tenth as many. It is strict: anything
// else is an error naming the key.
func parseEvent(line []byte, e *Event, seen *field) (key string, err error) {
	p := parser{s: line}
	p.ws()
	if !p.eat('{') {
		return "", errors.New("an event is a JSON object: it must start with '{'")
	}
	p.ws()
	if p.eat('}') {
		return "", p.end()
	}
	for {
		p.ws()
		k, err := p.str()
		if err != nil {
			return "", fmt.Errorf("reading a key: %w", err)
		}
		p.ws()
		if !p.eat(':') {
			return k, errors.New("expected ':' after the key")
		}
		p.ws()
		if err := p.field(k, e, seen); err != nil {
			return k, err
		}
		p.ws()
		if p.eat(',') {
			continue
		}
		if p.eat('}') {
			return "", p.end()
		}
		return k, fmt.Errorf("expected ',' or '}' at column %d", p.i+1)
	}
}

type parser struct {
	s []byte
	i int
}

func (p *parser) ws() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *parser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *parser) end() error {
	p.ws()
	if p.i != len(p.s) {
		return fmt.Errorf("unexpected text after the object at column %d", p.i+1)
	}
	return nil
}

// str reads a JSON string.
func (p *parser) str() (string, error) {
	if !p.eat('"') {
		return "", fmt.Errorf("expected a string at column %d", p.i+1)
	}
	start := p.i
	escaped := false
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == '\\':
			escaped = true
			p.i += 2
			continue
		case c == '"':
			raw := p.s[start:p.i]
			p.i++
			if !escaped {
				if s, ok := interned[string(raw)]; ok { // no allocation
					return s, nil
				}
				return string(raw), nil
			}
			s, err := strconv.Unquote(`"` + string(raw) + `"`)
			if err != nil {
				return "", fmt.Errorf("bad escape in string: %w", err)
			}
			return s, nil
		case c < 0x20:
			return "", errors.New("control character in string")
		}
		p.i++
	}
	return "", errors.New("unterminated string")
}

// int reads a JSON integer of at most bits bits.
func (p *parser) int(bits int) (int64, error) {
	start := p.i
	neg := p.i < len(p.s) && p.s[p.i] == '-'
	if neg {
		p.i++
	}
	digits := p.i
	var v uint64
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		if v > (1<<63)/10 {
			return 0, fmt.Errorf("integer out of range at column %d", start+1)
		}
		v = v*10 + uint64(p.s[p.i]-'0')
		p.i++
	}
	limit := uint64(1) << (bits - 1) // |min| of a bits-bit integer; max is one less
	switch {
	case p.i == digits:
		return 0, fmt.Errorf("expected an integer at column %d", start+1)
	case p.s[digits] == '0' && p.i-digits > 1:
		return 0, fmt.Errorf("leading zero in an integer at column %d", start+1)
	case neg && v > limit, !neg && v >= limit:
		return 0, fmt.Errorf("expected an integer of %d bits at column %d", bits, start+1)
	}
	if neg {
		return -int64(v), nil
	}
	return int64(v), nil
}

func (p *parser) bool() (bool, error) {
	switch {
	case len(p.s)-p.i >= 4 && string(p.s[p.i:p.i+4]) == "true":
		p.i += 4
		return true, nil
	case len(p.s)-p.i >= 5 && string(p.s[p.i:p.i+5]) == "false":
		p.i += 5
		return false, nil
	}
	return false, fmt.Errorf("expected true or false at column %d", p.i+1)
}

// ints reads an array of integers.
func (p *parser) ints(dst []int64) ([]int64, error) {
	if !p.eat('[') {
		return nil, fmt.Errorf("expected an array at column %d", p.i+1)
	}
	p.ws()
	if p.eat(']') {
		return dst, nil
	}
	for {
		p.ws()
		v, err := p.int(64)
		if err != nil {
			return nil, err
		}
		dst = append(dst, v)
		p.ws()
		if p.eat(',') {
			continue
		}
		if p.eat(']') {
			return dst, nil
		}
		return nil, fmt.Errorf("expected ',' or ']' at column %d", p.i+1)
	}
}

// records reads the read-back: an array of [offset, pid, epoch, seq, id].
func (p *parser) records() ([]LogRecord, error) {
	if !p.eat('[') {
		return nil, fmt.Errorf("expected an array at column %d", p.i+1)
	}
	// One allocation: every record is a '[' of its own.
	out := make([]LogRecord, 0, max(bytes.Count(p.s[p.i:], []byte{'['}), 0))
	p.ws()
	if p.eat(']') {
		return out, nil
	}
	var buf [8]int64
	for {
		p.ws()
		r, err := p.ints(buf[:0])
		if err != nil {
			return nil, err
		}
		if len(r) != 5 {
			return nil, fmt.Errorf("a read-back record has 5 numbers [offset, pid, epoch, seq, id], not %d", len(r))
		}
		if r[2] < -1<<15 || r[2] >= 1<<15 || r[3] < -1<<31 || r[3] >= 1<<31 {
			return nil, errors.New("a read-back record's epoch or sequence is out of range")
		}
		out = append(out, LogRecord{Offset: r[0], PID: r[1], Epoch: int16(r[2]), Seq: int32(r[3]), ID: r[4]})
		p.ws()
		if p.eat(',') {
			continue
		}
		if p.eat(']') {
			return out, nil
		}
		return nil, fmt.Errorf("expected ',' or ']' at column %d", p.i+1)
	}
}

// interned are the strings most lines repeat: keys, kinds, error names.
var interned = func() map[string]string {
	m := map[string]string{}
	for _, fn := range fieldNames {
		m[fn.name] = fn.name
	}
	for _, k := range Kinds() {
		m[string(k)] = string(k)
	}
	for _, s := range []string{"i", "t", "ev", "NONE", "OUT_OF_ORDER_SEQUENCE_NUMBER", "NOT_LEADER_OR_FOLLOWER",
		"NOT_ENOUGH_REPLICAS", "REQUEST_TIMED_OUT", "DUPLICATE_SEQUENCE_NUMBER", "UNKNOWN_PRODUCER_ID",
		"RejectBeforeAppend", "AppendThenFail", "DropConnection", "TimeoutBeforeAppend", "ExpireProducerState"} {
		m[s] = s
	}
	return m
}()

// Fields i, t and ev, which every event has, beside the kind-specific ones.
const (
	fI field = 1 << (iota + 24)
	fT
	fKind
)

// field decodes the value of key k into e, marking it in seen and refusing
// duplicates and unknown keys.
func (p *parser) field(k string, e *Event, seen *field) error {
	bit, ok := keyBits[k]
	if !ok {
		return fmt.Errorf("unknown field %q", k)
	}
	if *seen&bit != 0 {
		return errors.New("appears twice")
	}
	*seen |= bit
	var err error
	var v int64
	switch bit {
	case fI:
		e.I, err = p.int(64)
	case fT:
		e.T, err = p.int(64)
	case fKind:
		var s string
		s, err = p.str()
		e.Kind = Kind(s)
	case fPartition:
		v, err = p.int(32)
		e.Partition = int32(v)
	case fBatch:
		e.Batch, err = p.int(64)
	case fPID:
		e.PID, err = p.int(64)
	case fEpoch:
		v, err = p.int(16)
		e.Epoch = int16(v)
	case fSeq:
		v, err = p.int(32)
		e.Seq = int32(v)
	case fN:
		v, err = p.int(32)
		e.N = int32(v)
	case fReq:
		v, err = p.int(32)
		e.Req = int32(v)
	case fNode:
		v, err = p.int(32)
		e.Node = int32(v)
	case fOffset:
		e.Offset, err = p.int(64)
	case fLogStart:
		e.LogStart, err = p.int(64)
	case fErr:
		e.Err, err = p.str()
	case fFault:
		e.Fault, err = p.str()
	case fReason:
		e.Reason, err = p.str()
	case fBumped:
		e.Bumped, err = p.bool()
	case fRecords:
		e.Records, err = p.ints(make([]int64, 0, 16))
	case fLog:
		e.Log, err = p.records()
	}
	return err
}

// keyBits maps each JSON key to its field bit.
var keyBits = func() map[string]field {
	m := map[string]field{"i": fI, "t": fT, "ev": fKind}
	for _, fn := range fieldNames {
		m[fn.name] = fn.f
	}
	return m
}()
