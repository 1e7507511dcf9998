package proxy

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxFrame bounds one request or response read off the wire (Kafka's own
// socket.request.max.bytes is 100 MiB).
const maxFrame = 100 << 20

// readFrame reads one size-prefixed Kafka frame and returns it without its
// size.
func readFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 4 || n > maxFrame {
		return nil, fmt.Errorf("frame of %d bytes", n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// appendFrame appends body with its size prefix to dst.
func appendFrame(dst, body []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(body)))
	return append(dst, body...)
}

// request is one request as a client sent it.
type request struct {
	key, version int16
	corr         int32
	clientID     string
	raw          []byte // the frame without its size
	bodyAt       int    // where the body starts in raw; -1 when the key is unknown
	kind         kmsg.Request
}

// parseRequest reads a request's header (request header v1 or v2, as the
// key's version makes it).
func parseRequest(raw []byte) (*request, error) {
	if len(raw) < 8 {
		return nil, fmt.Errorf("request of %d bytes is shorter than its header", len(raw))
	}
	rq := &request{
		key:     int16(binary.BigEndian.Uint16(raw)),
		version: int16(binary.BigEndian.Uint16(raw[2:])),
		corr:    int32(binary.BigEndian.Uint32(raw[4:])),
		raw:     raw,
		bodyAt:  -1,
	}
	rq.kind = kmsg.RequestForKey(rq.key)
	if rq.kind == nil {
		return rq, nil // passed through untouched
	}
	rq.kind.SetVersion(rq.version)
	r := kbin.Reader{Src: raw[8:]}
	if id := r.NullableString(); id != nil {
		rq.clientID = *id
	}
	// ApiVersions requests are flexible from v3 but their header still
	// carries tags; ControlledShutdown v0 is the one request without a
	// client id, and kcheck has no use for it.
	if rq.kind.IsFlexible() {
		skipTags(&r)
	}
	if !r.Ok() {
		return nil, fmt.Errorf("request key %d v%d: malformed header", rq.key, rq.version)
	}
	rq.bodyAt = len(raw) - len(r.Src)
	return rq, nil
}

// skipTags skips a tagged-field section.
func skipTags(r *kbin.Reader) {
	for n := r.Uvarint(); n > 0 && r.Ok(); n-- {
		r.Uvarint()
		r.Span(int(r.Uvarint()))
	}
}

// decode reads the request's body into its kmsg type.
func (rq *request) decode() (kmsg.Request, error) {
	if rq.bodyAt < 0 {
		return nil, fmt.Errorf("request key %d is unknown", rq.key)
	}
	req := kmsg.RequestForKey(rq.key)
	req.SetVersion(rq.version)
	if err := req.ReadFrom(rq.raw[rq.bodyAt:]); err != nil {
		return nil, fmt.Errorf("request key %d v%d: %w", rq.key, rq.version, err)
	}
	return req, nil
}

// withBody returns the request's frame (without size) with its body replaced.
func (rq *request) withBody(req kmsg.Request) []byte {
	out := append([]byte(nil), rq.raw[:rq.bodyAt]...)
	return req.AppendTo(out)
}

// responseFlexible reports whether the response to a request of key and
// version has a tagged-field section in its header: every flexible response
// but ApiVersions', whose header stays v0 so old clients can read it.
func responseFlexible(req kmsg.Request) bool {
	return req != nil && req.IsFlexible() && req.Key() != kmsg.ApiVersions.Int16()
}

// responseBodyAt returns where the body starts in a response frame (without
// size) to req.
func responseBodyAt(raw []byte, req kmsg.Request) (int, error) {
	if len(raw) < 4 {
		return 0, fmt.Errorf("response of %d bytes", len(raw))
	}
	if !responseFlexible(req) {
		return 4, nil
	}
	r := kbin.Reader{Src: raw[4:]}
	skipTags(&r)
	if !r.Ok() {
		return 0, fmt.Errorf("response: malformed header tags")
	}
	return len(raw) - len(r.Src), nil
}

// decodeResponse reads a response frame's body as the response to rq.
func decodeResponse(raw []byte, rq *request) (kmsg.Response, int, error) {
	at, err := responseBodyAt(raw, rq.kind)
	if err != nil {
		return nil, 0, err
	}
	resp := rq.kind.ResponseKind()
	resp.SetVersion(rq.version)
	if err := resp.ReadFrom(raw[at:]); err != nil {
		return nil, 0, fmt.Errorf("response key %d v%d: %w", rq.key, rq.version, err)
	}
	return resp, at, nil
}

// encodeResponse returns a response frame (without size) with the header
// bytes of the original (raw[:at]) and resp as its body.
func encodeResponse(header []byte, resp kmsg.Response) []byte {
	return resp.AppendTo(append([]byte(nil), header...))
}

// newResponseHeader returns the header of a response to rq that the proxy
// makes up itself.
func newResponseHeader(rq *request) []byte {
	h := binary.BigEndian.AppendUint32(nil, uint32(rq.corr))
	if responseFlexible(rq.kind) {
		h = append(h, 0) // no tagged fields
	}
	return h
}
