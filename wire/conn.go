package wire

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// ErrClosed is returned for requests on a connection that was closed or lost.
var ErrClosed = errors.New("wire: connection closed")

// newest caps the version we send per API key: the newest version that both
// kfake and Kafka 4.x speak and that addresses topics by name.
var newest = map[int16]int16{
	kmsg.Produce.Int16():        12, // v13 addresses topics by id
	kmsg.Fetch.Int16():          12, // v13 addresses topics by id
	kmsg.ListOffsets.Int16():    9,
	kmsg.Metadata.Int16():       12,
	kmsg.ApiVersions.Int16():    3,
	kmsg.CreateTopics.Int16():   7,
	kmsg.InitProducerID.Int16(): 5,
}

// Conn is one connection to one broker. Send and Request may be called from
// many goroutines; responses are delivered in request order.
type Conn struct {
	addr     string
	nc       net.Conn
	format   *kmsg.RequestFormatter
	versions map[int16]int16  // the broker's max version per key
	features map[string]int16 // the cluster's finalized features (ApiVersions v3+), by name: their level
	guess    string           // the Kafka version those say, kversion's guess

	wmu  sync.Mutex // serializes writes and the order of pending
	corr int32
	wbuf []byte

	pending  chan *call
	done     chan struct{}
	readDone chan struct{} // the reader goroutine has exited
	errMu    sync.Mutex
	err      error
	close    sync.Once
}

type call struct {
	req  kmsg.Request
	corr int32
	fn   func(kmsg.Response, error)
}

// maxPending bounds requests written but not yet answered on one connection.
const maxPending = 1024

// Dial connects to addr and negotiates versions with ApiVersions.
func Dial(ctx context.Context, addr, clientID string) (*Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("wire: dialing %s: %w", addr, err)
	}
	c := &Conn{
		addr:     addr,
		nc:       nc,
		format:   kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID)),
		pending:  make(chan *call, maxPending),
		done:     make(chan struct{}),
		readDone: make(chan struct{}),
	}
	go c.readLoop()
	if err := c.negotiate(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Addr returns the address the connection was dialed to.
func (c *Conn) Addr() string { return c.addr }

func (c *Conn) negotiate(ctx context.Context) error {
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName = "kcheck"
	req.ClientSoftwareVersion = "0.1.0"
	req.SetVersion(3)
	resp, err := c.do(ctx, req)
	if err != nil {
		return fmt.Errorf("wire: ApiVersions to %s: %w", c.addr, err)
	}
	r := resp.(*kmsg.ApiVersionsResponse)
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		return fmt.Errorf("wire: ApiVersions to %s: %w", c.addr, err)
	}
	c.versions = make(map[int16]int16, len(r.ApiKeys))
	for _, k := range r.ApiKeys {
		c.versions[k.ApiKey] = k.MaxVersion
	}
	c.features = make(map[string]int16, len(r.FinalizedFeatures))
	for _, f := range r.FinalizedFeatures {
		c.features[f.Name] = f.MaxVersionLevel
	}
	c.guess = kversion.FromApiVersionsResponse(r).VersionGuess()
	return nil
}

// Feature returns the level of the cluster's finalized feature name as the
// broker's ApiVersions answer listed it (KIP-584; e.g. transaction.version),
// 0 when it listed none (a broker lists a feature only above level 0).
func (c *Conn) Feature(name string) int16 { return c.features[name] }

// MaxVersion returns the newest version of the API key the broker speaks,
// and false when it does not speak it.
func (c *Conn) MaxVersion(key int16) (int16, bool) {
	v, ok := c.versions[key]
	return v, ok
}

// VersionGuess is the Kafka release whose requests and versions the broker
// answered ApiVersions with, as franz-go's kversion guesses it: "v4.1",
// "at least v4.4" (newer than it knows), or, for a broker that is no
// release, a phrase such as "unknown custom version".
func (c *Conn) VersionGuess() string { return c.guess }

// setVersion picks the newest version of req that we and the broker speak.
func (c *Conn) setVersion(req kmsg.Request) error {
	key := req.Key()
	v := req.MaxVersion()
	if cap, ok := newest[key]; ok && cap < v {
		v = cap
	}
	if c.versions != nil {
		bmax, ok := c.versions[key]
		if !ok {
			return fmt.Errorf("wire: broker %s does not support %s", c.addr, kmsg.NameForKey(key))
		}
		if bmax < v {
			v = bmax
		}
	}
	req.SetVersion(v)
	return nil
}

// Send writes req and calls fn with its response (or an error) from the
// connection's reader goroutine, in request order; fn must not block. If
// onWrite is not nil it is called with the request's correlation id just
// before the request is written, so that whatever it records comes before
// anything the broker does with the request. Send returns the correlation id.
func (c *Conn) Send(req kmsg.Request, onWrite func(corr int32), fn func(kmsg.Response, error)) (int32, error) {
	if err := c.setVersion(req); err != nil {
		return 0, err
	}
	return c.write(req, onWrite, fn)
}

func (c *Conn) write(req kmsg.Request, onWrite func(int32), fn func(kmsg.Response, error)) (int32, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.Err(); err != nil {
		return 0, err
	}
	corr := c.corr
	c.corr++
	if onWrite != nil {
		onWrite(corr)
	}
	c.wbuf = c.format.AppendRequest(c.wbuf[:0], req, corr)
	cl := &call{req: req, corr: corr, fn: fn}
	select {
	case c.pending <- cl:
	case <-c.done:
		return 0, c.Err()
	}
	if _, err := c.nc.Write(c.wbuf); err != nil {
		c.fail(fmt.Errorf("wire: writing to %s: %w", c.addr, err))
		return corr, nil // the reader fails cl with the error
	}
	return corr, nil
}

// Request sends req and waits for its response.
func (c *Conn) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	if err := c.setVersion(req); err != nil {
		return nil, err
	}
	return c.do(ctx, req)
}

func (c *Conn) do(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	type result struct {
		resp kmsg.Response
		err  error
	}
	ch := make(chan result, 1)
	if _, err := c.write(req, nil, func(r kmsg.Response, err error) { ch <- result{r, err} }); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r.resp, r.err
	case <-ctx.Done():
		// The response can no longer be matched by anyone waiting: the
		// connection is unusable for ordered use, so close it.
		c.fail(fmt.Errorf("wire: %s to %s: %w", kmsg.NameForKey(req.Key()), c.addr, ctx.Err()))
		return nil, ctx.Err()
	}
}

// Err returns why the connection is closed, or nil while it is open.
func (c *Conn) Err() error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.err
}

// Done is closed when the connection is closed or lost.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Close closes the connection and waits for its reader goroutine to exit;
// outstanding requests fail with ErrClosed. It must not be called from a
// response callback.
func (c *Conn) Close() {
	c.fail(ErrClosed)
	<-c.readDone
}

func (c *Conn) fail(err error) {
	c.close.Do(func() {
		c.errMu.Lock()
		c.err = err
		c.errMu.Unlock()
		close(c.done)
		c.nc.Close()
	})
}

func (c *Conn) readLoop() {
	defer close(c.readDone)
	br := bufio.NewReaderSize(c.nc, 64<<10)
	var buf []byte
	for {
		var cl *call
		select {
		case cl = <-c.pending:
		case <-c.done:
			c.drain()
			return
		}
		resp, err := c.readResponse(br, cl, &buf)
		if err != nil {
			c.fail(err)
			cl.fn(nil, c.Err())
			c.drain()
			return
		}
		cl.fn(resp, nil)
	}
}

// drain fails every request still waiting for a response.
func (c *Conn) drain() {
	for {
		select {
		case cl := <-c.pending:
			cl.fn(nil, c.Err())
		default:
			return
		}
	}
}

func (c *Conn) readResponse(br *bufio.Reader, cl *call, buf *[]byte) (kmsg.Response, error) {
	var size [4]byte
	if _, err := io.ReadFull(br, size[:]); err != nil {
		return nil, fmt.Errorf("wire: reading from %s: %w", c.addr, err)
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 4 || n > 1<<30 {
		return nil, fmt.Errorf("wire: %s sent a response of invalid size %d", c.addr, n)
	}
	if cap(*buf) < int(n) {
		*buf = make([]byte, n)
	}
	b := (*buf)[:n]
	if _, err := io.ReadFull(br, b); err != nil {
		return nil, fmt.Errorf("wire: reading from %s: %w", c.addr, err)
	}
	corr := int32(binary.BigEndian.Uint32(b))
	if corr != cl.corr {
		return nil, fmt.Errorf("wire: %s answered correlation id %d, expected %d", c.addr, corr, cl.corr)
	}
	body := b[4:]
	resp := cl.req.ResponseKind()
	resp.SetVersion(cl.req.GetVersion())
	// ApiVersions responses keep the v0 header so that old brokers can answer.
	if resp.IsFlexible() && cl.req.Key() != kmsg.ApiVersions.Int16() {
		r := kbin.Reader{Src: body}
		for n := r.Uvarint(); n > 0; n-- {
			r.Uvarint()
			r.Span(int(r.Uvarint()))
		}
		if !r.Ok() {
			return nil, fmt.Errorf("wire: %s sent a malformed response header", c.addr)
		}
		body = r.Src
	}
	// The response owns its bytes: the buffer is reused for the next one.
	owned := make([]byte, len(body))
	copy(owned, body)
	if err := resp.ReadFrom(owned); err != nil {
		return nil, fmt.Errorf("wire: decoding %s response from %s: %w", kmsg.NameForKey(cl.req.Key()), c.addr, err)
	}
	return resp, nil
}
