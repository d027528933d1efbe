package live

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/httpsec"
	"github.com/latscope/latscope/stream"
)

// Path is the live route.
const Path = "/api/v1/live"

// replayLookback is how long before Last-Event-ID a replay looks for
// windows that end after it (windows of scheduled probes are long).
const replayLookback = time.Minute

// Register adds GET /api/v1/live for viewers, without a write deadline
// (a stream lasts); a nil hub answers 503. Every heartbeat authenticates
// the request again, so that a revoked token or an ended session stops
// its streams within that period.
func Register(rt *httpsec.Router, h *Hub) {
	rt.Handle("GET", Path, auth.Viewer, h.handler(rt), httpsec.WriteTimeout(0))
}

func (h *Hub) handler(rt *httpsec.Router) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f, err := ParseFilter(q.Get("series"), q["id"])
		var since time.Time
		if id := r.Header.Get("Last-Event-ID"); err == nil && id != "" {
			since, err = ParseID(id)
		}
		var sub *subscriber
		if err == nil {
			sub, err = h.subscribe(f, !since.IsZero())
		}
		if err != nil {
			rt.Fail(w, r, err)
			return
		}
		defer h.unsubscribe(sub)
		stillAllowed := func() bool { return rt.StillAllowed(r, auth.Viewer) }
		h.stream(r.Context(), w, sub, since, stillAllowed)
	}
}

// conn is one stream being written.
type conn struct {
	sse *httpsec.SSEWriter
	sub *subscriber
	// lastID is the newest id sent: ids only grow, so a client resumes
	// after everything it was sent.
	lastID time.Time
	// replayed is, per source, the end of the last window replayed: live
	// intervals queued during the replay up to it are not sent twice.
	replayed map[string]time.Time
}

func (h *Hub) stream(ctx context.Context, w http.ResponseWriter, sub *subscriber, since time.Time, stillAllowed func() bool) {
	sse, err := httpsec.NewSSEWriter(w, h.opts.WriteStall)
	if err != nil {
		return
	}
	c := &conn{sse: sse, sub: sub, lastID: since}
	if !since.IsZero() {
		if err := h.replay(ctx, c, since); err != nil {
			if ctx.Err() == nil {
				h.opts.Logger.Warn("live: replay", "error", err.Error())
			}
			return
		}
	}
	h.follow(ctx, c, stillAllowed)
}

// follow writes the stream's queued intervals and its heartbeats until
// the client leaves or the hub, a recheck or MaxAge ends the stream.
func (h *Hub) follow(ctx context.Context, c *conn, stillAllowed func() bool) {
	sub := c.sub
	heartbeat := time.NewTicker(h.opts.Heartbeat)
	defer heartbeat.Stop()
	var expired <-chan time.Time
	if h.opts.MaxAge > 0 {
		t := time.NewTimer(h.opts.MaxAge)
		defer t.Stop()
		expired = t.C
	}
	for {
		select {
		case <-sub.ended: // before what is still queued
			c.end(sub.reason, h.opts.Buffer)
			return
		default:
		}
		select {
		case b := <-sub.queue:
			c.send(b)
			for range len(sub.queue) { // what else is queued, in one write
				c.send(<-sub.queue)
			}
		case <-heartbeat.C:
			if !stillAllowed() {
				c.end(endRevoked, 0)
				return
			}
			c.sse.Comment("heartbeat")
		case <-expired:
			c.end(endExpired, 0)
			return
		case <-sub.ended:
			c.end(sub.reason, h.opts.Buffer)
			return
		case <-ctx.Done():
			return
		}
		if err := c.sse.Flush(); err != nil {
			return
		}
	}
}

// send writes the events of a batch the stream selects; the last carries
// the interval's end as id, so a client cut off within an interval gets
// all of it again rather than miss its other series.
func (c *conn) send(b *batch) {
	if end, ok := c.replayed[b.source]; ok && !b.end.IsZero() && !b.end.After(end) {
		return
	}
	var last *encoded
	for _, e := range b.events {
		if !c.sub.wants(e) {
			continue
		}
		if last != nil {
			c.sse.Event(last.event)
		}
		last = e
	}
	if last == nil {
		return
	}
	ev := last.event
	if b.end.After(c.lastID) {
		ev.ID, c.lastID = FormatID(b.end), b.end
	}
	c.sse.Event(ev)
}

// end tells the client why the hub ended its stream, within a short
// deadline (a dropped client is slow by definition).
func (c *conn) end(reason string, buffer int) {
	typ, msg := TypeShutdown, map[string]any{"reason": "the server is stopping"}
	switch reason {
	case endDropped:
		typ = TypeDropped
		msg = map[string]any{"reason": "the client did not keep up: " + strconv.Itoa(buffer) + " intervals queued; reconnect with Last-Event-ID to resume from the archive", "buffer": buffer}
	case endRevoked:
		typ, msg = TypeUnauthorized, map[string]any{"reason": "the credential is no longer valid"}
	case endExpired:
		typ, msg = TypeReconnect, map[string]any{"reason": "the stream reached its maximum age; reconnect with Last-Event-ID"}
	}
	data, _ := json.Marshal(msg)
	c.sse.Event(httpsec.SSEEvent{Type: typ, Data: data})
	_ = c.sse.FlushWithin(time.Second)
}

// replay sends, from the archive, the windows ending after since (at
// most Replay back) that the stream selects, then a "replayed" event
// carrying the newest end as id. Replayed events carry no id of their
// own: sources are read one after the other, not in time order, so a
// client cut off during the replay gets it again from its previous id.
//
// The stream's queue stays paused during the long first pass, which
// would otherwise overflow it (and drop the client, which would resume
// from the same id: forever); a second pass then reads what was written
// meanwhile, short enough for the queue, which is resumed before it.
func (h *Hub) replay(ctx context.Context, c *conn, since time.Time) error {
	from := since
	if cutoff := time.Now().Add(-h.opts.Replay); from.Before(cutoff) {
		data, _ := json.Marshal(map[string]any{"from": since, "to": cutoff,
			"reason": "older than the replay limit; read it from /api/v1/series/{id}/intervals"})
		c.sse.Event(httpsec.SSEEvent{Type: TypeLost, Data: data})
		from = cutoff
	}
	c.replayed = map[string]time.Time{}
	began := time.Now()
	n, err := h.replayPass(ctx, c, from, from)
	if err != nil {
		return err
	}
	h.resume(c.sub)
	more, err := h.replayPass(ctx, c, from, later(from, began.Add(-replayLookback)))
	if err != nil {
		return err
	}
	data, _ := json.Marshal(map[string]any{"events": n + more})
	c.sse.Event(httpsec.SSEEvent{ID: FormatID(c.lastID), Type: TypeReplayed, Data: data})
	return c.sse.Flush()
}

// replayPass sends the windows starting from start on (less the lookback)
// that end after since and after what was replayed of their source.
func (h *Hub) replayPass(ctx context.Context, c *conn, since, start time.Time) (n int, err error) {
	q := archive.Query{From: start.Add(-replayLookback), Series: c.sub.filter.Pattern, Resolution: archive.Raw}
	if len(c.sub.filter.IDs) > 0 {
		q.Series = "" // ids select series of any name
	}
	windows := 0
	err = h.arch.Read(ctx, q, func(iv stream.Interval) error {
		end := iv.End()
		if done, ok := c.replayed[iv.Source]; !end.After(since) || ok && !end.After(done) {
			return nil
		}
		events, err := h.index.events(ctx, iv)
		if err != nil {
			return err
		}
		for _, e := range events {
			if c.sub.wants(e) {
				c.sse.Event(e.event)
				n++
			}
		}
		c.replayed[iv.Source] = end
		c.lastID = later(c.lastID, end)
		if windows++; windows%64 == 0 {
			return c.sse.Flush()
		}
		return nil
	})
	return n, err
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
