package nettest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

// syncHello is a valid hello for a sync test of the given sizes.
func syncHello(request, reply uint32) hello {
	return hello{Version: version, Mode: Sync, Request: request, Reply: reply, Window: 1}
}

// TestHelloWireLayout checks the 24 bytes of a hello field by field, as
// docs/nettest.md describes them, and that readHello reads them back.
func TestHelloWireLayout(t *testing.T) {
	h := hello{Version: version, Mode: Stream, Request: 0x01020304, Reply: 0xA0B0C0D0, Window: 64}
	b := h.marshal()
	want := []byte{
		'L', 'S', 'N', 'T',
		0, 1, // version
		2,          // mode: stream
		0,          // flags
		1, 2, 3, 4, // request
		0xA0, 0xB0, 0xC0, 0xD0, // reply
		0, 0, 0, 64, // window
		0, 0, 0, 0, // reserved
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("hello marshals to\n% x\nwant\n% x", b, want)
	}
	for _, h := range []hello{
		h,
		syncHello(HeaderSize, HeaderSize),
		{Version: 0xFFFF, Mode: 0xFF, Request: 0xFFFFFFFF, Reply: 0xFFFFFFFF, Window: 0xFFFFFFFF},
		{},
	} {
		r := bytes.NewReader(append(h.marshal(), "next"...))
		got, err := readHello(r)
		if err != nil || got != h {
			t.Errorf("readHello(marshal(%+v)) = %+v, %v", h, got, err)
		}
		if r.Len() != 4 {
			t.Errorf("readHello consumed %d bytes, want %d", 28-r.Len(), helloSize)
		}
	}
}

// TestReadHelloErrors: an empty stream is io.EOF (a connect-mode probe,
// which the server does not log), a cut one io.ErrUnexpectedEOF, anything
// without the magic errNotLatscope.
func TestReadHelloErrors(t *testing.T) {
	full := syncHello(256, 256).marshal()
	for _, c := range []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, io.EOF},
		{"magic only", full[:4], io.ErrUnexpectedEOF},
		{"one byte short", full[:helloSize-1], io.ErrUnexpectedEOF},
		{"HTTP request", []byte("GET / HTTP/1.1\r\nHost: db01\r\n\r\n"), errNotLatscope},
		{"lower-case magic", append([]byte("lsnt"), full[4:]...), errNotLatscope},
		{"TLS client hello", append([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03}, make([]byte, 20)...), errNotLatscope},
	} {
		_, err := readHello(bytes.NewReader(c.in))
		if !errors.Is(err, c.want) {
			t.Errorf("%s: readHello = %v, want %v", c.name, err, c.want)
		}
	}
}

// TestHelloCheck covers every status a hello can get.
func TestHelloCheck(t *testing.T) {
	const limit = 1 << 16
	for _, c := range []struct {
		name string
		h    hello
		want Status
	}{
		{"sync at the header size", syncHello(HeaderSize, HeaderSize), StatusOK},
		{"stream, 64 KiB requests, 8-byte acks", hello{Version: version, Mode: Stream, Request: limit, Reply: HeaderSize, Window: 64}, StatusOK},
		{"both exactly at the limit", syncHello(limit, limit), StatusOK},
		{"window is not checked", hello{Version: version, Mode: Sync, Request: 256, Reply: 256}, StatusOK},
		{"version 0", hello{Version: 0, Mode: Sync, Request: 256, Reply: 256}, StatusBadVersion},
		{"version 2", hello{Version: 2, Mode: Sync, Request: 256, Reply: 256}, StatusBadVersion},
		{"bad version wins over bad sizes", hello{Version: 2, Mode: 9, Request: 0, Reply: 0}, StatusBadVersion},
		{"mode 0", hello{Version: version, Mode: 0, Request: 256, Reply: 256}, StatusBadMode},
		{"connect mode sends no hello", hello{Version: version, Mode: Connect, Request: 256, Reply: 256}, StatusBadMode},
		{"mode 255", hello{Version: version, Mode: 255, Request: 256, Reply: 256}, StatusBadMode},
		{"bad mode wins over bad sizes", hello{Version: version, Mode: Connect, Request: 1, Reply: 1}, StatusBadMode},
		{"request 7", syncHello(HeaderSize-1, 256), StatusTooLarge},
		{"reply 7", syncHello(256, HeaderSize-1), StatusTooLarge},
		{"request 0", syncHello(0, 256), StatusTooLarge},
		{"request one above", syncHello(limit+1, 256), StatusTooLarge},
		{"reply one above", syncHello(256, limit+1), StatusTooLarge},
		{"claims 4 GiB", syncHello(0xFFFFFFFF, 0xFFFFFFFF), StatusTooLarge},
	} {
		if got := c.h.check(limit); got != c.want {
			t.Errorf("%s: check(%+v) = %s, want %s", c.name, c.h, got, c.want)
		}
	}
}

// TestAnswerWireLayout checks the 16 bytes of every answer and that the
// client reads them back.
func TestAnswerWireLayout(t *testing.T) {
	b := answer{Status: StatusBusy, MaxMessage: 0x00100000}.marshal()
	want := []byte{'L', 'S', 'N', 'T', 0, 1, 4, 0, 0, 0x10, 0, 0, 0, 0, 0, 0}
	if !bytes.Equal(b, want) {
		t.Fatalf("answer marshals to % x, want % x", b, want)
	}
	for _, st := range []Status{StatusOK, StatusBadVersion, StatusTooLarge, StatusBadMode, StatusBusy} {
		a := answer{Status: st, MaxMessage: DefaultMaxMessage}
		got, err := readAnswer(bytes.NewReader(a.marshal()))
		if err != nil || got != a {
			t.Errorf("readAnswer(marshal(%+v)) = %+v, %v", a, got, err)
		}
	}
	if _, err := readAnswer(strings.NewReader("HTTP/1.1 400 Bad")); !errors.Is(err, errNotLatscope) {
		t.Errorf("readAnswer of an HTTP reply = %v, want errNotLatscope", err)
	}
	if _, err := readAnswer(bytes.NewReader(want[:10])); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("readAnswer of 10 bytes = %v, want io.ErrUnexpectedEOF", err)
	}
}

// TestStatusAndModeNames: every status says what went wrong in words, and
// every mode name parses back.
func TestStatusAndModeNames(t *testing.T) {
	seen := map[string]bool{}
	for _, st := range []Status{StatusOK, StatusBadVersion, StatusTooLarge, StatusBadMode, StatusBusy} {
		s := st.String()
		if seen[s] || strings.HasPrefix(s, "status ") {
			t.Errorf("status %d reads %q", st, s)
		}
		seen[s] = true
	}
	if s := Status(200).String(); s != "status 200" {
		t.Errorf("unknown status reads %q", s)
	}
	for _, m := range []Mode{Sync, Stream, Connect} {
		if got, err := ParseMode(m.String()); err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m, got, err)
		}
	}
	if _, err := ParseMode("async"); err == nil || !strings.Contains(err.Error(), "sync, stream or connect") {
		t.Errorf("ParseMode(async) = %v", err)
	}
	if s := Mode(9).String(); s != "mode(9)" {
		t.Errorf("Mode(9) reads %q", s)
	}
}

// TestHeaderPutGet: the 8-byte message header, big endian, at the extremes.
func TestHeaderPutGet(t *testing.T) {
	for _, c := range []struct {
		seq    uint32
		length int
	}{{0, HeaderSize}, {1, 256}, {0xFFFFFFFF, DefaultMaxMessage}, {0x01020304, 0x0A0B0C0D}} {
		b := []byte{9, 9, 9, 9, 9, 9, 9, 9, 0xEE}
		putHeader(b, c.seq, c.length)
		if b[8] != 0xEE {
			t.Errorf("putHeader wrote past the header")
		}
		if got := binary.BigEndian.Uint32(b); got != c.seq {
			t.Errorf("sequence %d on the wire as %d", c.seq, got)
		}
		seq, length := header(b)
		if seq != c.seq || int(length) != c.length {
			t.Errorf("header(putHeader(%d, %d)) = %d, %d", c.seq, c.length, seq, length)
		}
	}
}

// FuzzReadHello feeds arbitrary bytes to readHello and check: never a
// panic; a hello that passes has a known version and mode and sizes
// within [HeaderSize, limit]; what was read marshals back to the same
// bytes except flags and reserved ones, and exactly 24 bytes are consumed.
func FuzzReadHello(f *testing.F) {
	f.Add(syncHello(256, 256).marshal(), uint32(DefaultMaxMessage))
	f.Add(hello{Version: version, Mode: Stream, Request: 64 << 10, Reply: HeaderSize, Window: 64}.marshal(), uint32(DefaultMaxMessage))
	f.Add(syncHello(DefaultMaxMessage, DefaultMaxMessage).marshal(), uint32(DefaultMaxMessage))
	f.Add(syncHello(0xFFFFFFFF, 0xFFFFFFFF).marshal(), uint32(DefaultMaxMessage))
	f.Add(hello{Version: version, Mode: Connect, Request: 256, Reply: 256}.marshal(), uint32(1024))
	f.Add(syncHello(4, 4).marshal(), uint32(HeaderSize))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: db01\r\n\r\n"), uint32(DefaultMaxMessage))
	f.Add([]byte("LSNT"), uint32(DefaultMaxMessage))
	f.Add([]byte{}, uint32(0))
	f.Fuzz(func(t *testing.T, in []byte, limit uint32) {
		r := bytes.NewReader(in)
		h, err := readHello(r)
		if err != nil {
			if len(in) >= helloSize && !errors.Is(err, errNotLatscope) {
				t.Fatalf("%d bytes: %v", len(in), err)
			}
			return
		}
		if r.Len() != len(in)-helloSize {
			t.Fatalf("readHello consumed %d of %d bytes", len(in)-r.Len(), len(in))
		}
		back := h.marshal()
		for i := range helloSize {
			if back[i] != in[i] && i != 7 && i < 20 { // 7: flags, 20-23: reserved
				t.Fatalf("byte %d read as %#x, marshals back as %#x", i, in[i], back[i])
			}
		}
		if h.check(limit) != StatusOK {
			return
		}
		if h.Version != version || (h.Mode != Sync && h.Mode != Stream) ||
			h.Request < HeaderSize || h.Reply < HeaderSize || h.Request > limit || h.Reply > limit {
			t.Fatalf("check(%d) passed %+v", limit, h)
		}
	})
}
