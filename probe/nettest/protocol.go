package nettest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The wire protocol, version 1 (docs/nettest.md). Every integer is big
// endian.
//
// A connection starts with the client's hello (24 bytes):
//
//	"LSNT" | version u16 | mode u8 | flags u8 | request u32 | reply u32 | window u32 | reserved u32
//
// and the server's answer (16 bytes):
//
//	"LSNT" | version u16 | status u8 | reserved u8 | max message u32 | reserved u32
//
// After an OK answer, messages flow: each is an 8-byte header (sequence
// u32, message length u32, the header included) and length−8 payload
// bytes. In sync mode the server answers every request with a reply of the
// negotiated reply size carrying the request's sequence number; in stream
// mode the client sends without waiting (at most window messages
// unacknowledged) and the server answers each message the same way. A
// connection in connect mode sends nothing: it measures the TCP set-up.
const (
	magic      = "LSNT"
	version    = 1
	helloSize  = 24
	answerSize = 16
	HeaderSize = 8
	// DefaultMaxMessage bounds what a server accepts: it never allocates
	// more than this per connection and direction, whatever a peer claims.
	DefaultMaxMessage = 1 << 20
)

// Mode is what a client measures.
type Mode uint8

// Modes.
const (
	// Sync: one request in flight per connection, the reply acknowledges
	// it (a SQL*Net round trip, Data Guard SYNC).
	Sync Mode = 1
	// Stream: pipelined messages, each acknowledged; latency is send to
	// acknowledgement.
	Stream Mode = 2
	// Connect: TCP connection set-up only (the hping SYN analogue).
	Connect Mode = 3
)

// String is the mode's name on the command line.
func (m Mode) String() string {
	switch m {
	case Sync:
		return "sync"
	case Stream:
		return "stream"
	case Connect:
		return "connect"
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// ParseMode reads sync, stream or connect.
func ParseMode(s string) (Mode, error) {
	for _, m := range []Mode{Sync, Stream, Connect} {
		if s == m.String() {
			return m, nil
		}
	}
	return 0, fmt.Errorf("mode %q: want sync, stream or connect", s)
}

// Status is the server's answer to a hello.
type Status uint8

// Statuses.
const (
	StatusOK Status = iota
	StatusBadVersion
	StatusTooLarge
	StatusBadMode
	StatusBusy
)

func (s Status) String() string {
	switch s {
	case StatusOK:
		return "ok"
	case StatusBadVersion:
		return "unsupported protocol version"
	case StatusTooLarge:
		return "message size outside the server's limits"
	case StatusBadMode:
		return "mode not served (want sync or stream)"
	case StatusBusy:
		return "server busy: too many connections"
	}
	return fmt.Sprintf("status %d", uint8(s))
}

// hello is the client's request for a test.
type hello struct {
	Version        uint16
	Mode           Mode
	Request, Reply uint32
	Window         uint32
}

// errNotLatscope says the peer does not speak this protocol.
var errNotLatscope = errors.New("not a latscope nettest peer (bad magic)")

func (h hello) marshal() []byte {
	b := make([]byte, helloSize)
	copy(b, magic)
	binary.BigEndian.PutUint16(b[4:], h.Version)
	b[6] = byte(h.Mode)
	binary.BigEndian.PutUint32(b[8:], h.Request)
	binary.BigEndian.PutUint32(b[12:], h.Reply)
	binary.BigEndian.PutUint32(b[16:], h.Window)
	return b
}

// readHello reads and decodes a hello; it only checks the magic, as soon
// as its 4 bytes are in (an HTTP or TLS probe is dropped at once).
func readHello(r io.Reader) (hello, error) {
	var b [helloSize]byte
	if _, err := io.ReadFull(r, b[:4]); err != nil {
		return hello{}, err
	}
	if string(b[:4]) != magic {
		return hello{}, errNotLatscope
	}
	if _, err := io.ReadFull(r, b[4:]); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return hello{}, err
	}
	return hello{
		Version: binary.BigEndian.Uint16(b[4:]), Mode: Mode(b[6]),
		Request: binary.BigEndian.Uint32(b[8:]), Reply: binary.BigEndian.Uint32(b[12:]),
		Window: binary.BigEndian.Uint32(b[16:]),
	}, nil
}

// check returns the status a server with the given message limit answers.
func (h hello) check(maxMessage uint32) Status {
	switch {
	case h.Version != version:
		return StatusBadVersion
	case h.Mode != Sync && h.Mode != Stream:
		return StatusBadMode
	case h.Request < HeaderSize || h.Reply < HeaderSize || h.Request > maxMessage || h.Reply > maxMessage:
		return StatusTooLarge
	}
	return StatusOK
}

// answer is the server's reply to a hello.
type answer struct {
	Status     Status
	MaxMessage uint32
}

func (a answer) marshal() []byte {
	b := make([]byte, answerSize)
	copy(b, magic)
	binary.BigEndian.PutUint16(b[4:], version)
	b[6] = byte(a.Status)
	binary.BigEndian.PutUint32(b[8:], a.MaxMessage)
	return b
}

func readAnswer(r io.Reader) (answer, error) {
	var b [answerSize]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return answer{}, err
	}
	if string(b[:4]) != magic {
		return answer{}, errNotLatscope
	}
	return answer{Status: Status(b[6]), MaxMessage: binary.BigEndian.Uint32(b[8:])}, nil
}

// putHeader writes a message header into b (len(b) ≥ HeaderSize).
func putHeader(b []byte, seq uint32, length int) {
	binary.BigEndian.PutUint32(b, seq)
	binary.BigEndian.PutUint32(b[4:], uint32(length))
}

// header decodes a message header.
func header(b []byte) (seq, length uint32) {
	return binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:])
}
