package nettest

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Server defaults.
const (
	DefaultListen           = "127.0.0.1:7878"
	DefaultMaxConns         = 1024
	DefaultHandshakeTimeout = 5 * time.Second
	DefaultIdleTimeout      = 5 * time.Minute
	DefaultWriteTimeout     = 30 * time.Second
)

// ServerConfig configures `latscope nettest server`; zero fields take the
// defaults.
type ServerConfig struct {
	// Listen is ADDR:PORT (default 127.0.0.1:7878: loopback unless another
	// address is given).
	Listen string
	// MaxMessage is the largest message accepted either way.
	MaxMessage uint32
	// MaxConns bounds the connections served at once; more are answered
	// "busy" and closed.
	MaxConns int
	// HandshakeTimeout bounds the wait for a hello, IdleTimeout the wait
	// for the next message, WriteTimeout a reply that the peer does not
	// read.
	HandshakeTimeout, IdleTimeout, WriteTimeout time.Duration
	// Log receives one line per connection event; nil discards them.
	Log io.Writer
}

func (c ServerConfig) withDefaults() ServerConfig {
	c.Listen = cmp.Or(c.Listen, DefaultListen)
	c.MaxMessage = cmp.Or(c.MaxMessage, DefaultMaxMessage)
	c.MaxConns = cmp.Or(c.MaxConns, DefaultMaxConns)
	c.HandshakeTimeout = cmp.Or(c.HandshakeTimeout, DefaultHandshakeTimeout)
	c.IdleTimeout = cmp.Or(c.IdleTimeout, DefaultIdleTimeout)
	c.WriteTimeout = cmp.Or(c.WriteTimeout, DefaultWriteTimeout)
	if c.Log == nil {
		c.Log = io.Discard
	}
	return c
}

// Server answers nettest clients.
type Server struct {
	cfg    ServerConfig
	ln     net.Listener
	active atomic.Int64
	// stopping is set when Serve's context ends, before the connections
	// are closed: tests on blocking system calls (serverConn) look at it.
	stopping atomic.Bool
	logMu    sync.Mutex
	// Counters for tests and the final line.
	served, refused atomic.Int64
}

// Listen opens the listening socket.
func Listen(cfg ServerConfig) (*Server, error) {
	cfg = cfg.withDefaults()
	if cfg.MaxMessage < HeaderSize {
		return nil, fmt.Errorf("largest message %d bytes: want at least %d", cfg.MaxMessage, HeaderSize)
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	return &Server{cfg: cfg, ln: ln}, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Served and Refused count the test connections served and refused.
func (s *Server) Served() int64  { return s.served.Load() }
func (s *Server) Refused() int64 { return s.refused.Load() }

// Serve answers clients until ctx is cancelled, then closes the listener
// and every connection and returns nil.
func (s *Server) Serve(ctx context.Context) error {
	var wg sync.WaitGroup
	conns := make(map[net.Conn]struct{})
	var mu sync.Mutex
	stop := context.AfterFunc(ctx, func() {
		s.stopping.Store(true)
		s.ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	defer stop()
	defer wg.Wait()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded) {
				continue
			}
			if isTemporary(err) { // out of descriptors: wait, do not spin
				time.Sleep(50 * time.Millisecond)
				continue
			}
			return fmt.Errorf("accept on %s: %w", s.Addr(), err)
		}
		mu.Lock()
		if ctx.Err() != nil { // accepted while stopping: the stop hook has run
			mu.Unlock()
			c.Close()
			return nil
		}
		conns[c] = struct{}{}
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.handle(c)
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
		}()
	}
}

// isTemporary reports accept errors that pass (EMFILE, ECONNABORTED).
func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// handle serves one connection and closes it.
func (s *Server) handle(c net.Conn) {
	defer c.Close()
	peer := c.RemoteAddr().String()
	if n := s.active.Add(1); n > int64(s.cfg.MaxConns) {
		defer s.active.Add(-1)
		s.refused.Add(1)
		// Read the hello first: closing with unread input would reset the
		// connection and could lose the answer.
		_ = c.SetDeadline(time.Now().Add(time.Second))
		_, _ = readHello(c)
		_, _ = c.Write(answer{Status: StatusBusy, MaxMessage: s.cfg.MaxMessage}.marshal())
		s.logf("%s refused: %d connections already", peer, s.cfg.MaxConns)
		return
	}
	defer s.active.Add(-1)
	_ = c.SetReadDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	h, err := readHello(c)
	if err != nil {
		err = s.stopped(err)
		// EOF or a reset before any byte: a connect-mode probe, nothing
		// to say.
		if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
			s.logf("%s closed before a test started: %v", peer, describe(err))
		}
		return
	}
	st := h.check(s.cfg.MaxMessage)
	_ = c.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	if _, err := c.Write(answer{Status: st, MaxMessage: s.cfg.MaxMessage}.marshal()); err != nil || st != StatusOK {
		if st != StatusOK {
			s.refused.Add(1)
			s.logf("%s refused: %s (mode %s, %d/%d bytes)", peer, st, h.Mode, h.Request, h.Reply)
		}
		return
	}
	s.served.Add(1)
	s.logf("%s: %s test, %d-byte requests, %d-byte replies", peer, h.Mode, h.Request, h.Reply)
	tc, release := blockingTestConn(c, s.stopping.Load)
	n, err := s.exchange(tc, h)
	release()
	err = s.stopped(err)
	s.logf("%s: done after %d %s: %s", peer, n, plural(n, "message"), describe(err))
}

// stopped is why a connection ended: net.ErrClosed when the server is
// stopping (a test may see the client's reaction to the stop first).
func (s *Server) stopped(err error) error {
	if err != nil && s.stopping.Load() {
		return net.ErrClosed
	}
	return err
}

// ioChunk bounds the server's buffers: payloads are read into and replies
// written from chunks of this size, so a test costs about 3 × 64 KiB
// whatever message sizes were negotiated.
const ioChunk = 64 << 10

// testConn is the connection a test's messages are exchanged on: c
// through Go's netpoller (deadlineConn), or on Linux its socket through
// blocking system calls (serverConn). The timeouts bound each wait for
// the peer from then on (0: no bound).
type testConn interface {
	io.ReadWriter
	SetReadTimeout(time.Duration)
	SetWriteTimeout(time.Duration)
}

// deadlineConn is a net.Conn as a testConn: each Read and Write sets its
// deadline from its timeout.
type deadlineConn struct {
	net.Conn
	readTimeout, writeTimeout time.Duration
}

func (d *deadlineConn) SetReadTimeout(t time.Duration)  { d.readTimeout = t }
func (d *deadlineConn) SetWriteTimeout(t time.Duration) { d.writeTimeout = t }

func (d *deadlineConn) Read(p []byte) (int, error) {
	_ = d.Conn.SetReadDeadline(deadlineAfter(d.readTimeout))
	return d.Conn.Read(p)
}

func (d *deadlineConn) Write(p []byte) (int, error) {
	_ = d.Conn.SetWriteDeadline(deadlineAfter(d.writeTimeout))
	return d.Conn.Write(p)
}

// deadlineAfter is now + t, or no deadline for t = 0.
func deadlineAfter(t time.Duration) time.Time {
	if t <= 0 {
		return time.Time{}
	}
	return time.Now().Add(t)
}

// exchange answers every message of a test with a reply of the negotiated
// size until the peer closes or misbehaves. It allocates nothing per
// message, so that no garbage collection interrupts a test.
func (s *Server) exchange(c testConn, h hello) (int64, error) {
	r := bufio.NewReaderSize(c, ioChunk)
	w := bufio.NewWriterSize(c, ioChunk)
	c.SetReadTimeout(s.cfg.IdleTimeout)
	c.SetWriteTimeout(s.cfg.WriteTimeout)
	filler := make([]byte, min(int(h.Reply), ioChunk))
	fillRandom(filler) // replies cannot be shrunk by compression on the path
	var hdr [HeaderSize]byte
	var n int64
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return n, s.flushOnExit(c, w, err)
		}
		seq, length := header(hdr[:])
		if length < HeaderSize || length > h.Request {
			return n, s.flushOnExit(c, w, fmt.Errorf("message %d claims %d bytes, the test said %d", seq, length, h.Request))
		}
		if _, err := r.Discard(int(length) - HeaderSize); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return n, s.flushOnExit(c, w, err)
		}
		if err := writeReply(w, seq, int(h.Reply), filler); err != nil {
			return n, fmt.Errorf("the client did not read its replies: %w", err)
		}
		// Flush unless the next whole message is already here: a sync
		// client waits for this reply; a streaming one gets acks in
		// batches, never held back by a message still in transit.
		if !wholeMessageBuffered(r) {
			if err := w.Flush(); err != nil {
				return n, fmt.Errorf("the client did not read its replies: %w", err)
			}
		}
		n++
	}
}

// writeReply writes a reply of size bytes: the header, then filler. The
// header is appended to the writer's own buffer: a local array passed to
// Write would escape, one allocation per reply.
func writeReply(w *bufio.Writer, seq uint32, size int, filler []byte) error {
	if w.Available() < HeaderSize {
		if err := w.Flush(); err != nil {
			return err
		}
	}
	hdr := w.AvailableBuffer()[:HeaderSize]
	putHeader(hdr, seq, size)
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	for left := size - HeaderSize; left > 0; {
		k := min(left, len(filler))
		if _, err := w.Write(filler[:k]); err != nil {
			return err
		}
		left -= k
	}
	return nil
}

// wholeMessageBuffered reports whether a complete next message has
// already been read into r.
func wholeMessageBuffered(r *bufio.Reader) bool {
	if r.Buffered() < HeaderSize {
		return false
	}
	b, _ := r.Peek(HeaderSize)
	_, length := header(b)
	return length >= HeaderSize && uint32(r.Buffered()) >= length
}

// flushOnExit sends the replies already owed before a connection ends
// (briefly: the peer may be gone) and returns why it ends.
func (s *Server) flushOnExit(c testConn, w *bufio.Writer, why error) error {
	if w.Buffered() > 0 {
		c.SetWriteTimeout(time.Second)
		_ = w.Flush()
	}
	return why
}

// plural is "message" for 1, else "messages".
func plural(n int64, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// describe says how a connection ended in plain words.
func describe(err error) string {
	switch {
	case err == nil, errors.Is(err, io.EOF):
		return "closed by the client"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the client vanished in the middle of a message"
	case errors.Is(err, os.ErrDeadlineExceeded) && strings.Contains(err.Error(), "did not read"):
		return "timed out: the client did not read its replies"
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "timed out waiting for the client"
	case errors.Is(err, syscall.ECONNRESET):
		return "closed by the client (reset)"
	case errors.Is(err, net.ErrClosed):
		return "server stopped"
	}
	return err.Error()
}

func (s *Server) logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.cfg.Log, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
