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
	max, open atomic.Int64
	done      chan struct{}
	once      sync.Once
}

func newStreams(max int) *streams {
	s := &streams{done: make(chan struct{})}
	s.max.Store(int64(max))
	return s
}

func (s *streams) acquire() bool {
	if s.open.Add(1) > s.max.Load() {
		s.open.Add(-1)
		return false
	}
	return true
}

func (s *streams) release() { s.open.Add(-1) }

// EndStreams ends every event stream of runs with a "shutdown" event
// (for http.Server.RegisterOnShutdown: open streams would hold Shutdown);
// new ones still start and end with the feeds' final states.
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
			err = ErrTooManyStreams
		}
		if err != nil {
			rt.API(refusal(err))(w, r)
			return
		}
		defer h.e.streams.release()
		feed, stop, err := h.e.Subscribe(r.Context(), id)
		if err != nil {
			rt.API(refusal(err))(w, r)
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

// refusal answers a stream that cannot start: 503 with Retry-After at
// the cap, else the error's own status.
func refusal(err error) httpsec.APIFunc {
	return func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		if errors.Is(err, ErrTooManyStreams) {
			w.Header().Set("Retry-After", "5")
			return http.StatusServiceUnavailable, map[string]string{"error": err.Error()}, nil
		}
		return 0, nil, err
	}
}

// runStream is one event stream being written.
type runStream struct {
	sse     *httpsec.SSEWriter
	logPath string
	// next is the log offset the client has everything before: log events
	// overlapping it are cut, and a gap after it is read from the file.
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

// send writes one of the feed's events. The first state is followed by
// the stored log up to then; the final state comes after all of the log.
func (s *runStream) send(ev Event) error {
	switch ev.Type {
	case EventState:
		if ev.Run.State.Final() {
			if err := s.catchUp(-1); err != nil {
				return err
			}
			s.event(string(EventState), "", ev.Run)
			return nil
		}
		s.event(string(EventState), "", ev.Run)
		return s.catchUp(-1)
	case EventProgress:
		s.event(string(EventProgress), "", ev.Progress)
	case EventLog:
		if ev.Offset > s.next {
			// Events were lost (the feed's buffer was full) or the stream
			// began before them: the file has the gap.
			if err := s.catchUp(ev.Offset); err != nil {
				return err
			}
		}
		s.log(ev.Offset, ev.Text)
	}
	return nil
}

// log writes what of the text at offset the client does not have yet.
func (s *runStream) log(offset int64, text string) {
	end := offset + int64(len(text))
	if end <= s.next {
		return
	}
	if offset < s.next {
		text, offset = text[s.next-offset:], s.next
	}
	s.event(string(EventLog), strconv.FormatInt(end, 10), logEvent{Offset: offset, Text: text})
	s.next = end
}

// catchUp sends the stored log from the client's offset up to until
// (-1: its end) in bounded pieces.
func (s *runStream) catchUp(until int64) error {
	for until < 0 || s.next < until {
		n := int64(logChunk)
		if until >= 0 {
			n = min(n, until-s.next)
		}
		text, err := readFrom(s.logPath, s.next, int(n))
		if err != nil || text == "" {
			return err
		}
		s.log(s.next, text)
		if err := s.sse.Flush(); err != nil {
			return err
		}
	}
	return nil
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
