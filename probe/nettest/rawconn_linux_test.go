//go:build linux

package nettest

import (
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// socketPair returns the two ends of a loopback TCP connection.
func socketPair(t *testing.T) (server, client *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cl, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	sv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close(); sv.Close() })
	return sv.(*net.TCPConn), cl.(*net.TCPConn)
}

// TestBlockingTestConnTakesTheSocketOver: on Linux a test's connection
// is read and written with blocking system calls on a descriptor the
// netpoller does not watch (the net.Conn is closed); bytes flow both ways,
// an end of file is io.EOF, deadlines and the server's stop end a blocked
// read within about rawTick.
func TestBlockingTestConnTakesTheSocketOver(t *testing.T) {
	sv, cl := socketPair(t)
	var stopping atomic.Bool
	tc, release := blockingTestConn(sv, stopping.Load)
	defer release()
	raw, ok := tc.(*serverConn)
	if !ok {
		t.Fatalf("blockingTestConn returned %T, want *serverConn", tc)
	}
	if _, err := sv.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("writing to the net.Conn after the takeover: %v, want net.ErrClosed", err)
	}
	if fdInfo(t, raw.b.fd) != "blocking" {
		t.Errorf("the descriptor is not in blocking mode")
	}

	if _, err := cl.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, err := tc.Read(buf)
	if err != nil || string(buf[:n]) != "ping" {
		t.Fatalf("read %q, %v; want \"ping\"", buf[:n], err)
	}
	if _, err := tc.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(cl, buf[:4]); err != nil || string(buf[:4]) != "pong" {
		t.Fatalf("the client read %q, %v; want \"pong\"", buf[:4], err)
	}

	tc.SetReadTimeout(150 * time.Millisecond)
	t0 := time.Now()
	if _, err := tc.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read past the deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	if d := time.Since(t0); d < 150*time.Millisecond || d > 150*time.Millisecond+3*rawTick {
		t.Errorf("the read gave up after %s, want 150 ms + at most about %s", d, rawTick)
	}

	tc.SetReadTimeout(0)
	go func() {
		time.Sleep(50 * time.Millisecond)
		stopping.Store(true)
	}()
	t0 = time.Now()
	if _, err := tc.Read(buf); !errors.Is(err, net.ErrClosed) {
		t.Errorf("read while the server stops: %v, want net.ErrClosed", err)
	}
	if d := time.Since(t0); d > 50*time.Millisecond+3*rawTick {
		t.Errorf("the stop was seen after %s, want within about %s", d, rawTick)
	}

	stopping.Store(false)
	cl.Close()
	if _, err := tc.Read(buf); !errors.Is(err, io.EOF) {
		t.Errorf("read after the client closed: %v, want io.EOF", err)
	}
}

// fdInfo reports whether fd (of this process) is "blocking" or
// "nonblocking", from /proc/self/fdinfo (flags in octal; O_NONBLOCK is
// 04000).
func fdInfo(t *testing.T, fd uintptr) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(int(fd)))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			if err != nil {
				t.Fatal(err)
			}
			if flags&0o4000 != 0 {
				return "nonblocking"
			}
			return "blocking"
		}
	}
	t.Fatalf("no flags in %s", b)
	return ""
}

// TestServeStopsWithAWriteBlocked: a client that never reads its replies
// leaves the server's blocking write waiting for socket space; stopping
// the server ends that test within about rawTick all the same.
func TestServeStopsWithAWriteBlocked(t *testing.T) {
	ts := runServer(t, ServerConfig{WriteTimeout: time.Minute})
	greedy := ts.startOK(t, hello{Version: version, Mode: Stream, Request: HeaderSize, Reply: 64 << 10, Window: 64})
	batch := make([]byte, 512*HeaderSize)
	for i := 0; i < len(batch); i += HeaderSize {
		putHeader(batch[i:], uint32(i/HeaderSize), HeaderSize)
	}
	if _, err := greedy.Write(batch); err != nil { // 32 MiB of replies owed
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	t0 := time.Now()
	ts.stop()
	if d := time.Since(t0); d > 3*rawTick+200*time.Millisecond {
		t.Errorf("Serve took %s to return", d)
	}
	ts.log.waitLine(t, greedy.LocalAddr().String()+": done after ", "server stopped")
}

// TestDeadlineConnTimesOutEachWait: through the netpoller (the server's
// path where blocking calls are impossible) a test's timeouts bound each
// wait as serverConn's do.
func TestDeadlineConnTimesOutEachWait(t *testing.T) {
	sv, cl := socketPair(t)
	tc := &deadlineConn{Conn: sv}
	tc.SetReadTimeout(100 * time.Millisecond)
	if _, err := cl.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := tc.Read(buf); err != nil || string(buf[:n]) != "ping" {
		t.Fatalf("read %q, %v; want \"ping\"", buf[:n], err)
	}
	t0 := time.Now()
	if _, err := tc.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read with nothing sent: %v, want os.ErrDeadlineExceeded", err)
	}
	if d := time.Since(t0); d < 100*time.Millisecond || d > time.Second {
		t.Errorf("the read gave up after %s, want about 100 ms", d)
	}
	tc.SetReadTimeout(0)
	go func() {
		time.Sleep(150 * time.Millisecond)
		cl.Write([]byte("late"))
	}()
	if n, err := tc.Read(buf); err != nil || string(buf[:n]) != "late" {
		t.Errorf("read without a timeout: %q, %v; want \"late\"", buf[:n], err)
	}
}
