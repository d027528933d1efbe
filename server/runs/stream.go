package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/httpsec"
)

// Defaults of the runs' event streams.
const (
	DefaultMaxStreams      = 100
	DefaultStreamHeartbeat = 15 * time.Second
	// streamStall bounds every write to a stream: a client that reads
	// nothing for that long is disconnected.
	streamStall = 10 * time.Second
	// logChunk bounds each piece of the stored log a stream sends, and so
	// what a stream holds in memory while it catches up.
	logChunk = 64 << 10
)

// Stream event types besides the feed's (state, progress, log).
const (
	// StreamShutdown ends every stream when the server stops.
	StreamShutdown = "shutdown"
	// StreamUnauthorized ends a stream whose credential was revoked,
	// expired or lowered (checked at every heartbeat).
	StreamUnauthorized = "unauthorized"
)

// ErrTooManyStreams refuses a stream beyond Options.MaxStreams.
var ErrTooManyStreams = errors.New("too many run event streams")

// streams counts the open event streams and ends them at shutdown.
type streams struct {
	max  int64
	open atomic.Int64
	done chan struct{}
	once sync.Once
}

func newStreams(max int) *streams {
	return &streams{max: int64(max), done: make(chan struct{})}
}

func (s *streams) acquire() bool {
	if s.open.Add(1) > s.max {
		s.open.Add(-1)
		return false
	}
	return true
}

func (s *streams) release() { s.open.Add(-1) }

// EndStreams ends every event stream of runs with a "shutdown" event
// (for http.Server.RegisterOnShutdown: open streams would hold Shutdown);
// streams opened later end at once.
func (e *Executor) EndStreams() { e.streams.once.Do(func() { close(e.streams.done) }) }

// logEvent is the data of a "log" event: Text was written to the run's
// log at Offset. Its SSE id is the offset after it.
type logEvent struct {
	Offset int64  `json:"offset"`
	Text   string `json:"text"`
}

// events streams a run's events as Server-Sent Events: its state, its
// log from the offset of Last-Event-ID (or ?offset=, else the start)
// read from the stored log, then its progress and log as they come,
// until its final state. A run that has ended gets its log and final
// state at once.
func (h handlers) events(rt *httpsec.Router) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r)
		var from int64
		if err == nil {
			from, err = resumeOffset(r)
		}
		if err == nil && !h.e.streams.acquire() {
			err = httpsec.Unavailable(fmt.Errorf("%w: %d open, the limit", ErrTooManyStreams, h.e.streams.max))
		}
		if err != nil {
			rt.Fail(w, r, err)
			return
		}
		defer h.e.streams.release()
		feed, stop, err := h.e.Subscribe(r.Context(), id)
		if err != nil {
			rt.Fail(w, r, err)
			return
		}
		defer stop()
		sse, err := httpsec.NewSSEWriter(w, streamStall)
		if err != nil {
			return
		}
		s := &runStream{sse: sse, logPath: filepath.Join(h.e.runDir(id), LogName), next: from}
		stillAllowed := func() bool { return rt.StillAllowed(r, auth.Viewer) }
		s.follow(r.Context(), feed, h.e.opt.StreamHeartbeat, h.e.streams.done, stillAllowed)
	}
}

// resumeOffset is the log offset a stream starts from: Last-Event-ID (a
// reconnecting client's) before ?offset=.
func resumeOffset(r *http.Request) (int64, error) {
	v, name := r.Header.Get("Last-Event-ID"), "Last-Event-ID"
	if v == "" {
		v, name = r.URL.Query().Get("offset"), "offset"
	}
	n, err := optionalInt(v)
	if err != nil {
		return 0, fmt.Errorf("%w: %s %q: want a log offset (a non-negative integer)", auth.ErrInvalid, name, v)
	}
	return n, nil
}

// runStream is one event stream being written.
type runStream struct {
	sse     *httpsec.SSEWriter
	logPath string
	// next is the log offset the client has everything before.
	next int64
}

// follow writes the feed's events and the heartbeats until the feed ends
// (after the final state), the client leaves, a heartbeat finds the
// credential gone or the server stops.
func (s *runStream) follow(ctx context.Context, feed <-chan Event, heartbeat time.Duration, shutdown <-chan struct{}, stillAllowed func() bool) {
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case ev, ok := <-feed:
			if !ok {
				return
			}
			if err := s.send(ev); err != nil {
				return
			}
		case <-tick.C:
			if !stillAllowed() {
				s.end(StreamUnauthorized, "the credential is no longer valid")
				return
			}
			s.sse.Comment("heartbeat")
		case <-shutdown:
			s.end(StreamShutdown, "the server is stopping")
			return
		case <-ctx.Done():
			return
		}
		if err := s.sse.Flush(); err != nil {
			return
		}
	}
}

// send writes one of the feed's events. Log text is read from the stored
// log (where the feed's is written first), from what the client has up
// to the event's end: events the feed dropped, or written before the
// stream began, come with it, and nothing is sent twice. The first
// state is followed by the log so far; the final one comes after all of
// it.
func (s *runStream) send(ev Event) error {
	switch ev.Type {
	case EventState:
		final := ev.Run.State.Final()
		if final {
			if err := s.catchUp(-1, true); err != nil {
				return err
			}
		}
		s.event(string(EventState), "", ev.Run)
		if !final {
			return s.catchUp(-1, false)
		}
	case EventProgress:
		s.event(string(EventProgress), "", ev.Progress)
	case EventLog:
		return s.catchUp(ev.Offset+int64(len(ev.Text)), false)
	}
	return nil
}

// catchUp sends the stored log from the client's offset up to until (-1:
// its end) in bounded pieces. A rune cut at the end (between two writes
// of a child) waits for the rest of its bytes, unless the log is
// complete.
func (s *runStream) catchUp(until int64, complete bool) error {
	for until < 0 || s.next < until {
		n := int64(logChunk)
		if until >= 0 {
			n = min(n, until-s.next)
		}
		text, err := readFrom(s.logPath, s.next, int(n))
		if err != nil {
			return err
		}
		last := int64(len(text)) < n || until >= 0 && s.next+n >= until
		if !last || !complete {
			text = text[:wholeRunes(text)]
		}
		if text == "" {
			return nil
		}
		end := s.next + int64(len(text))
		s.event(string(EventLog), strconv.FormatInt(end, 10), logEvent{Offset: s.next, Text: text})
		s.next = end
		if err := s.sse.Flush(); err != nil || last {
			return err
		}
	}
	return nil
}

// wholeRunes is the length of text without a rune cut at its end.
func wholeRunes(text string) int {
	for i := len(text) - 1; i >= 0 && i >= len(text)-utf8.UTFMax; i-- {
		if utf8.RuneStart(text[i]) {
			if !utf8.FullRuneInString(text[i:]) {
				return i
			}
			break
		}
	}
	return len(text)
}

func (s *runStream) event(typ, id string, v any) {
	data, _ := json.Marshal(v)
	s.sse.Event(httpsec.SSEEvent{ID: id, Type: typ, Data: data})
}

// end tells the client why its stream ends, within a short deadline (it
// may be gone).
func (s *runStream) end(typ, reason string) {
	s.event(typ, "", map[string]string{"reason": reason})
	_ = s.sse.FlushWithin(time.Second)
}
