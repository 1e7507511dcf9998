package tracer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
)

// parseEvent decodes one event line. Event lines are flat JSON objects whose
// values are integers, strings, booleans, arrays of integers and arrays of
// arrays of integers (the read-back); this hand-written decoder for exactly
// that shape is what lets kcheck verify read a million events a second, where
// encoding/json's reflection reads a tenth as many. It is strict: anything
// else is an error naming the key.
//
// It allocates nothing on the common path: keys, kinds and error names come
// from fixed tables, and Records are carved out of mem's slab.
func parseEvent(line []byte, e *Event, seen *field, mem *slabs) (kind int, key string, err error) {
	p := parser{s: line, mem: mem, kind: -1}
	p.ws()
	if !p.eat('{') {
		return -1, "", errors.New("an event is a JSON object: it must start with '{'")
	}
	p.ws()
	if p.eat('}') {
		return -1, "", p.end()
	}
	succ, next := startSucc, int8(0) // the key expected next, in the writer's order
	for {
		p.ws()
		k, colon := -1, false
		if next >= 0 && p.key(int(next)) {
			k = int(next)
			colon = p.eat(':') // as the writer writes it: "key":value
		} else {
			raw, err := p.str()
			if err != nil {
				return p.kind, "", fmt.Errorf("reading a key: %w", err)
			}
			if k = lookupKey(raw); k < 0 {
				key = string(raw)
			}
		}
		if k >= 0 {
			key = keyTable[k].name
		}
		if !colon {
			p.ws()
			if !p.eat(':') {
				return p.kind, key, errors.New("expected ':' after the key")
			}
		}
		p.ws()
		if k < 0 {
			return p.kind, key, fmt.Errorf("unknown field %q", key)
		}
		if err := p.field(keyTable[k].f, e, seen); err != nil {
			return p.kind, key, err
		}
		if keyTable[k].f == fKind && p.kind >= 0 {
			succ = kindTable[p.kind].succ
		}
		next = succ[k]
		p.ws()
		if p.eat(',') {
			continue
		}
		if p.eat('}') {
			return p.kind, "", p.end()
		}
		return p.kind, key, fmt.Errorf("expected ',' or '}' at column %d", p.i+1)
	}
}

// errTooManyRecords is a batch beyond MaxBatchRecords.
var errTooManyRecords = fmt.Errorf("more than %d records, the limit on a batch (tracer/FORMAT.md, Limits)", MaxBatchRecords)

// Slab sizes: how many events, and how many record ids, one allocation holds.
const (
	eventSlab = 256
	intSlab   = 4096
)

// slabs is the memory a Reader decodes events into. Events and record ids are
// handed out from slabs, many to an allocation, and never reused: an event
// and its Records stay valid as long as a caller keeps them, as if each had
// been allocated on its own.
type slabs struct {
	events []Event
	ints   []int64
}

// event returns a zero Event of its own.
func (m *slabs) event() *Event {
	if len(m.events) == 0 {
		m.events = make([]Event, eventSlab)
	}
	e := &m.events[0]
	m.events = m.events[1:]
	return e
}

// ids reads an array of integers into the slab and returns it, with no
// room to grow into its neighbours.
func (m *slabs) ids(p *parser) ([]int64, error) {
	if cap(m.ints)-len(m.ints) < 256 { // room for any usual batch
		m.ints = make([]int64, 0, intSlab)
	}
	free := m.ints[len(m.ints):]
	if rest := p.s[p.i:]; len(rest) > 2*cap(free) { // maybe more ids than room: at least 2 bytes each
		if end := bytes.IndexByte(rest, ']'); end > 2*cap(free) {
			if n := bytes.Count(rest[:end], []byte{','}) + 1; n > cap(free) {
				// A batch too big for the slab: an array of its own, of
				// its size (appending would allocate several times it).
				ids, ok := p.fastInts(make([]int64, 0, min(n, MaxBatchRecords)))
				if !ok {
					var err error
					if ids, err = p.ints(ids[:0]); err != nil {
						return nil, err
					}
				}
				return ids[:len(ids):len(ids)], nil
			}
		}
	}
	ids, ok := p.fastInts(free)
	if !ok {
		var err error
		if ids, err = p.ints(free); err != nil {
			return nil, err
		}
	}
	if len(ids) > cap(free) {
		return ids, nil // a batch too big for the slab: an array of its own
	}
	m.ints = m.ints[:len(m.ints)+len(ids)]
	return ids[:len(ids):len(ids)], nil
}

type parser struct {
	s    []byte
	i    int
	mem  *slabs
	kind int // the event's kind: its index in kindTable, -1 if unknown
}

func (p *parser) ws() {
	for p.i < len(p.s) && p.s[p.i] <= ' ' && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\r') {
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

// key reports whether the key keyTable[k], which needs no escapes, is at
// p.i as a string, and if so moves past it: what str would read, without
// the search.
func (p *parser) key(k int) bool {
	s, i, name := p.s, p.i, keyTable[k].name
	if w := keyWords[k]; w.mask != 0 && len(s)-i >= 8 { // "name" in one load
		if binary.LittleEndian.Uint64(s[i:])&w.mask != w.word {
			return false
		}
	} else if len(s)-i < len(name)+2 || s[i] != '"' || s[i+1+len(name)] != '"' || string(s[i+1:i+1+len(name)]) != name {
		return false
	}
	p.i = i + len(name) + 2
	return true
}

// keyWords are keyTable's keys as quoted strings of at most 8 bytes, read
// little-endian, and the mask of their bytes; mask 0 for longer ones.
var keyWords = func() []struct{ word, mask uint64 } {
	w := make([]struct{ word, mask uint64 }, len(keyTable))
	for k, kt := range keyTable {
		q := `"` + kt.name + `"`
		if len(q) > 8 {
			continue
		}
		var b [8]byte
		copy(b[:], q)
		w[k].word = binary.LittleEndian.Uint64(b[:])
		w[k].mask = 1<<(8*len(q)) - 1
		if len(q) == 8 {
			w[k].mask = ^uint64(0)
		}
	}
	return w
}()

// str reads a JSON string and returns its bytes: a slice of the line when it
// has no escapes, which is every string the writer writes.
func (p *parser) str() ([]byte, error) {
	if !p.eat('"') {
		return nil, fmt.Errorf("expected a string at column %d", p.i+1)
	}
	s, start := p.s, p.i
	for i := start; i < len(s); {
		switch c := s[i]; {
		case c == '"':
			p.i = i + 1
			return s[start:i], nil
		case c == '\\':
			return p.escaped(start)
		case c < 0x20:
			p.i = i
			return nil, errors.New("control character in string")
		}
		i++
	}
	p.i = len(s)
	return nil, errors.New("unterminated string")
}

// escaped finishes reading a string that starts at start and has an escape.
func (p *parser) escaped(start int) ([]byte, error) {
	p.i = start
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == '\\':
			p.i += 2
			continue
		case c == '"':
			raw := p.s[start:p.i]
			p.i++
			s, err := strconv.Unquote(`"` + string(raw) + `"`)
			if err != nil {
				return nil, fmt.Errorf("bad escape in string: %w", err)
			}
			return []byte(s), nil
		case c < 0x20:
			return nil, errors.New("control character in string")
		}
		p.i++
	}
	return nil, errors.New("unterminated string")
}

// text reads a JSON string value, interning the common ones.
func (p *parser) text() (string, error) {
	b, err := p.str()
	if err != nil {
		return "", err
	}
	return intern(b), nil
}

// intern returns b as a string, without allocating when it is one of the
// strings traces repeat (error names, faults, reasons).
func intern(b []byte) string {
	if string(b) == "NONE" {
		return "NONE"
	}
	if s, ok := interned[string(b)]; ok { // no allocation
		return s
	}
	return string(b)
}

// int reads a JSON integer of at most bits bits.
func (p *parser) int(bits int) (int64, error) {
	// The common case, 1 to 15 digits with no sign or leading zero, eight
	// digits at a time.
	s, i := p.s, p.i
	if len(s)-i >= 16 {
		x := binary.LittleEndian.Uint64(s[i:])
		n := digits(x)
		v := uint64(0)
		if n > 0 {
			v = eight(x, n)
		}
		if n == 8 {
			y := binary.LittleEndian.Uint64(s[i+8:])
			m := digits(y)
			if m > 0 {
				v = v*pow10[m] + eight(y, m)
			}
			n += m // 16: too long for this path
		}
		if n > 0 && n < 16 && (n == 1 || s[i] != '0') && v < 1<<(bits-1) {
			p.i = i + n
			return int64(v), nil
		}
	}
	return p.intSlow(bits)
}

// digits returns how many of the bytes of x (eight bytes of the line, read
// little-endian) are ASCII digits before the first that is not.
func digits(x uint64) int {
	// A byte is a digit if its high nibble is 3 and adding 6 leaves it 3.
	// Carries only run towards later bytes, past the first non-digit.
	d := (x & 0xF0F0F0F0F0F0F0F0) | (((x + 0x0606060606060606) & 0xF0F0F0F0F0F0F0F0) >> 4)
	return bits.TrailingZeros64(d^0x3333333333333333) / 8
}

// eight returns the number the first n (1 to 8) bytes of x spell, which are
// digits (Lemire's eight-digit parse, the digits shifted up to the top so
// that the bytes below are leading zeros).
func eight(x uint64, n int) uint64 {
	x = (x - 0x3030303030303030) << (64 - 8*uint(n))
	x = x*10 + x>>8
	return ((x&0x000000FF000000FF)*(100+1000000<<32) + (x>>16&0x000000FF000000FF)*(1+10000<<32)) >> 32
}

var pow10 = [...]uint64{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000}

// intSlow is int for every other case, the errors among them.
func (p *parser) intSlow(bits int) (int64, error) {
	s, start := p.s, p.i
	i := start
	neg := i < len(s) && s[i] == '-'
	if neg {
		i++
	}
	digits := i
	var v uint64
	// 18 digits cannot overflow: the check below is for the 19th on.
	for end := min(len(s), digits+18); i < end; i++ {
		d := s[i] - '0'
		if d > 9 {
			break
		}
		v = v*10 + uint64(d)
	}
	for ; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			break
		}
		if v > (1<<63)/10 {
			p.i = i
			return 0, fmt.Errorf("integer out of range at column %d", start+1)
		}
		v = v*10 + uint64(d)
	}
	p.i = i
	limit := uint64(1) << (bits - 1) // |min| of a bits-bit integer; max is one less
	switch {
	case i == digits:
		return 0, fmt.Errorf("expected an integer at column %d", start+1)
	case s[digits] == '0' && i-digits > 1:
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

// ints reads an array of at most MaxBatchRecords integers, appending them
// to dst, which is empty.
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
		if len(dst) == MaxBatchRecords {
			return nil, errTooManyRecords
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
	// One allocation: every record is a '[' of its own, and takes at least
	// 12 bytes of the line ("[0,0,0,0,0],"), so that what is allocated is
	// never more than the line can hold, whatever it claims.
	out := make([]LogRecord, 0, min(bytes.Count(p.s[p.i:], []byte{'['}), (len(p.s)-p.i)/12+1))
	p.ws()
	if p.eat(']') {
		return out, nil
	}
	for {
		p.ws()
		var r [5]int64
		n, ok := 5, p.fastRecord(&r)
		if !ok {
			var err error
			if n, err = p.record(&r); err != nil {
				return nil, err
			}
		}
		if n != 5 {
			return nil, fmt.Errorf("a read-back record has 5 numbers [offset, pid, epoch, seq, id], not %d", n)
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

// markers reads a read-back's control records: an array of
// [offset, pid, epoch, type], type 1 for a commit and 0 for an abort.
func (p *parser) markers() ([]Marker, error) {
	if !p.eat('[') {
		return nil, fmt.Errorf("expected an array at column %d", p.i+1)
	}
	// Each takes at least 10 bytes of the line ("[0,0,0,0],").
	out := make([]Marker, 0, min(bytes.Count(p.s[p.i:], []byte{'['}), (len(p.s)-p.i)/10+1))
	p.ws()
	if p.eat(']') {
		return out, nil
	}
	for {
		p.ws()
		var r [5]int64
		n, err := p.record(&r)
		if err != nil {
			return nil, err
		}
		if n != 4 {
			return nil, fmt.Errorf("a control record has 4 numbers [offset, pid, epoch, type], not %d", n)
		}
		if r[2] < -1<<15 || r[2] >= 1<<15 || (r[3] != 0 && r[3] != 1) {
			return nil, errors.New("a control record's epoch is out of range or its type is not 0 (abort) or 1 (commit)")
		}
		out = append(out, Marker{Offset: r[0], PID: r[1], Epoch: int16(r[2]), Commit: r[3] == 1})
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

// fastInts reads an array of integers as the writer writes it, such as
// [4,9,12], appending them to dst (empty): at most MaxBatchRecords integers
// of at most 18 digits, without leading zeros or spaces. It reports false,
// having moved nothing, for anything else, which ints then reads or refuses;
// where it reports true, ints would have read the same.
func (p *parser) fastInts(dst []int64) ([]int64, bool) {
	s, i := p.s, p.i
	if i+1 >= len(s) || s[i] != '[' {
		return dst, false
	}
	i++
	if s[i] == ']' {
		p.i = i + 1
		return dst, true
	}
	for {
		v, j, ok := fastInt(s, i)
		if !ok || len(dst) == MaxBatchRecords {
			return dst, false
		}
		dst = append(dst, v)
		switch s[j] {
		case ',':
			i = j + 1
		case ']':
			p.i = j + 1
			return dst, true
		default:
			return dst, false
		}
	}
}

// fastInt reads an integer of at most 18 digits with no leading zero at
// s[i:], and returns it and where it ends, which is inside s; false if
// there is no such integer there.
func fastInt(s []byte, i int) (int64, int, bool) {
	neg := i < len(s) && s[i] == '-'
	if neg {
		i++
	}
	start := i
	var v int64
	for i < len(s) && i-start < 18 {
		d := s[i] - '0'
		if d > 9 {
			break
		}
		v = v*10 + int64(d)
		i++
	}
	if n := i - start; n == 0 || n > 1 && s[start] == '0' || i >= len(s) || s[i]-'0' <= 9 {
		return 0, 0, false
	}
	if neg {
		v = -v
	}
	return v, i, true
}

// fastRecord reads a read-back record as the writer writes it: five
// integers of at most 18 digits, without leading zeros or spaces, as in
// [12,1000,0,11,13]. It reports false, having read nothing, for anything
// else, which record then reads or refuses; where it reports true, record
// would have read the same.
func (p *parser) fastRecord(r *[5]int64) bool {
	s, i := p.s, p.i
	if i >= len(s) || s[i] != '[' {
		return false
	}
	i++
	for k := range r {
		v, j, ok := fastInt(s, i)
		if !ok {
			return false
		}
		r[k], i = v, j
		sep := byte(',')
		if k == len(r)-1 {
			sep = ']'
		}
		if s[i] != sep {
			return false
		}
		i++
	}
	p.i = i
	return true
}

// record reads an array of integers as ints does, keeping the first five in
// r, and returns how many it has.
func (p *parser) record(r *[5]int64) (int, error) {
	if !p.eat('[') {
		return 0, fmt.Errorf("expected an array at column %d", p.i+1)
	}
	p.ws()
	if p.eat(']') {
		return 0, nil
	}
	n := 0
	for {
		p.ws()
		v, err := p.int(64)
		if err != nil {
			return 0, err
		}
		if n < len(r) {
			r[n] = v
		}
		n++
		p.ws()
		if p.eat(',') {
			continue
		}
		if p.eat(']') {
			return n, nil
		}
		return 0, fmt.Errorf("expected ',' or ']' at column %d", p.i+1)
	}
}

// interned are the strings event values repeat: kinds, every Kafka error
// name, the faults and the reasons the producer writes.
var interned = func() map[string]string {
	m := map[string]string{}
	for _, k := range Kinds() {
		m[string(k)] = string(k)
	}
	for name := range errorsByName {
		m[name] = name
	}
	for _, s := range []string{"NONE", "OUT_OF_ORDER_SEQUENCE_NUMBER", "NOT_LEADER_OR_FOLLOWER",
		"NOT_ENOUGH_REPLICAS", "REQUEST_TIMED_OUT", "DUPLICATE_SEQUENCE_NUMBER", "UNKNOWN_PRODUCER_ID",
		"NETWORK_EXCEPTION", "RejectBeforeAppend", "AppendThenFail", "DropConnection", "DropResponse", "TimeoutBeforeAppend",
		"ExpireProducerState", "Delay", LateSent, "producer closed"} {
		m[s] = s
	}
	return m
}()

// Fields i, t and ev, which every event has, beside the kind-specific ones.
const (
	fI field = 1 << (iota + 27)
	fT
	fKind
)

// keyTable is every key, in the order the writer writes them: i, t, ev, then
// fieldNames' order.
var keyTable = func() []struct {
	f    field
	name string
} {
	t := []struct {
		f    field
		name string
	}{{fI, "i"}, {fT, "t"}, {fKind, "ev"}}
	return append(t, fieldNames...)
}()

// lookupKey returns k's index in keyTable, or -1.
func lookupKey(k []byte) int {
	for i, kt := range keyTable {
		if string(k) == kt.name {
			return i
		}
	}
	return -1
}

// kindInfo is a kind, the fields it carries (kindFields), and succ: for each
// key (an index in keyTable), the key the writer writes after it, -1 if none.
type kindInfo struct {
	kind Kind
	want field
	succ []int8
}

// successors returns succ for the keys the writer writes, in that order.
func successors(keys []int) []int8 {
	succ := make([]int8, len(keyTable))
	for i := range succ {
		succ[i] = -1
	}
	for i := 1; i < len(keys); i++ {
		succ[keys[i-1]] = int8(keys[i])
	}
	return succ
}

// startSucc is succ before the kind is known: i, t, ev.
var startSucc = successors([]int{0, 1, 2})

// kindTable is every kind, in Kinds' order.
var kindTable = func() []kindInfo {
	var t []kindInfo
	for _, k := range Kinds() {
		want := kindFields[k]
		keys := []int{0, 1, 2}
		for i, kt := range keyTable[3:] {
			if want&kt.f != 0 {
				keys = append(keys, 3+i)
			}
		}
		t = append(t, kindInfo{k, want, successors(keys)})
	}
	return t
}()

// kindIndex returns the index in kindTable of the kind named b, or -1.
func kindIndex(b []byte) int {
	for i, k := range kindTable {
		if string(b) == string(k.kind) {
			return i
		}
	}
	return -1
}

// field decodes the value of the field f into e, marking it in seen and
// refusing duplicates.
func (p *parser) field(f field, e *Event, seen *field) error {
	if *seen&f != 0 {
		return errors.New("appears twice")
	}
	*seen |= f
	var err error
	var v int64
	switch f {
	case fI:
		e.I, err = p.int(64)
	case fT:
		e.T, err = p.int(64)
	case fKind:
		var b []byte
		if b, err = p.str(); err == nil {
			if p.kind = kindIndex(b); p.kind >= 0 {
				e.Kind = kindTable[p.kind].kind // no allocation
			} else {
				e.Kind = Kind(b)
			}
		}
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
		if v, err = p.int(32); err == nil && v > MaxBatchRecords {
			err = errTooManyRecords
		}
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
	case fHWM:
		e.HWM, err = p.int(64)
	case fWaited:
		e.WaitedMs, err = p.int(64)
	case fErr:
		e.Err, err = p.text()
	case fFault:
		e.Fault, err = p.text()
	case fReason:
		e.Reason, err = p.text()
	case fRecordID:
		e.RecordID, err = p.int(64)
	case fResult:
		var b []byte
		if b, err = p.str(); err == nil {
			switch string(b) {
			case Delivered:
				e.Result = Delivered
			case Failed:
				e.Result = Failed
			case NoAnswer:
				e.Result = NoAnswer
			case Committed:
				e.Result = Committed
			case Aborted:
				e.Result = Aborted
			default:
				err = fmt.Errorf("%q is not a result: %s, %s, %s, %s or %s", b, Delivered, Failed, NoAnswer, Committed, Aborted)
			}
		}
	case fBumped:
		e.Bumped, err = p.bool()
	case fCommit:
		e.Commit, err = p.bool()
	case fTx:
		e.Tx, err = p.int(64)
	case fNewEpoch:
		v, err = p.int(16)
		e.NewEpoch = int16(v)
	case fTxnID:
		var b []byte
		if b, err = p.str(); err == nil {
			e.TxnID = string(b)
		}
	case fCtl:
		e.Ctl, err = p.markers()
	case fPoller:
		v, err = p.int(32)
		e.Poller = int32(v)
	case fBatchTime:
		e.BatchTime, err = p.int(64)
	case fRecords:
		e.Records, err = p.mem.ids(p)
	case fLog:
		e.Log, err = p.records()
	}
	return err
}
