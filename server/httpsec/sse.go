package httpsec

import (
	"bytes"
	"net/http"
	"strconv"
	"time"
)

// SSEEvent is one Server-Sent Event.
type SSEEvent struct {
	// ID, when set, becomes the client's last event id (sent back as
	// Last-Event-ID when it reconnects); empty leaves it unchanged.
	ID string
	// Type is the event's name (empty: the default "message").
	Type string
	// Data is sent as one data: field per line.
	Data []byte
}

// SSEWriter writes Server-Sent Events to a response. Events are buffered
// until Flush, which bounds the write with a deadline: a client that stops
// reading fails the flush instead of holding the handler forever. It knows
// nothing of what is streamed: live intervals and run progress use it.
type SSEWriter struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	stall time.Duration
	buf   bytes.Buffer
}

// keepBuffer is the most buffer capacity kept between flushes.
const keepBuffer = 64 << 10

// NewSSEWriter starts an event stream: it answers 200 with the
// text/event-stream headers and flushes them. stall bounds every flush
// (0: no bound).
func NewSSEWriter(w http.ResponseWriter, stall time.Duration) (*SSEWriter, error) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no") // a proxy must pass events on at once
	rc := http.NewResponseController(w)
	// The server's read timeout would cancel a long stream: the request
	// has been read, and dead peers are found by the write deadlines.
	_ = rc.SetReadDeadline(time.Time{})
	w.WriteHeader(http.StatusOK)
	s := &SSEWriter{w: w, rc: rc, stall: stall}
	return s, s.Flush()
}

// Event buffers one event.
func (s *SSEWriter) Event(ev SSEEvent) {
	if ev.ID != "" {
		s.field("id", []byte(ev.ID))
	}
	if ev.Type != "" {
		s.field("event", []byte(ev.Type))
	}
	for line := range bytes.SplitSeq(ev.Data, []byte("\n")) {
		s.field("data", line)
	}
	s.buf.WriteByte('\n')
}

// Comment buffers a comment line, which clients ignore: a heartbeat.
func (s *SSEWriter) Comment(text string) {
	s.buf.WriteString(": ")
	s.buf.WriteString(text)
	s.buf.WriteString("\n\n")
}

// Retry buffers the client's reconnection delay.
func (s *SSEWriter) Retry(d time.Duration) {
	s.field("retry", strconv.AppendInt(nil, d.Milliseconds(), 10))
	s.buf.WriteByte('\n')
}

func (s *SSEWriter) field(name string, value []byte) {
	s.buf.WriteString(name)
	s.buf.WriteString(": ")
	if bytes.IndexByte(value, '\r') >= 0 {
		value = bytes.ReplaceAll(value, []byte("\r"), nil) // a CR would end the line
	}
	s.buf.Write(value)
	s.buf.WriteByte('\n')
}

// Flush writes the buffered events within the stall deadline.
func (s *SSEWriter) Flush() error {
	return s.FlushWithin(s.stall)
}

// FlushWithin writes the buffered events within d (0: no bound): a
// stream's last words use a short one, as its client may be gone.
func (s *SSEWriter) FlushWithin(d time.Duration) error {
	if d > 0 {
		// Errors mean the connection cannot take deadlines (a test
		// recorder); writes are then unbounded.
		_ = s.rc.SetWriteDeadline(time.Now().Add(d))
	}
	if s.buf.Len() > 0 {
		_, err := s.w.Write(s.buf.Bytes())
		s.buf.Reset()
		if s.buf.Cap() > keepBuffer {
			s.buf = bytes.Buffer{}
		}
		if err != nil {
			return err
		}
	}
	return s.rc.Flush()
}
