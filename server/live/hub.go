// Package live streams latscope serve's intervals as they are archived,
// as Server-Sent Events: a hub that the jobs' writer publishes every
// archived interval to, fanned out to a bounded number of streams, each
// with a fixed-size queue; a stream that cannot keep up is told so and
// ended, and resumes from the archive with Last-Event-ID.
package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/server/httpsec"
	"github.com/latscope/latscope/stream"
)

// Defaults of Options.
const (
	DefaultMaxStreams = 100
	DefaultBuffer     = 256
	DefaultHeartbeat  = 15 * time.Second
	DefaultWriteStall = 10 * time.Second
	DefaultReplay     = 10 * time.Minute
)

// Options bound the hub; zero values take the defaults.
type Options struct {
	// MaxStreams caps the concurrent streams; more are answered 503.
	MaxStreams int
	// Buffer is the number of intervals queued per stream. A stream whose
	// queue is full when an interval comes is sent a "dropped" event and
	// ended: its client resumes from the archive with Last-Event-ID.
	Buffer int
	// Heartbeat is the period of the comment lines that keep proxies and
	// clients from timing out an idle stream, and find dead peers.
	Heartbeat time.Duration
	// WriteStall bounds every write to a stream: a client that reads
	// nothing for that long is disconnected.
	WriteStall time.Duration
	// Replay bounds how far back Last-Event-ID replays from the archive;
	// an older id gets a "lost" event naming the range not replayed.
	Replay time.Duration
	// MaxAge ends a stream after that long with a "reconnect" event
	// (0: streams last).
	MaxAge time.Duration
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = DefaultMaxStreams
	}
	if o.Buffer <= 0 {
		o.Buffer = DefaultBuffer
	}
	def(&o.Heartbeat, DefaultHeartbeat)
	def(&o.WriteStall, DefaultWriteStall)
	def(&o.Replay, DefaultReplay)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Hub fans the archived intervals out to the live streams. An interval
// is encoded once, whatever the number of streams; each stream queues
// pointers to the shared encoded events.
type Hub struct {
	arch  *archive.Archive
	opts  Options
	index *seriesIndex

	mu      sync.Mutex
	streams map[*subscriber]struct{}
	closed  bool

	published, dropped atomic.Int64
}

// NewHub returns a hub whose streams read their series and replay from
// arch.
func NewHub(arch *archive.Archive, opts Options) *Hub {
	return &Hub{arch: arch, opts: opts.withDefaults(), index: newSeriesIndex(arch), streams: map[*subscriber]struct{}{}}
}

// batch is what one publication queues on a stream: the events of one
// interval (one per series), or one job event. Batches are shared by
// every stream and never changed.
type batch struct {
	source string
	// end is the interval's end, the stream's event id (zero: a job
	// event, which carries none).
	end    time.Time
	events []*encoded
}

// encoded is one event encoded once for every stream, with the series
// it is about so that each stream can filter it.
type encoded struct {
	series archive.SeriesInfo
	event  httpsec.SSEEvent
}

// Reasons a stream ends other than its client leaving.
const (
	endDropped  = "dropped"
	endShutdown = "shutdown"
	endRevoked  = "revoked"
	endExpired  = "expired"
)

// subscriber is one stream's side of the hub.
type subscriber struct {
	filter Filter
	queue  chan *batch
	// ended is closed when the hub ends the stream; reason says why.
	ended  chan struct{}
	reason string

	mu     sync.Mutex
	wanted map[int64]bool // the filter's answer per series id
	// paused: nothing is queued yet (a resume's first replay); h.mu.
	paused bool
}

// wants reports whether the stream sends an event.
func (s *subscriber) wants(e *encoded) bool {
	if e.series.ID == 0 { // a job event
		return s.filter.wantsJob(e.series.Source)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.wanted[e.series.ID]
	if !ok {
		w = s.filter.wantsSeries(e.series)
		s.wanted[e.series.ID] = w
	}
	return w
}

// Errors of subscribe, answered 503 (subscribe wraps them in
// httpsec.Unavailable).
var (
	ErrTooManyStreams = errors.New("too many live streams")
	ErrUnavailable    = errors.New("live streams are not available")
)

// subscribe adds a stream, or refuses it at the cap or after Close; a
// paused stream queues nothing until resume.
func (h *Hub) subscribe(f Filter, paused bool) (*subscriber, error) {
	if h == nil {
		return nil, httpsec.Unavailable(ErrUnavailable)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return nil, httpsec.Unavailable(fmt.Errorf("%w: the server is stopping", ErrUnavailable))
	case len(h.streams) >= h.opts.MaxStreams:
		return nil, httpsec.Unavailable(fmt.Errorf("%w: %d open, the limit", ErrTooManyStreams, len(h.streams)))
	}
	s := &subscriber{filter: f, queue: make(chan *batch, h.opts.Buffer), ended: make(chan struct{}), wanted: map[int64]bool{}, paused: paused}
	h.streams[s] = struct{}{}
	return s, nil
}

// resume starts queueing a paused stream's intervals.
func (h *Hub) resume(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.paused = false
}

// unsubscribe removes a stream whose client left.
func (h *Hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.streams, s)
}

// endLocked ends a stream for a reason; h.mu is held.
func (h *Hub) endLocked(s *subscriber, reason string) {
	if _, ok := h.streams[s]; !ok {
		return
	}
	delete(h.streams, s)
	s.reason = reason
	close(s.ended)
}

// Publish sends an archived interval to every stream that selects one of
// its series. It never blocks: a stream whose queue is full is ended.
func (h *Hub) Publish(ctx context.Context, iv stream.Interval) {
	if !h.listening() {
		return // nobody to encode for
	}
	events, err := h.index.events(ctx, iv)
	if err != nil {
		h.opts.Logger.Warn("live: reading the series of an interval", "source", iv.Source, "error", err.Error())
		return
	}
	if len(events) > 0 {
		h.send(&batch{source: iv.Source, end: iv.End(), events: events})
	}
}

// listening reports whether any stream is open.
func (h *Hub) listening() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.streams) > 0
}

func (h *Hub) send(b *batch) {
	h.published.Add(1)
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.streams {
		if s.paused || !s.wantsAny(b) {
			continue
		}
		select {
		case s.queue <- b:
		default:
			h.dropped.Add(1)
			h.endLocked(s, endDropped)
			h.opts.Logger.Info("live: a stream that did not keep up was dropped", "queued", len(s.queue))
		}
	}
}

func (s *subscriber) wantsAny(b *batch) bool {
	for _, e := range b.events {
		if s.wants(e) {
			return true
		}
	}
	return false
}

// Close ends every stream with a "shutdown" event and refuses new ones;
// the server calls it when it begins to shut down, since an open stream
// would otherwise hold http.Server.Shutdown until its timeout.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.streams {
		h.endLocked(s, endShutdown)
	}
}

// Stats is the hub's state, for tests and the load benchmark.
type Stats struct {
	Streams int
	// MaxQueued is the longest queue of a stream, in intervals; it never
	// exceeds Buffer.
	MaxQueued int
	Buffer    int
	// Published counts the batches sent; Dropped the streams ended for
	// not keeping up.
	Published, Dropped int64
}

// Stats returns the hub's state.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := Stats{Streams: len(h.streams), Buffer: h.opts.Buffer, Published: h.published.Load(), Dropped: h.dropped.Load()}
	for s := range h.streams {
		st.MaxQueued = max(st.MaxQueued, len(s.queue))
	}
	return st
}
