package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

const (
	// PollEvery is the pg_stat_activity sampling period: the resolution
	// limit of the estimated wait durations.
	PollEvery = 10 * time.Millisecond
	// defaultLiveInterval is the window of live sampling (--interval).
	defaultLiveInterval = time.Second
	// defaultProbeEvery is how often --probe runs its statement.
	defaultProbeEvery = 100 * time.Millisecond
	// defaultQueryTimeout bounds each query.
	defaultQueryTimeout = 5 * time.Second
	// maxBackoff caps the delay between reconnection attempts.
	maxBackoff = 5 * time.Second
	// lateGrace is how long after its end a window waits for the probe
	// and the sampler to record into it.
	lateGrace = 250 * time.Millisecond
	// CPUEvent is the series of active backends not waiting.
	CPUEvent = "CPU"
	// ProbePrefix starts the series name of --probe.
	ProbePrefix = "probe: "
)

// activityQuery samples the backends that are running a statement or
// inside a transaction (idle backends' ClientRead is think time, not
// latency), other than the sampler's own.
const activityQuery = `select pid, state, coalesce(wait_event_type, ''), coalesce(wait_event, ''), query_start
from pg_stat_activity
where pid <> pg_backend_pid() and state in ('active', 'idle in transaction', 'idle in transaction (aborted)')`

const liveDescription = "PostgreSQL live sampler (postgres://user[:password]@host:port/db; password also from PGPASSWORD " +
	"or --password-file; needs pg_read_all_stats (or pg_monitor, or superuser) to see other users' backends and statement texts): samples pg_stat_activity " +
	"every 10 ms and estimates each wait's duration as the time from the first sample that saw a backend in it " +
	"(same wait_event, same query_start) to the first that did not, so the resolution limit is the 10 ms poll period " +
	"(shorter waits count as about one period; consecutive equal waits merge); series per \"WaitEventType:WaitEvent\" " +
	"and \"CPU\" (active, no wait); when the pg_wait_sampling extension is installed in the database (and preloaded) " +
	"its history of the server's own 10 ms samples is read every 100 ms instead (no client polling jitter; it " +
	"cannot tell idle backends apart, so Client:ClientRead includes idle time); --probe \"select 1\" adds the exact client-side latency of a statement run every " +
	"--probe-every (default 100 ms) as \"probe: select 1\"; windows of --interval (default 1s); gaps while disconnected. " +
	"Once per window it also reads the statistics views as MEAN series (a count and a total per window, drawn as a line, " +
	"never a distribution): pg_stat_statements when preloaded and installed (calls and total_exec_time deltas per " +
	"normalised statement, \"statement mean: <text>\", the 20 with most time per window, the rest in " +
	"\"statement mean: (other statements)\", plus \"statement mean: all statements\"; latscope's own queries left out; " +
	"resets and deallocated entries never give negative deltas), and with track_io_timing on pg_stat_database " +
	"(\"block read mean\" per database: blk_read_time over blks_read; it has no block write count, so no write mean) " +
	"and on PostgreSQL 16+ pg_stat_io (\"io read mean\", \"io write mean\", \"io fsync mean\" per backend_type, summed " +
	"over objects and contexts); it says once what to enable when these are off. --log FILE follows the server log " +
	"(stderr with %m, csvlog or jsonlog, log_min_duration_statement set) from its end, across rotation and truncation, " +
	"and adds each logged statement's exact duration to the same windows (series per normalised statement and " +
	"\"all statements\", as the postgres-log format)"

// Probe returns the "postgres" live source.
func Probe() source.Probe { return probe("postgres") }

// ProbePostgresql returns the same source under the "postgresql" scheme.
func ProbePostgresql() source.Probe { return probe("postgresql") }

func probe(scheme string) source.Probe {
	return source.Probe{
		Scheme:      scheme,
		Description: liveDescription,
		Open: func(arg string, opts source.Options, diag *input.Diagnostics) (source.Source, error) {
			return openLive(scheme, arg, opts, diag)
		},
	}
}

// liveSource samples one server.
type liveSource struct {
	name   string // the URI without password
	config *pgx.ConnConfig
	opts   source.Options
	diag   *input.Diagnostics

	mu      sync.Mutex
	polls   int64 // samples taken (pg_stat_activity polls, or pg_wait_sampling's own samples)
	history bool  // sampling through pg_wait_sampling_history
	// forceStatIO makes tests read pg_stat_io on a server older than 16
	// (a table of synthetic rows standing in for the view).
	forceStatIO bool
	started     time.Time
	stopped     time.Time
}

func openLive(scheme, arg string, opts source.Options, diag *input.Diagnostics) (*liveSource, error) {
	uri := scheme + ":" + arg
	name := redact(uri)
	if !strings.HasPrefix(arg, "//") {
		return nil, fmt.Errorf("%s: want %s://user@host:port/db", name, scheme)
	}
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("%s: bad URI", name)
	}
	hasPass := false
	if u.User != nil {
		_, hasPass = u.User.Password()
	}
	u.Scheme = "postgres"
	config, err := pgx.ParseConfig(u.String()) // also reads PGPASSWORD and the other PG* variables
	if err != nil {
		return nil, fmt.Errorf("%s: %s", name, strings.ReplaceAll(err.Error(), uri, name))
	}
	if !hasPass && os.Getenv("PGPASSWORD") == "" && opts.DB.PasswordFile != "" {
		b, err := os.ReadFile(opts.DB.PasswordFile)
		if err != nil {
			return nil, fmt.Errorf("%s: password file: %w", name, err)
		}
		config.Password = strings.TrimRight(strings.SplitN(string(b), "\n", 2)[0], "\r")
	}
	return &liveSource{name: name, config: config, opts: opts, diag: diag}, nil
}

// redact returns the URI with its password replaced, for names and errors.
func redact(uri string) string {
	u, err := url.Parse(uri)
	if err == nil {
		return u.Redacted()
	}
	if i := strings.LastIndex(uri, "@"); i >= 0 {
		if j := strings.Index(uri, "//"); j >= 0 && j < i {
			return uri[:j+2] + "xxxxx" + uri[i:]
		}
	}
	return "postgres://(unparsable URI)"
}

func (s *liveSource) Name() string { return s.name }

// SamplerStats reports the achieved polling rate.
func (s *liveSource) SamplerStats() stream.SamplerStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := stream.SamplerStats{Kind: "postgres pg_stat_activity sampler"}
	if s.history {
		st.Kind = "postgres pg_wait_sampling history sampler"
	}
	end := s.stopped
	if end.IsZero() {
		end = time.Now()
	}
	if el := end.Sub(s.started).Seconds(); !s.started.IsZero() && el > 0 {
		st.PollsPerSecond = float64(s.polls) / el
	}
	return st
}

func (s *liveSource) queryTimeout() time.Duration {
	if s.opts.DB.QueryTimeout > 0 {
		return s.opts.DB.QueryTimeout
	}
	return defaultQueryTimeout
}

// Run samples until ctx is done, emitting one interval per window.
func (s *liveSource) Run(ctx context.Context, emit func(stream.Interval) error) error {
	interval := s.opts.Interval
	if interval <= 0 {
		interval = defaultLiveInterval
	}
	w := newLiveWindows(s.name, interval, time.Now())
	s.mu.Lock()
	s.started = time.Now()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.stopped = time.Now()
		s.mu.Unlock()
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	if s.opts.DB.Probe != "" {
		wg.Add(1)
		go func() { defer wg.Done(); s.runProbe(ctx, w) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); s.newStats(w).run(ctx, interval) }()
	if s.opts.DB.Log != "" {
		wg.Add(1)
		go func() { defer wg.Done(); s.followLog(ctx, w) }()
	}
	err := s.sample(ctx, w, emit)
	cancel()
	wg.Wait()
	if err != nil {
		return err
	}
	return w.flush(time.Now(), true, emit)
}

// sample polls pg_stat_activity, reconnecting with backoff, and emits the
// windows as they end.
func (s *liveSource) sample(ctx context.Context, w *liveWindows, emit func(stream.Interval) error) error {
	tracker := newWaitTracker()
	link := source.NewLinkWatch(s.opts.DB.Link)
	backoff := 100 * time.Millisecond
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	tick := time.NewTicker(PollEvery)
	defer tick.Stop()
	var history *historyReader
	for {
		if err := w.flush(time.Now().Add(-lateGrace), false, emit); err != nil {
			return err
		}
		if conn == nil {
			c, err := s.connect(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				s.diag.MalformedAt(s.name, time.Now(), "connection failed: "+s.clean(err))
				link.Lost(errors.New("connection failed: " + s.clean(err)))
				if !sleep(ctx, backoff) {
					return nil
				}
				backoff = min(2*backoff, maxBackoff)
				continue
			}
			conn, backoff = c, 100*time.Millisecond
			link.Reached()
			tracker = newWaitTracker() // waits seen before the loss have no known end
			history = s.detectHistory(ctx, conn)
			s.mu.Lock()
			s.history = history != nil
			s.mu.Unlock()
			if history != nil {
				tick.Reset(historyPollEvery)
			} else {
				tick.Reset(PollEvery)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		var samples []sample
		var err error
		if history != nil {
			samples, err = history.poll(ctx, conn, s.queryTimeout())
		} else {
			var rows []backendRow
			var at time.Time
			rows, at, err = s.poll(ctx, conn)
			samples = []sample{{at, rows}}
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			s.diag.MalformedAt(s.name, time.Now(), "poll failed: "+s.clean(err))
			if conn.IsClosed() || isConnError(err) {
				conn.Close(context.Background())
				conn = nil
				link.Lost(errors.New("connection lost: " + s.clean(err)))
			}
			continue
		}
		s.mu.Lock()
		s.polls += int64(len(samples))
		s.mu.Unlock()
		for _, sm := range samples {
			w.observed(sm.at)
			for _, d := range tracker.update(sm.at, sm.rows) {
				w.record(d.end, d.event, float64(d.dur)/float64(time.Microsecond))
			}
		}
	}
}

func (s *liveSource) connect(ctx context.Context) (*pgx.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, s.queryTimeout())
	defer cancel()
	return pgx.ConnectConfig(cctx, s.config)
}

// clean removes the password from an error message.
func (s *liveSource) clean(err error) string {
	msg := err.Error()
	if s.config.Password != "" {
		msg = strings.ReplaceAll(msg, s.config.Password, "xxxxx")
	}
	return msg
}

func isConnError(err error) bool {
	var pgErr interface{ SQLState() string }
	return !errors.As(err, &pgErr) // server errors leave the connection usable
}

// poll reads the sampled backends; at is the middle of the query's round
// trip.
func (s *liveSource) poll(ctx context.Context, conn *pgx.Conn) ([]backendRow, time.Time, error) {
	qctx, cancel := context.WithTimeout(ctx, s.queryTimeout())
	defer cancel()
	t0 := time.Now()
	rows, err := conn.Query(qctx, activityQuery)
	if err != nil {
		return nil, time.Time{}, err
	}
	var out []backendRow
	for rows.Next() {
		var r backendRow
		var qs *time.Time
		if err := rows.Scan(&r.pid, &r.state, &r.waitType, &r.waitEvent, &qs); err != nil {
			rows.Close()
			return nil, time.Time{}, err
		}
		if qs != nil {
			r.queryStart = *qs
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, time.Time{}, err
	}
	t1 := time.Now()
	return out, t0.Add(t1.Sub(t0) / 2), nil
}

// runProbe times the probe statement every ProbeEvery on its own
// connection.
func (s *liveSource) runProbe(ctx context.Context, w *liveWindows) {
	every := s.opts.DB.ProbeEvery
	if every <= 0 {
		every = defaultProbeEvery
	}
	event := ProbePrefix + s.opts.DB.Probe
	tick := time.NewTicker(every)
	defer tick.Stop()
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if conn == nil {
			c, err := s.connect(ctx)
			if err != nil {
				continue // the sampler reports connection failures
			}
			conn = c
		}
		qctx, cancel := context.WithTimeout(ctx, s.queryTimeout())
		t0 := time.Now()
		_, err := conn.Exec(qctx, s.opts.DB.Probe, pgx.QueryExecModeSimpleProtocol)
		t1 := time.Now()
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.diag.MalformedAt(s.name, t1, "probe failed: "+s.clean(err))
			if conn.IsClosed() || isConnError(err) {
				conn.Close(context.Background())
				conn = nil
			}
			continue
		}
		w.record(t1, event, float64(t1.Sub(t0))/float64(time.Microsecond))
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
