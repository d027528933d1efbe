// Package nettest measures what a database call pays on the wire: a
// user-space request and reply of a chosen size over an established TCP
// connection, every round trip timed, as a stream of latency histograms
// (`latscope nettest client`), against its own server (`latscope nettest
// server`). It also times pipelined messages (stream mode) and TCP
// connection set-up (connect mode, the hping SYN analogue).
package nettest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/pace"
	"github.com/latscope/latscope/probe/loadtest"
	"github.com/latscope/latscope/stream"
)

// Client defaults.
const (
	DefaultSize     = 256
	DefaultWindow   = 64
	DefaultTimeout  = 10 * time.Second
	DefaultInterval = time.Second
	maxConnections  = 4096
	maxRate         = 10_000_000
)

// Config describes one network test.
type Config struct {
	// Addr is the server's HOST:PORT.
	Addr string
	Mode Mode
	// Request and Reply are the message sizes in bytes, the 8-byte header
	// included (default 256 each; in stream mode replies default to 8).
	Request, Reply int
	// Connections run at once (default 1).
	Connections int
	// Rate, when set, is an open loop: round trips start at this many per
	// second over all connections (Poisson arrivals), and latency counts
	// from the intended send time.
	Rate float64
	// Window is the stream mode's most unacknowledged messages per
	// connection (default 64).
	Window int
	// Interval is the length of each emitted window (default 1 s).
	Interval time.Duration
	// Timeout bounds connecting and waiting for a reply (default 10 s).
	Timeout time.Duration
}

// resolve fills in the defaults and checks the values.
func (c Config) resolve() (Config, error) {
	c.Mode = cmp.Or(c.Mode, Sync)
	c.Request = cmp.Or(c.Request, DefaultSize)
	if c.Reply == 0 {
		c.Reply = DefaultSize
		if c.Mode == Stream {
			c.Reply = HeaderSize
		}
	}
	c.Connections = cmp.Or(c.Connections, 1)
	c.Window = cmp.Or(c.Window, DefaultWindow)
	c.Interval = cmp.Or(c.Interval, DefaultInterval)
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
	switch {
	case c.Addr == "":
		return c, errors.New("no server address (HOST:PORT of `latscope nettest server`)")
	case c.Mode != Sync && c.Mode != Stream && c.Mode != Connect:
		return c, fmt.Errorf("unknown %s", c.Mode)
	case c.Request < HeaderSize || c.Reply < HeaderSize:
		return c, fmt.Errorf("message sizes %d/%d bytes: at least %d (the header)", c.Request, c.Reply, HeaderSize)
	case c.Request > DefaultMaxMessage || c.Reply > DefaultMaxMessage:
		return c, fmt.Errorf("message sizes %d/%d bytes: at most %d", c.Request, c.Reply, DefaultMaxMessage)
	case c.Connections < 1 || c.Connections > maxConnections:
		return c, fmt.Errorf("%d connections: want 1 to %d", c.Connections, maxConnections)
	case c.Rate < 0 || c.Rate > maxRate || c.Rate != c.Rate:
		return c, fmt.Errorf("rate %g per second: want 0 (closed loop) up to %d", c.Rate, maxRate)
	case c.Rate > 0 && c.Mode == Stream:
		return c, errors.New("--rate paces sync round trips or connects; stream mode sends as fast as the window allows")
	case c.Window < 1 || c.Window > 1<<16:
		return c, fmt.Errorf("window %d: want 1 to 65536", c.Window)
	case c.Interval < 0 || c.Timeout < 0:
		return c, errors.New("interval and timeout must not be negative")
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return c, fmt.Errorf("server address %q: want HOST:PORT (%v)", c.Addr, err)
	}
	return c, nil
}

// Test is one network latency test: a source of per-interval latency
// histograms while it runs, and a Result when it is done.
type Test struct {
	cfg    Config
	cfgErr error
	diag   *input.Diagnostics
	name   string

	mu     sync.Mutex
	result Result
}

// New returns the test for cfg; errors in cfg are returned by Run.
func New(cfg Config, diag *input.Diagnostics) *Test {
	resolved, err := cfg.resolve()
	return &Test{cfg: resolved, cfgErr: err, diag: diag, name: "nettest:" + resolved.Addr}
}

// OpenProbe returns the test of cfg, checked at once, for the
// nettest:HOST:PORT probe (it runs until cancelled).
func OpenProbe(cfg Config, diag *input.Diagnostics) (*Test, error) {
	if _, err := cfg.resolve(); err != nil {
		return nil, fmt.Errorf("nettest: %w", err)
	}
	return New(cfg, diag), nil
}

// Name is "nettest:HOST:PORT".
func (t *Test) Name() string { return t.name }

// Config returns the configuration with the defaults filled in.
func (t *Test) Config() Config { return t.cfg }

// Result is what a test measured.
type Result struct {
	Config    Config
	Placement pace.Placement
	// Intervals are the emitted windows' figures, Total the whole test's.
	Intervals []IntervalResult
	Total     *loadtest.Window
	Elapsed   time.Duration
	// CPU is the process's CPU time during the test.
	CPU time.Duration
	// Errors counts failed round trips; Lost counts connections that
	// ended early.
	Errors, Lost int
}

// IntervalResult is one emitted window.
type IntervalResult struct {
	Start    time.Time
	Duration time.Duration
	Window   *loadtest.Window
}

// Result returns what was measured; call it after Run returns.
func (t *Test) Result() Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.result
	r.Intervals = append([]IntervalResult(nil), r.Intervals...)
	return r
}

// event names the series.
func (t *Test) event() string {
	switch t.cfg.Mode {
	case Stream:
		return fmt.Sprintf("tcp stream %d B message ack", t.cfg.Request)
	case Connect:
		return "tcp connect"
	}
	return fmt.Sprintf("tcp round trip %d/%d B", t.cfg.Request, t.cfg.Reply)
}

// Run connects, measures until ctx is cancelled and closes the
// connections. Cancellation is a normal end: it returns nil after emitting
// the last (partial) interval.
func (t *Test) Run(ctx context.Context, emit func(stream.Interval) error) error {
	if t.cfgErr != nil {
		return fmt.Errorf("%s: %w", t.name, t.cfgErr)
	}
	var conns []net.Conn
	if t.cfg.Mode != Connect {
		var err error
		if conns, err = t.dialAll(ctx); err != nil {
			return err
		}
	}
	recs := make([]*loadtest.Recorder, t.cfg.Connections)
	for i := range recs {
		recs[i] = loadtest.NewRecorder()
	}
	t.mu.Lock()
	t.result = Result{Config: t.cfg, Placement: pace.CurrentPlacement(), Total: loadtest.NewWindow()}
	t.mu.Unlock()
	var margin time.Duration
	if t.cfg.Rate > 0 {
		margin = pace.Calibrate()
	}
	start, cpu0 := time.Now(), pace.ProcessCPU()
	w := &workers{test: t, conns: conns, recs: recs, margin: margin, start: start}
	w.start_()
	err := t.windows(ctx, w, recs, start, emit)
	w.stop()
	t.mu.Lock()
	t.result.Elapsed, t.result.CPU = time.Since(start), pace.ProcessCPU()-cpu0
	t.result.Errors, t.result.Lost = t.diag.Count(t.name), int(w.lost.Load())
	t.mu.Unlock()
	return err
}

// dialAll opens and negotiates every connection.
func (t *Test) dialAll(ctx context.Context) ([]net.Conn, error) {
	var conns []net.Conn
	for range t.cfg.Connections {
		c, err := t.dial(ctx)
		if err != nil {
			for _, c := range conns {
				c.Close()
			}
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
		conns = append(conns, c)
	}
	return conns, nil
}

// dial connects and negotiates one test connection.
func (t *Test) dial(ctx context.Context) (net.Conn, error) {
	d := net.Dialer{Timeout: t.cfg.Timeout}
	c, err := d.DialContext(ctx, "tcp", t.cfg.Addr)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return nil, fmt.Errorf("cannot connect (%v): is `latscope nettest server` running there?", op.Err)
		}
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(t.cfg.Timeout))
	h := hello{Version: version, Mode: t.cfg.Mode, Request: uint32(t.cfg.Request), Reply: uint32(t.cfg.Reply), Window: uint32(t.cfg.Window)}
	if _, err := c.Write(h.marshal()); err != nil {
		c.Close()
		return nil, fmt.Errorf("sending the test request: %w", err)
	}
	a, err := readAnswer(c)
	if err != nil {
		c.Close()
		if errors.Is(err, errNotLatscope) {
			return nil, fmt.Errorf("the server is not a latscope nettest server: %w", err)
		}
		return nil, fmt.Errorf("no answer to the test request (is it a latscope nettest server?): %w", err)
	}
	if a.Status != StatusOK {
		c.Close()
		return nil, fmt.Errorf("the server refused the test: %s (its limit is %d bytes)", a.Status, a.MaxMessage)
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}

// windows emits one interval per cfg.Interval until ctx is done or every
// connection is lost.
func (t *Test) windows(ctx context.Context, w *workers, recs []*loadtest.Recorder, start time.Time, emit func(stream.Interval) error) error {
	key := stream.Key{Event: t.event(), Instance: t.cfg.Addr}
	wallBase := start.Round(0)
	winStart := start
	ticker := time.NewTicker(t.cfg.Interval)
	defer ticker.Stop()
	flush := func(end time.Time) error {
		win := loadtest.Drain(recs)
		iv := stream.Interval{Source: t.name, Start: wallBase.Add(winStart.Sub(start)), Duration: end.Sub(winStart)}
		if win.Lat.Count() > 0 {
			iv.Series = []stream.SeriesHist{{Key: key, Hist: win.Lat}}
		}
		t.mu.Lock()
		t.result.Intervals = append(t.result.Intervals, IntervalResult{Start: iv.Start, Duration: iv.Duration, Window: win})
		t.result.Total.Add(win)
		t.mu.Unlock()
		winStart = end
		if iv.Duration <= 0 {
			return nil
		}
		return emit(iv)
	}
	for {
		select {
		case <-ctx.Done():
			w.stop()
			_ = flush(time.Now())
			return nil
		case <-w.allLost:
			_ = flush(time.Now())
			return fmt.Errorf("%s: every connection ended: %w", t.name, w.firstErr())
		case now := <-ticker.C:
			if err := flush(now); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
	}
}

// workers are a test's connections at work.
type workers struct {
	test    *Test
	conns   []net.Conn
	recs    []*loadtest.Recorder
	margin  time.Duration
	start   time.Time
	stopped atomic.Bool
	wg      sync.WaitGroup
	lost    atomic.Int64
	allLost chan struct{}
	errMu   sync.Mutex
	err     error
	once    sync.Once
}

// start_ starts one goroutine per connection.
func (w *workers) start_() {
	cfg := w.test.cfg
	w.allLost = make(chan struct{})
	for i := range cfg.Connections {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			err := w.run(i)
			if w.stopped.Load() {
				return
			}
			if err != nil {
				w.test.diag.MalformedAt(w.test.name, time.Now(), fmt.Sprintf("connection %d: %v", i+1, err))
				w.errMu.Lock()
				if w.err == nil {
					w.err = err
				}
				w.errMu.Unlock()
			}
			if w.lost.Add(1) == int64(cfg.Connections) {
				close(w.allLost)
			}
		}()
	}
}

func (w *workers) firstErr() error {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	if w.err == nil {
		return errors.New("closed")
	}
	return w.err
}

// stop ends every worker: closing the connections unblocks their reads.
func (w *workers) stop() {
	w.once.Do(func() {
		w.stopped.Store(true)
		for _, c := range w.conns {
			c.Close()
		}
	})
	w.wg.Wait()
}

// run is connection i's loop.
func (w *workers) run(i int) error {
	cfg := w.test.cfg
	rec := w.recs[i]
	var p *pace.Pacer
	var rng *rand.Rand
	if cfg.Rate > 0 {
		p = pace.NewPacer(w.margin)
		defer runtime.UnlockOSThread()
		rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	sched := schedule{rate: cfg.Rate / float64(cfg.Connections), rng: rng, next: w.start}
	switch cfg.Mode {
	case Connect:
		return w.connects(rec, p, &sched)
	case Stream:
		return w.stream(w.conns[i], rec)
	}
	return w.sync(w.conns[i], rec, p, &sched)
}

// schedule draws an open loop's Poisson arrivals for one connection.
type schedule struct {
	rate float64
	rng  *rand.Rand
	next time.Time
}

// advance returns the next intended start.
func (s *schedule) advance() time.Time {
	s.next = s.next.Add(time.Duration(s.rng.ExpFloat64() / s.rate * float64(time.Second)))
	return s.next
}

// sync times request/reply round trips, one in flight. With a pacer it is
// an open loop: latency counts from the intended send time.
func (w *workers) sync(c net.Conn, rec *loadtest.Recorder, p *pace.Pacer, sched *schedule) error {
	cfg := w.test.cfg
	req := make([]byte, cfg.Request)
	reply := make([]byte, cfg.Reply)
	fillRandom(req[HeaderSize:])
	rt := newRoundTripper(c, cfg.Timeout, w.stopped.Load)
	defer rt.close()
	for seq := uint32(0); !w.stopped.Load(); seq++ {
		var intended time.Time
		if p != nil {
			intended = sched.advance()
			p.WaitUntil(intended, w.stopped.Load)
			if w.stopped.Load() {
				return nil
			}
		}
		putHeader(req, seq, len(req))
		t0 := time.Now()
		if err := rt.roundTrip(req, reply, t0); err != nil {
			return fmt.Errorf("round trip %d: %w", seq, err)
		}
		done := time.Now()
		if got, n := header(reply); got != seq || int(n) != cfg.Reply {
			return fmt.Errorf("reply %d of %d bytes answers request %d: the server is out of step", got, n, seq)
		}
		if p != nil {
			rec.RecordOpen(done.Sub(intended), t0.Sub(intended))
		} else {
			rec.Record(done.Sub(t0))
		}
	}
	return nil
}

// roundTripper sends a request and reads its reply: with blocking raw
// system calls where possible (see blockingConn), else through net.Conn.
type roundTripper struct {
	c       net.Conn
	raw     *blockingConn
	timeout time.Duration
	stop    func() bool
}

func newRoundTripper(c net.Conn, timeout time.Duration, stop func() bool) *roundTripper {
	rt := &roundTripper{c: c, timeout: timeout, stop: stop}
	if raw := newBlockingConn(c); raw != nil {
		rt.raw = raw
	}
	return rt
}

func (rt *roundTripper) close() {
	if rt.raw != nil {
		rt.raw.Close()
	}
}

// roundTrip writes req and reads the whole reply, started at t0.
func (rt *roundTripper) roundTrip(req, reply []byte, t0 time.Time) error {
	err := rt.exchange(req, reply, t0)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("no reply within %s (--timeout): %w", rt.timeout, err)
	}
	return err
}

func (rt *roundTripper) exchange(req, reply []byte, t0 time.Time) error {
	deadline := t0.Add(rt.timeout)
	if rt.raw != nil {
		if err := rt.raw.writeAll(req, rt.stop, deadline); err != nil {
			return fmt.Errorf("sending: %w", err)
		}
		if err := rt.raw.readFull(reply, rt.stop, deadline); err != nil {
			return fmt.Errorf("waiting for the reply: %w", err)
		}
		return nil
	}
	_ = rt.c.SetDeadline(deadline)
	if _, err := rt.c.Write(req); err != nil {
		return fmt.Errorf("sending: %w", err)
	}
	if _, err := io.ReadFull(rt.c, reply); err != nil {
		return fmt.Errorf("waiting for the reply: %w", err)
	}
	return nil
}

// stream sends messages back to back, at most Window unacknowledged, and
// times each from send to acknowledgement.
func (w *workers) stream(c net.Conn, rec *loadtest.Recorder) error {
	cfg := w.test.cfg
	sent := make([]atomic.Int64, cfg.Window) // send times, ns since w.start, by seq % Window
	credit := make(chan struct{}, cfg.Window)
	for range cfg.Window {
		credit <- struct{}{}
	}
	readErr := make(chan error, 1)
	go func() {
		ack := make([]byte, cfg.Reply)
		for seq := uint32(0); ; seq++ {
			_ = c.SetReadDeadline(time.Now().Add(cfg.Timeout))
			if _, err := io.ReadFull(c, ack); err != nil {
				readErr <- fmt.Errorf("waiting for ack %d: %w", seq, err)
				return
			}
			now := time.Since(w.start)
			if got, _ := header(ack); got != seq {
				readErr <- fmt.Errorf("ack %d arrived for message %d: the server is out of step", got, seq)
				return
			}
			rec.Record(now - time.Duration(sent[seq%uint32(cfg.Window)].Load()))
			credit <- struct{}{}
		}
	}()
	msg := make([]byte, cfg.Request)
	fillRandom(msg[HeaderSize:])
	for seq := uint32(0); !w.stopped.Load(); seq++ {
		select {
		case <-credit:
		case err := <-readErr:
			return err
		}
		putHeader(msg, seq, len(msg))
		sent[seq%uint32(cfg.Window)].Store(int64(time.Since(w.start)))
		_ = c.SetWriteDeadline(time.Now().Add(cfg.Timeout))
		if _, err := c.Write(msg); err != nil {
			return fmt.Errorf("sending message %d: %w", seq, err)
		}
	}
	return nil
}

// connects times TCP connection set-up, closing each connection at once
// with a reset so that no TIME_WAIT state piles up.
func (w *workers) connects(rec *loadtest.Recorder, p *pace.Pacer, sched *schedule) error {
	cfg := w.test.cfg
	d := net.Dialer{Timeout: cfg.Timeout}
	for !w.stopped.Load() {
		var intended time.Time
		if p != nil {
			intended = sched.advance()
			p.WaitUntil(intended, w.stopped.Load)
			if w.stopped.Load() {
				return nil
			}
		}
		t0 := time.Now()
		c, err := d.Dial("tcp", cfg.Addr)
		done := time.Now()
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		c.Close()
		if p != nil {
			rec.RecordOpen(done.Sub(intended), t0.Sub(intended))
		} else {
			rec.Record(done.Sub(t0))
		}
	}
	return nil
}

// fillRandom fills a payload with random bytes, so that no compression
// along the path makes it smaller.
func fillRandom(b []byte) {
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
}
