package nettest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests below run the real server on a free loopback port and talk to
// it over real sockets with hand-written peers: well-behaved ones and the
// garbage, stalled, vanishing and greedy ones a server on a network meets.

// lockedLog is a server log the test can read while the server writes it.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedLog) lines() []string {
	return strings.FieldsFunc(l.String(), func(r rune) bool { return r == '\n' })
}

// lineWith returns the first line holding every part, or "".
func (l *lockedLog) lineWith(parts ...string) string {
	for _, line := range l.lines() {
		if containsAll(line, parts) {
			return line
		}
	}
	return ""
}

// waitLine waits up to 3 s for a log line holding every part.
func (l *lockedLog) waitLine(t testing.TB, parts ...string) string {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		if line := l.lineWith(parts...); line != "" {
			return line
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q; the log:\n%s", parts, l)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// logLine is what every server log line looks like: the time, then the
// peer's address.
var logLine = regexp.MustCompile(`^\d\d:\d\d:\d\d 127\.0\.0\.1:\d+[: ]`)

// checkLogLines asserts that every line starts with the time and a peer.
func checkLogLines(t *testing.T, l *lockedLog) {
	t.Helper()
	for _, line := range l.lines() {
		if !logLine.MatchString(line) {
			t.Errorf("log line %q does not start with the time and the peer", line)
		}
	}
}

// testServer is a server running for one test.
type testServer struct {
	*Server
	log  *lockedLog
	addr string
	// stop cancels Serve and checks that it returns nil within a second;
	// it runs at the end of the test anyway.
	stop func()
}

// runServer starts a server on a free loopback port. When the test ends it
// stops it and checks that no goroutine is left behind.
func runServer(t testing.TB, cfg ServerConfig) *testServer {
	t.Helper()
	before := len(ourGoroutines())
	t.Cleanup(func() { checkGoroutines(t, before) })
	log := &lockedLog{}
	cfg.Listen = "127.0.0.1:0"
	if cfg.Log == nil {
		cfg.Log = log
	}
	s, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	ts := &testServer{Server: s, log: log, addr: s.Addr().String()}
	var once sync.Once
	ts.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Serve returned %v after cancel, want nil", err)
				}
			case <-time.After(time.Second):
				t.Errorf("Serve still running 1 s after cancel")
			}
		})
	}
	t.Cleanup(ts.stop)
	return ts
}

// checkGoroutines waits up to 2 s for the goroutines running latscope
// code to fall back to as many as before the test, then lists them. Only
// those count: the testing and fuzzing machinery start their own.
func checkGoroutines(t testing.TB, before int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		ours := ourGoroutines()
		if len(ours) <= before {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%d goroutines running latscope code, %d before the test:\n%s", len(ours), before, strings.Join(ours, "\n\n"))
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ourGoroutines returns the stacks of the goroutines running latscope code
// (the caller's included).
func ourGoroutines() []string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var ours []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "github.com/latscope/latscope/") {
			ours = append(ours, g)
		}
	}
	return ours
}

// dial connects to the server; the connection is closed when the test
// ends.
func (ts *testServer) dial(t testing.TB) *net.TCPConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", ts.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return c.(*net.TCPConn)
}

// start connects, sends h and returns the connection and the answer.
func (ts *testServer) start(t testing.TB, h hello) (*net.TCPConn, answer) {
	t.Helper()
	c := ts.dial(t)
	if _, err := c.Write(h.marshal()); err != nil {
		t.Fatalf("sending the hello: %v", err)
	}
	a, err := readAnswer(c)
	if err != nil {
		t.Fatalf("reading the answer to %+v: %v", h, err)
	}
	return c, a
}

// startOK starts a test the server must accept.
func (ts *testServer) startOK(t testing.TB, h hello) *net.TCPConn {
	t.Helper()
	c, a := ts.start(t, h)
	if a.Status != StatusOK {
		t.Fatalf("hello %+v answered %q", h, a.Status)
	}
	return c
}

// roundTrips does n sync round trips numbered from first and checks that
// each reply carries its request's number and the negotiated size.
func roundTrips(c net.Conn, request, reply int, first uint32, n int) error {
	req, rep := make([]byte, request), make([]byte, reply)
	for i := range n {
		seq := first + uint32(i)
		putHeader(req, seq, request)
		if _, err := c.Write(req); err != nil {
			return fmt.Errorf("request %d: %w", seq, err)
		}
		if _, err := io.ReadFull(c, rep); err != nil {
			return fmt.Errorf("reply %d: %w", seq, err)
		}
		if got, length := header(rep); got != seq || int(length) != reply {
			return fmt.Errorf("reply to request %d: sequence %d, %d bytes, want %d bytes", seq, got, length, reply)
		}
	}
	return nil
}

// servesAFreshClient checks that the server still runs a test.
func (ts *testServer) servesAFreshClient(t testing.TB) {
	t.Helper()
	c := ts.startOK(t, syncHello(64, 32))
	if err := roundTrips(c, 64, 32, 0, 2); err != nil {
		t.Fatalf("a fresh client after that: %v", err)
	}
	_ = c.SetLinger(0) // no TIME_WAIT pile-up over a fuzz run
	c.Close()
}

// expectClosed reads until the server ends the connection and returns what
// it sent and when it ended. A server that closes with unread input resets
// the connection: a reset counts as closed too.
func expectClosed(t testing.TB, c net.Conn, within time.Duration) ([]byte, time.Time) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(within))
	got, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("the server did not close the connection within %s: %v", within, err)
	}
	return got, time.Now()
}

// allocatedDuring returns the bytes the process allocated while f ran.
func allocatedDuring(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestServerDropsGarbage: bytes that are not a hello get no answer and a
// closed connection, one log line naming the peer, and the server goes on
// serving.
func TestServerDropsGarbage(t *testing.T) {
	ts := runServer(t, ServerConfig{HandshakeTimeout: 5 * time.Second})
	for _, c := range []struct {
		name, send, logs string
	}{
		{"an HTTP request", "GET / HTTP/1.1\r\nHost: db01:7878\r\n\r\n", "not a latscope nettest peer (bad magic)"},
		{"a TLS client hello", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + strings.Repeat("\x5a", 40), "not a latscope nettest peer (bad magic)"},
		{"24 zero bytes", strings.Repeat("\x00", helloSize), "not a latscope nettest peer (bad magic)"},
		{"a few bytes, then the end", "hello?", "not a latscope nettest peer (bad magic)"},
		{"the magic, then the end", magic, "the client vanished in the middle of a message"},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn := ts.dial(t)
			if _, err := conn.Write([]byte(c.send)); err != nil {
				t.Fatal(err)
			}
			if len(c.send) < helloSize {
				_ = conn.CloseWrite()
			}
			// Well before the 5 s handshake timeout.
			got, _ := expectClosed(t, conn, 2*time.Second)
			if len(got) != 0 {
				t.Errorf("the server answered %q", got)
			}
			ts.log.waitLine(t, conn.LocalAddr().String()+" closed before a test started: "+c.logs)
			ts.servesAFreshClient(t)
		})
	}
	checkLogLines(t, ts.log)
}

// TestServerDropsStalledHandshake: a peer that sends half a hello, nothing,
// or a hello one byte at a time is cut HandshakeTimeout after it
// connected (the deadline is for the whole hello, not for each byte). The
// three peers run at once.
func TestServerDropsStalledHandshake(t *testing.T) {
	const timeout = 200 * time.Millisecond
	ts := runServer(t, ServerConfig{HandshakeTimeout: timeout})
	full := syncHello(256, 256).marshal()
	peers := []struct {
		name string
		send func(net.Conn)
	}{
		{"half a hello", func(c net.Conn) { _, _ = c.Write(full[:helloSize/2]) }},
		{"nothing", func(net.Conn) {}},
		{"a byte every 20 ms", func(c net.Conn) {
			for i := range helloSize - 1 {
				if _, err := c.Write(full[i : i+1]); err != nil {
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}},
	}
	t.Run("peers", func(t *testing.T) {
		for _, p := range peers {
			t.Run(p.name, func(t *testing.T) {
				t.Parallel()
				// Before the dial: the server's deadline starts at its
				// accept, which can come before the dial returns here.
				t0 := time.Now()
				conn := ts.dial(t)
				sent := make(chan struct{})
				go func() { defer close(sent); p.send(conn) }()
				got, closed := expectClosed(t, conn, 3*time.Second)
				<-sent
				if d := closed.Sub(t0); d < timeout || d > timeout+800*time.Millisecond || len(got) != 0 {
					t.Errorf("closed after %s with %d bytes answered, want after %s with none", d, len(got), timeout)
				}
				ts.log.waitLine(t, conn.LocalAddr().String()+" closed before a test started: timed out waiting for the client")
			})
		}
	})
	ts.servesAFreshClient(t)
	checkLogLines(t, ts.log)
}

// TestServerLogsPeerVanishingMidMessage: a peer gone in the middle of a
// message (or of its header) after a few round trips is logged as such.
func TestServerLogsPeerVanishingMidMessage(t *testing.T) {
	ts := runServer(t, ServerConfig{})
	msg := make([]byte, 256)
	putHeader(msg, 3, len(msg))
	for _, c := range []struct {
		name string
		part []byte
	}{
		{"in the payload", msg[:100]},
		{"in the header", msg[:5]},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn := ts.startOK(t, syncHello(256, 64))
			if err := roundTrips(conn, 256, 64, 0, 3); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Write(c.part); err != nil {
				t.Fatal(err)
			}
			conn.Close()
			ts.log.waitLine(t, conn.LocalAddr().String()+": done after 3 messages: the client vanished in the middle of a message")
		})
	}
	checkLogLines(t, ts.log)
}

// TestServerRejectsOversizedMessageClaim: a message header claiming more
// than the test negotiated (up to 4 GiB) or less than a header ends the
// connection without a reply, and the server does not allocate what was
// claimed.
func TestServerRejectsOversizedMessageClaim(t *testing.T) {
	ts := runServer(t, ServerConfig{})
	for _, claim := range []uint32{0xFFFFFFFF, 1 << 30, 257, HeaderSize - 1, 0} {
		t.Run(fmt.Sprint(claim), func(t *testing.T) {
			conn := ts.startOK(t, syncHello(256, 256))
			if err := roundTrips(conn, 256, 256, 0, 1); err != nil {
				t.Fatal(err)
			}
			msg := make([]byte, 256)
			putHeader(msg, 1, int(claim))
			var got []byte
			allocated := allocatedDuring(func() {
				if _, err := conn.Write(msg); err != nil {
					t.Fatal(err)
				}
				got, _ = expectClosed(t, conn, 2*time.Second)
				ts.log.waitLine(t, conn.LocalAddr().String()+": done after 1 message", fmt.Sprintf("message 1 claims %d bytes, the test said 256", claim))
			})
			if len(got) != 0 {
				t.Errorf("the server replied %d bytes to a message claiming %d bytes", len(got), claim)
			}
			if allocated > 1<<20 {
				t.Errorf("%d bytes allocated while the server read a message claiming %d bytes", allocated, claim)
			}
		})
	}
	ts.servesAFreshClient(t)
	checkLogLines(t, ts.log)
}

// TestServerAcceptsShorterMessages: a message may be shorter than the
// negotiated request size (header only, or any length up to it); every
// reply still has the negotiated reply size.
func TestServerAcceptsShorterMessages(t *testing.T) {
	ts := runServer(t, ServerConfig{})
	conn := ts.startOK(t, syncHello(256, 40))
	for seq, length := range []int{HeaderSize, 9, 255, 256, HeaderSize} {
		if err := roundTrips(conn, length, 40, uint32(seq), 1); err != nil {
			t.Fatalf("a %d-byte message: %v", length, err)
		}
	}
}

// TestServerRefusesBadHellos: sizes above the server's limit (or below a
// header), a version or mode it does not know: the matching status, the
// limit in the answer, the connection closed, one log line saying why. A
// hello exactly at the limit is served. A claim of 4 GiB allocates
// nothing.
func TestServerRefusesBadHellos(t *testing.T) {
	const limit = 64 << 10
	ts := runServer(t, ServerConfig{MaxMessage: limit})
	for _, c := range []struct {
		h    hello
		want Status
		logs string
	}{
		{syncHello(limit+1, 256), StatusTooLarge, "message size outside the server's limits (mode sync, 65537/256 bytes)"},
		{syncHello(256, limit+1), StatusTooLarge, "message size outside the server's limits (mode sync, 256/65537 bytes)"},
		{syncHello(0xFFFFFFFF, 0xFFFFFFFF), StatusTooLarge, "message size outside the server's limits (mode sync, 4294967295/4294967295 bytes)"},
		{syncHello(HeaderSize-1, 256), StatusTooLarge, "message size outside the server's limits (mode sync, 7/256 bytes)"},
		{hello{Version: 2, Mode: Sync, Request: 256, Reply: 256}, StatusBadVersion, "unsupported protocol version"},
		{hello{Version: version, Mode: Connect, Request: 256, Reply: 256}, StatusBadMode, "mode not served (want sync or stream) (mode connect, 256/256 bytes)"},
		{hello{Version: version, Mode: 7, Request: 256, Reply: 256}, StatusBadMode, "mode not served (want sync or stream) (mode mode(7), 256/256 bytes)"},
	} {
		var conn net.Conn
		var a answer
		var rest []byte
		allocated := allocatedDuring(func() {
			conn, a = ts.start(t, c.h)
			rest, _ = expectClosed(t, conn, 2*time.Second)
		})
		if a.Status != c.want || a.MaxMessage != limit || len(rest) != 0 {
			t.Errorf("hello %+v: answer %q, limit %d, then %d bytes; want %q, %d, closed", c.h, a.Status, a.MaxMessage, len(rest), c.want, limit)
		}
		if allocated > 1<<20 {
			t.Errorf("hello %+v: %d bytes allocated", c.h, allocated)
		}
		ts.log.waitLine(t, conn.LocalAddr().String()+" refused: ", c.logs)
	}
	conn := ts.startOK(t, syncHello(limit, limit))
	if err := roundTrips(conn, limit, limit, 0, 3); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	if ts.Refused() != 7 || ts.Served() != 1 {
		t.Errorf("%d refused, %d served; want 7 and 1", ts.Refused(), ts.Served())
	}
	checkLogLines(t, ts.log)
}

// TestServerBusyBeyondMaxConns: with MaxConns tests running, every further
// client gets the busy answer (not a reset that loses it) and a closed
// connection; the running tests go on, and a freed place is served again.
func TestServerBusyBeyondMaxConns(t *testing.T) {
	const maxConns = 3
	ts := runServer(t, ServerConfig{MaxConns: maxConns})
	var running []net.Conn
	for i := range maxConns {
		c := ts.startOK(t, syncHello(64, 64))
		if err := roundTrips(c, 64, 64, 0, 1); err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		running = append(running, c)
	}
	const extra = 20
	for range extra {
		c, a := ts.start(t, syncHello(64, 64))
		if a.Status != StatusBusy || a.MaxMessage != DefaultMaxMessage {
			t.Fatalf("client beyond %d: %q (limit %d), want %q", maxConns, a.Status, a.MaxMessage, StatusBusy)
		}
		expectClosed(t, c, 2*time.Second)
		ts.log.waitLine(t, c.LocalAddr().String()+" refused: 3 connections already")
	}
	for i, c := range running {
		if err := roundTrips(c, 64, 64, 1, 10); err != nil {
			t.Errorf("running client %d after the refusals: %v", i, err)
		}
	}
	running[0].Close()
	ts.log.waitLine(t, running[0].LocalAddr().String()+": done after 11 messages: closed by the client")
	deadline := time.Now().Add(2 * time.Second)
	for {
		c, a := ts.start(t, syncHello(64, 64))
		if a.Status == StatusOK {
			if err := roundTrips(c, 64, 64, 0, 1); err != nil {
				t.Error(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a place freed 2 s ago is still %q", a.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ts.Refused() < extra || ts.Served() != maxConns+1 {
		t.Errorf("%d refused, %d served", ts.Refused(), ts.Served())
	}
	checkLogLines(t, ts.log)
}

// TestServerManyConcurrentClients: 50 clients at once, each with its own
// sizes, each doing 200 sync round trips: every reply carries its
// request's number and exactly the negotiated size (no byte more before
// the server's end of stream), and the log has one end line per client.
func TestServerManyConcurrentClients(t *testing.T) {
	const clients, trips = 50, 200
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 4)))
	ts := runServer(t, ServerConfig{})
	conns := make([]*net.TCPConn, clients)
	for i := range conns {
		conns[i] = ts.dial(t)
	}
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i, c := range conns {
		request, reply := HeaderSize+37*i, HeaderSize+53*(clients-1-i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- wellBehavedClient(c, request, reply, trips)
		}()
	}
	wg.Wait()
	close(errs)
	elapsed := time.Since(t0)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	for _, c := range conns {
		ts.log.waitLine(t, c.LocalAddr().String()+": done after 200 messages: closed by the client")
	}
	if ts.Served() != clients {
		t.Errorf("%d tests served, want %d", ts.Served(), clients)
	}
	checkLogLines(t, ts.log)
	t.Logf("%d clients × %d round trips in %s", clients, trips, elapsed.Round(time.Millisecond))
}

// wellBehavedClient runs one well-behaved test on c and checks that the server sends
// nothing after the last reply.
func wellBehavedClient(c *net.TCPConn, request, reply, trips int) error {
	h := syncHello(uint32(request), uint32(reply))
	if _, err := c.Write(h.marshal()); err != nil {
		return err
	}
	a, err := readAnswer(c)
	if err != nil || a.Status != StatusOK {
		return fmt.Errorf("%d/%d bytes: answer %q, %v", request, reply, a.Status, err)
	}
	if err := roundTrips(c, request, reply, 0, trips); err != nil {
		return fmt.Errorf("%d/%d bytes: %w", request, reply, err)
	}
	if err := c.CloseWrite(); err != nil {
		return err
	}
	if extra, err := io.ReadAll(c); err != nil || len(extra) != 0 {
		return fmt.Errorf("%d/%d bytes: %d bytes after the last reply, %v", request, reply, len(extra), err)
	}
	return nil
}

// TestServerDropsClientThatDoesNotRead: a client streaming requests while
// never reading its replies fills the socket buffers; the server's write
// deadline ends that connection instead of blocking, and another client is
// served promptly all along.
func TestServerDropsClientThatDoesNotRead(t *testing.T) {
	const writeTimeout = 300 * time.Millisecond
	ts := runServer(t, ServerConfig{WriteTimeout: writeTimeout})
	greedy := ts.startOK(t, hello{Version: version, Mode: Stream, Request: HeaderSize, Reply: 64 << 10, Window: 64})
	polite := ts.startOK(t, syncHello(64, 64))
	greedyEnded := make(chan time.Duration, 1)
	t0 := time.Now()
	go func() {
		// 512 requests per write; the connection must end long before
		// the 10 s deadline of ts.dial.
		batch := make([]byte, 512*HeaderSize)
		for seq := uint32(0); ; {
			for i := 0; i < len(batch); i += HeaderSize {
				putHeader(batch[i:], seq, HeaderSize)
				seq++
			}
			if _, err := greedy.Write(batch); err != nil {
				greedyEnded <- time.Since(t0)
				return
			}
		}
	}()
	var slowest time.Duration
	var greedyAfter time.Duration
	for seq := uint32(0); greedyAfter == 0; seq++ {
		select {
		case greedyAfter = <-greedyEnded:
		default:
		}
		rt := time.Now()
		if err := roundTrips(polite, 64, 64, seq, 1); err != nil {
			t.Fatalf("the other client, %s into the test: %v", time.Since(t0), err)
		}
		slowest = max(slowest, time.Since(rt))
		time.Sleep(time.Millisecond)
	}
	line := ts.log.waitLine(t, greedy.LocalAddr().String()+": done after ", " messages: timed out: the client did not read its replies")
	if greedyAfter < writeTimeout || greedyAfter > 5*time.Second {
		t.Errorf("the greedy connection ended after %s, want a little after %s", greedyAfter, writeTimeout)
	}
	if slowest >= writeTimeout {
		t.Errorf("the other client's slowest round trip took %s: it waited behind the greedy one", slowest)
	}
	ts.servesAFreshClient(t)
	checkLogLines(t, ts.log)
	t.Logf("greedy connection ended after %s (%s); the other client's slowest round trip %s", greedyAfter.Round(time.Millisecond), line, slowest)
}

// TestServerAnswersPipelinedMessages: a stream client's burst of messages
// written at once is answered message by message, in order.
func TestServerAnswersPipelinedMessages(t *testing.T) {
	const n = 500
	ts := runServer(t, ServerConfig{})
	c := ts.startOK(t, hello{Version: version, Mode: Stream, Request: 100, Reply: HeaderSize, Window: n})
	burst := make([]byte, 0, n*100)
	msg := make([]byte, 100)
	for seq := range uint32(n) {
		putHeader(msg, seq, len(msg))
		burst = append(burst, msg...)
	}
	written := make(chan error, 1)
	go func() { _, err := c.Write(burst); written <- err }()
	ack := make([]byte, HeaderSize)
	for seq := range uint32(n) {
		if _, err := io.ReadFull(c, ack); err != nil {
			t.Fatalf("ack %d: %v", seq, err)
		}
		if got, length := header(ack); got != seq || length != HeaderSize {
			t.Fatalf("ack %d: sequence %d, length %d", seq, got, length)
		}
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
}

// TestConnectProbesMakeNoLogNoise: connect-mode probes, closed at once
// either gracefully or with a reset, leave nothing in the log; a real
// test does.
func TestConnectProbesMakeNoLogNoise(t *testing.T) {
	ts := runServer(t, ServerConfig{})
	for i := range 20 {
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 { // as the client's connect mode closes: a reset
			_ = c.(*net.TCPConn).SetLinger(0)
		}
		c.Close()
	}
	c := ts.startOK(t, syncHello(64, 64))
	if err := roundTrips(c, 64, 64, 0, 1); err != nil {
		t.Fatal(err)
	}
	c.Close()
	peer := c.LocalAddr().String()
	ts.log.waitLine(t, peer+": done after 1 message", "closed by the client")
	// Serve waits for every connection it accepted, the probes (accepted
	// before the test) included: after stop the log is complete.
	ts.stop()
	want := [][]string{
		{peer + ": sync test, 64-byte requests, 64-byte replies"},
		{peer + ": done after 1 message", ": closed by the client"},
	}
	lines := ts.log.lines()
	if len(lines) != len(want) {
		t.Fatalf("log after 20 probes and one test:\n%s", ts.log)
	}
	for i, line := range lines {
		if !containsAll(line, want[i]) {
			t.Errorf("log line %d is %q, want %q", i+1, line, want[i])
		}
	}
	if ts.Served() != 1 || ts.Refused() != 0 {
		t.Errorf("%d served, %d refused; want 1 and 0", ts.Served(), ts.Refused())
	}
}

// TestServeStopsPromptlyWithClientsConnected: cancelling Serve with idle
// tests, a test in full flow and a half-finished hello returns nil at once
// (the handshake and idle timeouts are long), closes every connection and
// leaves no goroutine.
func TestServeStopsPromptlyWithClientsConnected(t *testing.T) {
	ts := runServer(t, ServerConfig{HandshakeTimeout: time.Minute, IdleTimeout: time.Minute})
	var idle []net.Conn
	for range 4 {
		c := ts.startOK(t, syncHello(128, 128))
		if err := roundTrips(c, 128, 128, 0, 2); err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	busy := ts.startOK(t, syncHello(128, 128))
	busyEnded := make(chan error, 1)
	go func() {
		for seq := uint32(0); ; seq++ {
			if err := roundTrips(busy, 128, 128, seq, 1); err != nil {
				busyEnded <- err
				return
			}
		}
	}()
	half := ts.dial(t)
	if _, err := half.Write(syncHello(128, 128).marshal()[:10]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	t0 := time.Now()
	ts.stop()
	if d := time.Since(t0); d > 500*time.Millisecond {
		t.Errorf("Serve took %s to return", d)
	}
	for i, c := range append(idle, half) {
		if got, _ := expectClosed(t, c, time.Second); len(got) != 0 {
			t.Errorf("connection %d: %d bytes after the stop", i, len(got))
		}
	}
	select {
	case <-busyEnded:
	case <-time.After(time.Second):
		t.Error("the busy client still runs 1 s after the stop")
	}
	for _, c := range append(idle, busy) {
		if line := ts.log.lineWith(c.LocalAddr().String()+": done after ", " messages: server stopped"); line == "" {
			t.Errorf("no log line says the test of %s ended with the server", c.LocalAddr())
		}
	}
	if line := ts.log.lineWith(half.LocalAddr().String() + " closed before a test started: server stopped"); line == "" {
		t.Errorf("no log line for the half hello of %s; the log:\n%s", half.LocalAddr(), ts.log)
	}
	checkLogLines(t, ts.log)
}

// TestListenErrorsNameTheProblem: an address in use is named in the error,
// as are an unusable address and a limit below the header size.
func TestListenErrorsNameTheProblem(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	for _, c := range []struct {
		cfg  ServerConfig
		want []string
	}{
		{ServerConfig{Listen: addr}, []string{"listen on " + addr, "address already in use"}},
		{ServerConfig{Listen: "db01"}, []string{"listen on db01", "missing port"}},
		{ServerConfig{Listen: "127.0.0.1:0", MaxMessage: 4}, []string{"largest message 4 bytes: want at least 8"}},
	} {
		s, err := Listen(c.cfg)
		if err == nil {
			s.ln.Close()
			t.Errorf("Listen(%+v) succeeded", c.cfg)
			continue
		}
		if !containsAll(err.Error(), c.want) {
			t.Errorf("Listen(%+v) = %v, want %q", c.cfg, err, c.want)
		}
	}
}

// FuzzServerExchange writes arbitrary bytes to a real server connection,
// after a valid hello or instead of one, then ends its side of the
// connection. The server must never panic or hang: it closes the
// connection after answering exactly what a model of the protocol says
// (the whole answer when the input ends on a message boundary, a prefix
// of it when it ends in a bad or cut message), and a fresh client is
// served afterwards. One server serves the whole fuzz run.
func FuzzServerExchange(f *testing.F) {
	const limit = 4096
	ts := runServer(f, ServerConfig{MaxMessage: limit, HandshakeTimeout: 2 * time.Second, IdleTimeout: 2 * time.Second, Log: io.Discard})
	// msgs are messages of the given lengths, numbered from 0.
	msgs := func(lengths ...int) []byte {
		var b []byte
		for seq, l := range lengths {
			m := make([]byte, l)
			putHeader(m, uint32(seq), l)
			b = append(b, m...)
		}
		return b
	}
	streamHello := hello{Version: version, Mode: Stream, Request: 512, Reply: HeaderSize, Window: 64}.marshal()
	f.Add(true, msgs(64, 64, 64))                                           // three sync round trips
	f.Add(true, msgs(8, 9, 63, 64))                                         // shorter messages
	f.Add(true, append(msgs(64), 0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF))       // then a 4 GiB claim
	f.Add(true, append(msgs(64), msgs(64)[:30]...))                         // then a cut message
	f.Add(true, append(msgs(64), 0, 0, 0, 1, 0, 0, 0, 7))                   // then a claim below a header
	f.Add(true, append(msgs(64), 0, 0, 0))                                  // then a cut header
	f.Add(true, msgs(65))                                                   // one byte above the test's size
	f.Add(true, []byte{})                                                   // hello only
	f.Add(false, append(streamHello, msgs(512, 512, 8, 512, 100)...))       // a stream burst
	f.Add(false, append(syncHello(limit, limit).marshal(), msgs(limit)...)) // at the limit
	f.Add(false, syncHello(0xFFFFFFFF, 0xFFFFFFFF).marshal())
	f.Add(false, hello{Version: version, Mode: Connect, Request: 64, Reply: 64}.marshal())
	f.Add(false, hello{Version: 2, Mode: Sync, Request: 64, Reply: 64}.marshal())
	f.Add(false, []byte("GET / HTTP/1.1\r\nHost: db01:7878\r\n\r\n"))
	f.Add(false, syncHello(64, 64).marshal()[:20])
	f.Add(false, []byte{})
	f.Fuzz(func(t *testing.T, withHello bool, data []byte) {
		in := data
		if withHello {
			in = append(syncHello(64, 32).marshal(), data...)
		}
		want, whole := serverModel(in, limit)
		c := ts.dial(t)
		got := make(chan []byte, 1)
		go func() {
			b, err := io.ReadAll(c)
			if err != nil && !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("%d bytes in: the server neither answered nor closed: %v", len(in), err)
			}
			got <- b
		}()
		_, _ = c.Write(in) // the server may close before it read everything
		_ = c.CloseWrite()
		out := <-got
		_ = c.SetLinger(0) // no TIME_WAIT pile-up over a fuzz run
		c.Close()
		if err := matchModel(out, want, whole); err != nil {
			t.Fatalf("%d bytes in (% x...): %v", len(in), in[:min(len(in), 40)], err)
		}
		ts.servesAFreshClient(t)
	})
}

// modelFrame is one piece of what the server should send: the answer, or a
// reply whose payload is not specified.
type modelFrame struct {
	head   []byte
	length int
}

// serverModel returns what the protocol says a server with the given limit
// sends for input in, and whether all of it must arrive (the input ends
// on a message boundary or inside a header: the server flushes before it
// waits for a header) or only a prefix (the input ends in a bad or cut
// message: replies not yet flushed may be lost with the connection).
func serverModel(in []byte, limit uint32) ([]modelFrame, bool) {
	h, err := readHello(bytes.NewReader(in))
	if err != nil {
		return nil, true
	}
	st := h.check(limit)
	out := []modelFrame{{head: answer{Status: st, MaxMessage: limit}.marshal(), length: answerSize}}
	if st != StatusOK {
		return out, true
	}
	rest := in[helloSize:]
	for len(rest) >= HeaderSize {
		seq, length := header(rest)
		if length < HeaderSize || length > h.Request || int(length) > len(rest) {
			return out, false
		}
		head := make([]byte, HeaderSize)
		putHeader(head, seq, int(h.Reply))
		out = append(out, modelFrame{head: head, length: int(h.Reply)})
		rest = rest[length:]
	}
	return out, true
}

// matchModel checks what the server sent against the model.
func matchModel(out []byte, want []modelFrame, whole bool) error {
	for i, f := range want {
		if len(out) == 0 && !whole {
			return nil
		}
		if len(out) < f.length {
			return fmt.Errorf("frame %d of %d: %d bytes left, want %d", i, len(want), len(out), f.length)
		}
		if !bytes.Equal(out[:len(f.head)], f.head) {
			return fmt.Errorf("frame %d of %d: % x, want % x", i, len(want), out[:len(f.head)], f.head)
		}
		out = out[f.length:]
	}
	if len(out) != 0 {
		return fmt.Errorf("%d bytes beyond the %d frames of the model", len(out), len(want))
	}
	return nil
}

// The three tests below show bugs in server.go; each is skipped until the
// fix described in its skip message is applied.

// TestServeClosesConnectionsAcceptedWhileStopping: a connection accepted
// just as the context is cancelled must be closed like the others. Serve
// adds it to its set after the cancel hook closed that set, so nothing
// closes it and Serve waits for that peer's handshake timeout (or, for a
// peer that completed its hello, until the peer stops). With clients
// connecting all the time, about one cancel in 30 hits it here: 200
// cancels miss it less than once in 200 runs (0.5 s once fixed).
func TestServeClosesConnectionsAcceptedWhileStopping(t *testing.T) {
	for i := range 200 {
		s, err := Listen(ServerConfig{Listen: "127.0.0.1:0", HandshakeTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Serve(ctx) }()
		stopDialing := make(chan struct{})
		dialer := make(chan []net.Conn, 1)
		go func() {
			var conns []net.Conn
			for {
				select {
				case <-stopDialing:
					dialer <- conns
					return
				default:
				}
				if c, err := net.Dial("tcp", s.Addr().String()); err == nil {
					conns = append(conns, c)
				}
			}
		}()
		time.Sleep(time.Millisecond)
		cancel()
		var late bool
		select {
		case <-done:
		case <-time.After(time.Second):
			late = true
		}
		close(stopDialing)
		for _, c := range <-dialer {
			_ = c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}
		if late {
			<-done
			t.Fatalf("cancel %d: Serve still running 1 s after cancel", i+1)
		}
	}
}

// TestServerMemoryPerTestWithinItsLimit: docs/nettest.md and
// DefaultMaxMessage promise that the server never allocates more than
// the limit per connection and direction. A test at the 1 MiB limit
// allocates 4 MiB: a bufio.Reader and a request buffer of the request
// size, a bufio.Writer and a reply buffer of the reply size — with the
// default 1024 connections, 4 GiB for peers that send one hello each.
func TestServerMemoryPerTestWithinItsLimit(t *testing.T) {
	const tests = 4
	ts := runServer(t, ServerConfig{})
	req, rep := make([]byte, DefaultMaxMessage), make([]byte, DefaultMaxMessage)
	conns := make([]*net.TCPConn, tests)
	for i := range conns {
		conns[i] = ts.dial(t)
	}
	h := syncHello(DefaultMaxMessage, DefaultMaxMessage).marshal()
	var ans [answerSize]byte
	allocated := allocatedDuring(func() {
		for _, c := range conns {
			_, _ = c.Write(h)
			_, _ = io.ReadFull(c, ans[:])
			putHeader(req, 0, len(req))
			_, _ = c.Write(req)
			if _, err := io.ReadFull(c, rep); err != nil {
				t.Fatal(err)
			}
		}
	})
	perTest := allocated / tests
	t.Logf("%d bytes allocated per test of 1 MiB each way", perTest)
	if perTest > 2*DefaultMaxMessage+256<<10 {
		t.Errorf("a test of 1 MiB each way allocates %d bytes, more than the 1 MiB per direction the limit promises", perTest)
	}
}

// TestServerSendsEachReplyWithoutWaitingForTheNextMessage: the server
// flushes its replies only when fewer than 8 bytes of the next message
// are buffered. When a stream client's next message has begun to arrive,
// the acknowledgement of the previous one waits until the whole next
// message is in: every stream ack is late by one message's transfer time
// (and held forever if the next message stalls).
func TestServerSendsEachReplyWithoutWaitingForTheNextMessage(t *testing.T) {
	ts := runServer(t, ServerConfig{})
	c := ts.startOK(t, hello{Version: version, Mode: Stream, Request: 1024, Reply: HeaderSize, Window: 64})
	b := make([]byte, 1024+HeaderSize+100) // message 0, then the start of message 1
	putHeader(b, 0, 1024)
	putHeader(b[1024:], 1, 1024)
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	ack := make([]byte, HeaderSize)
	if _, err := io.ReadFull(c, ack); err != nil {
		t.Fatalf("no ack for the complete message 0 within 1 s: %v", err)
	}
	if seq, _ := header(ack); seq != 0 {
		t.Errorf("ack %d, want 0", seq)
	}
}

// TestServerAllocatesNothingPerMessage: a test's messages cost the server
// no allocation (a collection would interrupt the test): 2 000 round
// trips allocate, in the whole process, less than one small object each.
func TestServerAllocatesNothingPerMessage(t *testing.T) {
	ts := runServer(t, ServerConfig{})
	c := ts.startOK(t, syncHello(64, 64))
	if err := roundTrips(c, 64, 64, 0, 100); err != nil {
		t.Fatal(err)
	}
	const n = 2000
	req, rep := make([]byte, 64), make([]byte, 64)
	var err error
	allocated := allocatedDuring(func() {
		for seq := uint32(100); seq < 100+n && err == nil; seq++ {
			putHeader(req, seq, len(req))
			if _, err = c.Write(req); err == nil {
				_, err = io.ReadFull(c, rep)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d bytes allocated over %d round trips", allocated, n)
	if allocated >= n*8 {
		t.Errorf("%d round trips allocated %d bytes: something is allocated per message", n, allocated)
	}
}
