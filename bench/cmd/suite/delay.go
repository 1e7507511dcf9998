// A TCP-level delay in front of a second listener of the broker, the
// cross-check of the pipelining measurement: every byte a client sends is
// held for the delay after it arrived and then written at once (so every
// request is held for the delay, pipelined by construction); answers pass
// unchanged. The broker advertises this proxy on that listener, so a client
// bootstrapped there reaches the broker only through it, without any
// metadata rewriting.

package main

import (
	"io"
	"net"
	"sync"
	"time"
)

// delayProxy forwards connections on ln to target, holding client bytes for delay.
type delayProxy struct {
	ln     net.Listener
	target string
	delay  time.Duration
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
}

func newDelayProxy(ln net.Listener, target string, delay time.Duration) *delayProxy {
	d := &delayProxy{ln: ln, target: target, delay: delay, conns: map[net.Conn]bool{}}
	d.wg.Add(1)
	go d.accept()
	return d
}

func (d *delayProxy) track(c net.Conn) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		c.Close()
		return false
	}
	d.conns[c] = true
	return true
}

func (d *delayProxy) accept() {
	defer d.wg.Done()
	for {
		c, err := d.ln.Accept()
		if err != nil {
			return
		}
		if !d.track(c) {
			return
		}
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.serve(c)
		}()
	}
}

// chunk is bytes read from the client and when.
type chunk struct {
	b  []byte
	at time.Time
}

func (d *delayProxy) serve(c net.Conn) {
	defer c.Close()
	up, err := net.DialTimeout("tcp", d.target, 10*time.Second)
	if err != nil {
		return
	}
	if !d.track(up) {
		return
	}
	defer up.Close()
	q := make(chan chunk, 4096)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // client -> queue, stamped
		defer wg.Done()
		defer close(q)
		for {
			b := make([]byte, 64<<10)
			n, err := c.Read(b)
			if n > 0 {
				q <- chunk{b[:n], time.Now()}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { // queue -> broker, each chunk at its time + delay
		defer wg.Done()
		for ch := range q {
			if w := time.Until(ch.at.Add(d.delay)); w > 0 {
				time.Sleep(w)
			}
			if _, err := up.Write(ch.b); err != nil {
				c.Close()
				for range q { // let the reader finish
				}
				return
			}
		}
		if tc, ok := up.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	}()
	io.Copy(c, up) // answers, undelayed
	c.Close()
	up.Close()
	wg.Wait()
}

// close stops accepting, cuts every connection and waits for the goroutines.
func (d *delayProxy) close() {
	d.ln.Close()
	d.mu.Lock()
	d.closed = true
	for c := range d.conns {
		c.Close()
	}
	d.mu.Unlock()
	d.wg.Wait()
}
