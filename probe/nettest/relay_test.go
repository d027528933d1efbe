package nettest

import (
	"context"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/pace"
)

// relay is a test TCP proxy that holds every chunk going from the client
// to the server for a fixed delay before passing it on: a stand-in for a
// longer network, as these kernels have no netem. Replies pass at once.
type relay struct {
	ln     net.Listener
	target string
	delay  time.Duration
	margin time.Duration
	wg     sync.WaitGroup
}

func startRelay(t *testing.T, target string, delay time.Duration) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln, target: target, delay: delay, margin: pace.Calibrate()}
	r.wg.Add(1)
	go r.accept()
	t.Cleanup(func() { ln.Close(); r.wg.Wait() })
	return r
}

func (r *relay) addr() string { return r.ln.Addr().String() }

func (r *relay) accept() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", r.target)
		if err != nil {
			c.Close()
			continue
		}
		r.wg.Add(2)
		go func() { defer r.wg.Done(); r.delayed(c, s); s.Close() }()
		go func() { defer r.wg.Done(); _, _ = io.Copy(c, s); c.Close() }()
	}
}

type chunk struct {
	data []byte
	due  time.Time
}

// delayed copies src to dst, each chunk delay after it was read; a
// precise pacer (not a Go timer, ~1 ms late) waits for the due time.
func (r *relay) delayed(src, dst net.Conn) {
	q := make(chan chunk, 1024)
	go func() {
		defer close(q)
		for {
			b := make([]byte, 64<<10)
			n, err := src.Read(b)
			if n > 0 {
				q <- chunk{b[:n], time.Now().Add(r.delay)}
			}
			if err != nil {
				return
			}
		}
	}()
	p := pace.NewPacer(r.margin)
	defer runtime.UnlockOSThread()
	for c := range q {
		p.WaitUntil(c.due, func() bool { return false })
		if _, err := dst.Write(c.data); err != nil {
			return
		}
	}
}

// startServer runs a nettest server on a free loopback port until the
// test ends.
func startServer(t *testing.T, cfg ServerConfig) *Server {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	s, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s
}

// TestRelayAddsItsDelayToTheHistogram shows that the histogram sees the
// network: a relay holding each request 1 ms moves the median round trip
// by 1 ms (compared with the same relay holding nothing, so that the
// relay's own forwarding cost cancels out).
func TestRelayAddsItsDelayToTheHistogram(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 4)))
	srv := startServer(t, ServerConfig{})
	p50 := func(delay time.Duration) float64 {
		r := startRelay(t, srv.Addr().String(), delay)
		res := runClient(t, Config{Addr: r.addr(), Request: 250, Reply: 250, Interval: 250 * time.Millisecond}, time.Second)
		return res.Total.Lat.Quantile(0.5)
	}
	base, delayed := p50(0), p50(time.Millisecond)
	shift := delayed - base
	t.Logf("p50 through the relay: %.1f µs without delay, %.1f µs with 1 ms: +%.1f µs", base, delayed, shift)
	// The relay's writer is awake when a delayed chunk falls due but must
	// be woken for an undelayed one (tens of µs here): the shift can fall
	// a little short of the full millisecond. On a machine busy with other
	// test packages the relay's wake-ups can only be later, not earlier.
	if shift < 900 || shift > 1500 {
		t.Errorf("1 ms of added delay moved p50 by %.1f µs, want 900 to 1500", shift)
	}
}
