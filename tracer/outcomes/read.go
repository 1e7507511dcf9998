package outcomes

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/kcheck/kcheck/tracer"
)

// maxOutcomeLine bounds one line of a driver's report: a line is a few
// numbers and an error's text, which 64 KiB holds many times over.
const maxOutcomeLine = 64 << 10

// Line is one line of a driver's report of what its client told the
// application about one record (drivers/OUTCOMES.md), as a Told event and
// the line it came from.
type Line struct {
	Told tracer.Event // Kind Told; I and T are the trace's
	Line int
}

// outcomeLine is a report line as JSON: exactly one of off (delivered), err
// (failed) and none.
type outcomeLine struct {
	ID   *int64  `json:"id"`
	P    *int64  `json:"p"`
	Off  *int64  `json:"off"`
	Err  *string `json:"err"`
	Code *int64  `json:"code"`
	None *bool   `json:"none"`
}

// Read reads a driver's report from r (called name in errors), one Line a
// line, refusing anything drivers/OUTCOMES.md does not allow
// with an error naming the file and the line. A record named twice is an
// error too. Memory follows the report's size.
func Read(r io.Reader, name string) ([]Line, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxOutcomeLine)
	var out []Line
	seen := map[int64]int{}
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			return nil, fmt.Errorf("%s:%d: an empty line: each line is one record's outcome (drivers/OUTCOMES.md)", name, line)
		}
		e, err := parseOutcome(text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w (drivers/OUTCOMES.md)", name, line, err)
		}
		if prev, ok := seen[e.RecordID]; ok {
			return nil, fmt.Errorf("%s:%d: record %d was reported already on line %d", name, line, e.RecordID, prev)
		}
		seen[e.RecordID] = line
		out = append(out, Line{Told: e, Line: line})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: a line longer than %d bytes", name, line+1, maxOutcomeLine)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// parseOutcome decodes one report line into a Told event.
func parseOutcome(text []byte) (tracer.Event, error) {
	var l outcomeLine
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return tracer.Event{}, fmt.Errorf("not an outcome: %v", err)
	}
	if dec.More() {
		return tracer.Event{}, errors.New("not an outcome: text after the object")
	}
	e := tracer.Event{Kind: tracer.Told, Partition: -1, Offset: -1}
	if l.ID == nil || *l.ID < 0 {
		return e, errors.New(`"id", the record's kcheck-id, is missing or negative`)
	}
	e.RecordID = *l.ID
	kinds := 0
	for _, set := range []bool{l.Off != nil, l.Err != nil, l.None != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return e, errors.New(`want exactly one of "off" (delivered), "err" (failed) and "none"`)
	}
	if l.Code != nil && l.Err == nil {
		return e, errors.New(`"code" goes with "err" only`)
	}
	switch {
	case l.None != nil:
		if !*l.None || l.P != nil {
			return e, errors.New(`a record with no answer is {"id":N,"none":true}, with no "p"`)
		}
		e.Result = tracer.NoAnswer
		return e, nil
	case l.P == nil || *l.P < -1 || *l.P > math.MaxInt32:
		return e, errors.New(`"p", the partition (-1 if unknown), is missing or out of range`)
	}
	e.Partition = int32(*l.P)
	if l.Off != nil {
		if *l.Off < -1 {
			return e, fmt.Errorf(`"off" %d is not an offset (-1 if none)`, *l.Off)
		}
		e.Result, e.Offset = tracer.Delivered, *l.Off
		return e, nil
	}
	e.Result, e.Reason = tracer.Failed, *l.Err
	if l.Code != nil {
		if *l.Code <= 0 || *l.Code > math.MaxInt16 {
			return e, fmt.Errorf(`"code" %d is not a Kafka error code (1 to %d)`, *l.Code, math.MaxInt16)
		}
		e.Err = tracer.ErrorName(int16(*l.Code))
	}
	return e, nil
}
