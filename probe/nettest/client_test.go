package nettest

import (
	"context"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/stream"
)

// runClient runs a test of cfg for d and returns its result; the run must
// end cleanly.
func runClient(t *testing.T, cfg Config, d time.Duration) Result {
	t.Helper()
	res, ivs, err := runClientErr(t, cfg, d)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkIntervals(t, ivs, res)
	return res
}

func runClientErr(t *testing.T, cfg Config, d time.Duration) (Result, []stream.Interval, error) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), cfg.Connections+2)))
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	test := New(cfg, input.NewDiagnostics(nil, 5))
	var ivs []stream.Interval
	err := test.Run(ctx, func(iv stream.Interval) error { ivs = append(ivs, iv); return nil })
	return test.Result(), ivs, err
}

// checkIntervals asserts that the intervals join up and hold exactly the
// round trips of the result.
func checkIntervals(t *testing.T, ivs []stream.Interval, res Result) {
	t.Helper()
	total := 0.0
	for i, iv := range ivs {
		if err := iv.Validate(); err != nil {
			t.Errorf("interval %d: %v", i, err)
		}
		if i > 0 && !iv.Start.Equal(ivs[i-1].End()) {
			t.Errorf("interval %d starts at %s, the previous ended at %s", i, iv.Start, ivs[i-1].End())
		}
		for _, s := range iv.Series {
			total += s.Hist.Count()
		}
	}
	if total != res.Total.Lat.Count() || len(res.Intervals) < len(ivs) {
		t.Errorf("intervals hold %g round trips, the result %g", total, res.Total.Lat.Count())
	}
}

func TestSyncRoundTrips(t *testing.T) {
	srv := startServer(t, ServerConfig{})
	res := runClient(t, Config{Addr: srv.Addr().String(), Request: 100, Reply: 2000, Connections: 2, Interval: 200 * time.Millisecond}, time.Second)
	n := res.Total.Lat.Count()
	if n < 500 || res.Errors != 0 || res.Lost != 0 || res.Elapsed < 900*time.Millisecond {
		t.Fatalf("%g round trips, %d errors, %d lost in %s", n, res.Errors, res.Lost, res.Elapsed)
	}
	rep := NewReport(res, nil)
	if rep.RoundTrips != int64(n) || rep.RequestBytes != 100 || rep.ReplyBytes != 2000 || rep.Connections != 2 ||
		!(rep.P50US <= rep.P90US && rep.P90US <= rep.P99US && rep.P99US <= rep.P999US && rep.P999US <= rep.MaxUS) {
		t.Errorf("report %+v", rep)
	}
	// MB/s counts the requests: 100 bytes per round trip.
	if want := rep.PerSecond * 100 / 1e6; rep.MBs < want*0.999 || rep.MBs > want*1.001 {
		t.Errorf("%g MB/s at %g round trips/s of 100-byte requests", rep.MBs, rep.PerSecond)
	}
	t.Logf("sync: %g round trips, p50 %.1f µs, p99 %.1f µs", n, rep.P50US, rep.P99US)
}

func TestOpenLoopKeepsItsRate(t *testing.T) {
	srv := startServer(t, ServerConfig{})
	res := runClient(t, Config{Addr: srv.Addr().String(), Rate: 2000, Connections: 2, Interval: 500 * time.Millisecond}, time.Second)
	// 2000 Poisson arrivals: ±10 % is over four standard deviations.
	if n := res.Total.Lat.Count(); n < 1800 || n > 2200 {
		t.Errorf("%g round trips at 2000/s for 1 s", n)
	}
	if res.Total.Delay.Count() != res.Total.Lat.Count() {
		t.Errorf("%g issue delays for %g round trips", res.Total.Delay.Count(), res.Total.Lat.Count())
	}
	t.Logf("open loop: issue delay p50 %.1f µs p99 %.1f µs", res.Total.Delay.Quantile(0.5), res.Total.Delay.Quantile(0.99))
}

func TestStreamAndConnectModes(t *testing.T) {
	srv := startServer(t, ServerConfig{})
	stream := runClient(t, Config{Addr: srv.Addr().String(), Mode: Stream, Request: 64 << 10, Interval: 100 * time.Millisecond}, 500*time.Millisecond)
	connect := runClient(t, Config{Addr: srv.Addr().String(), Mode: Connect, Interval: 100 * time.Millisecond}, 500*time.Millisecond)
	sync := runClient(t, Config{Addr: srv.Addr().String(), Interval: 100 * time.Millisecond}, 500*time.Millisecond)
	for name, r := range map[string]Result{"stream": stream, "connect": connect, "sync": sync} {
		if r.Total.Lat.Count() < 100 || r.Errors != 0 {
			t.Errorf("%s: %g measured, %d errors", name, r.Total.Lat.Count(), r.Errors)
		}
	}
	sr := NewReport(stream, nil)
	if sr.ReplyBytes != HeaderSize || sr.MBs < 10 {
		t.Errorf("stream of 64 KiB messages: %d-byte acks, %.1f MB/s", sr.ReplyBytes, sr.MBs)
	}
	t.Logf("p50: sync %.1f µs, connect %.1f µs, stream ack %.1f µs at %.0f MB/s",
		sync.Total.Lat.Quantile(0.5), connect.Total.Lat.Quantile(0.5), stream.Total.Lat.Quantile(0.5), sr.MBs)
}

func TestClientErrorsNameTheProblem(t *testing.T) {
	// A port nobody listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	// A server that is not latscope: it answers with an HTTP error.
	http, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer http.Close()
	go func() {
		for {
			c, err := http.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
			c.Close()
		}
	}()
	small := startServer(t, ServerConfig{MaxMessage: 1024})
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Addr: closed}, "is `latscope nettest server` running there?"},
		{Config{Addr: http.Addr().String()}, "not a latscope nettest server"},
		{Config{Addr: small.Addr().String(), Request: 4096}, "refused the test: message size outside the server's limits"},
		{Config{Addr: "nohostport"}, "want HOST:PORT"},
		{Config{Addr: closed, Request: 4}, "at least 8"},
		{Config{Addr: closed, Mode: Stream, Rate: 10}, "stream mode"},
	} {
		_, _, err := runClientErr(t, c.cfg, 5*time.Second)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}

// TestServerVanishing stops the server in the middle of a test: the client
// keeps what it measured and says every connection ended.
func TestServerVanishing(t *testing.T) {
	s, err := Listen(ServerConfig{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = s.Serve(ctx) }()
	time.AfterFunc(500*time.Millisecond, cancel)
	res, _, err := runClientErr(t, Config{Addr: s.Addr().String(), Interval: 100 * time.Millisecond}, 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "every connection ended") {
		t.Errorf("Run = %v, want a lost-connection error", err)
	}
	if res.Total.Lat.Count() == 0 || res.Lost != 1 {
		t.Errorf("kept %g round trips, %d lost connections", res.Total.Lat.Count(), res.Lost)
	}
}

// TestSilentServerTimesOut: a server that accepts the test and then never
// replies ends the round trip after --timeout, with an error saying so,
// instead of hanging the client.
func TestSilentServerTimesOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if _, err := readHello(c); err != nil {
			return
		}
		_, _ = c.Write(answer{Status: StatusOK, MaxMessage: DefaultMaxMessage}.marshal())
		buf := make([]byte, 4096)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
		}
	}()
	begin := time.Now()
	_, _, err = runClientErr(t, Config{Addr: ln.Addr().String(), Timeout: 500 * time.Millisecond}, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "no reply within 500ms") || time.Since(begin) > 3*time.Second {
		t.Errorf("after %s: %v, want a timeout after 0.5 s", time.Since(begin), err)
	}
}
