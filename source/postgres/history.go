package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// historyPollEvery is how often pg_wait_sampling's ring buffer is read: it
// holds pg_wait_sampling.history_size samples (5000 by default, i.e. 5 s of
// 10 ms samples of ten backends), so 100 ms leaves a wide margin.
const historyPollEvery = 100 * time.Millisecond

// historyQuery reads the samples after a time: pg_wait_sampling's
// collector samples every backend every history_period (10 ms by default)
// with one timestamp per round; CPU (no wait) is sampled with a null
// event when pg_wait_sampling.sample_cpu is on (the default).
const historyQuery = `select pid, ts, coalesce(event_type, ''), coalesce(event, ''), coalesce(queryid, 0)
from pg_wait_sampling_history where ts > $1 and pid <> pg_backend_pid() order by ts, pid`

// historyDetectQuery finds whether the history is readable, and its end.
const historyDetectQuery = "select max(ts) from pg_wait_sampling_history"

// sample is every sampled backend at one time.
type sample struct {
	at   time.Time
	rows []backendRow
}

// historyReader polls pg_wait_sampling_history incrementally.
type historyReader struct {
	last time.Time // newest sample time read
}

// detectHistory returns a reader when pg_wait_sampling is installed in
// the database and loaded (its history is readable), else nil.
func (s *liveSource) detectHistory(ctx context.Context, conn *pgx.Conn) *historyReader {
	qctx, cancel := context.WithTimeout(ctx, s.queryTimeout())
	defer cancel()
	var last *time.Time
	if err := conn.QueryRow(qctx, historyDetectQuery).Scan(&last); err != nil {
		return nil
	}
	h := &historyReader{last: time.Now()}
	if last != nil {
		h.last = *last // start after what is already in the ring
	}
	return h
}

// poll returns the samples taken since the previous poll, in time order.
// The last round may still be filling; it is read again next time unless
// a newer round follows it.
func (h *historyReader) poll(ctx context.Context, conn *pgx.Conn, timeout time.Duration) ([]sample, error) {
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rows, err := conn.Query(qctx, historyQuery, h.last)
	if err != nil {
		return nil, err
	}
	var out []sample
	for rows.Next() {
		r := backendRow{state: "active"}
		var at time.Time
		if err := rows.Scan(&r.pid, &at, &r.waitType, &r.waitEvent, &r.queryID); err != nil {
			rows.Close()
			return nil, err
		}
		if n := len(out); n == 0 || !out[n-1].at.Equal(at) {
			out = append(out, sample{at: at})
		}
		out[len(out)-1].rows = append(out[len(out)-1].rows, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) > 1 {
		out = out[:len(out)-1] // keep the newest round for the next poll
		h.last = out[len(out)-1].at
	} else {
		out = nil
	}
	return out, nil
}
