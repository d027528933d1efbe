package oracle

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	_ "github.com/sijms/go-ora/v2" // registers the "oracle" database/sql driver

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// Privileges is what `latscope sources` prints for oracle://.
const Privileges = "grant create session, select on sys.gv_$event_histogram_micro (12.2+) or sys.gv_$event_histogram, " +
	"sys.gv_$system_event, sys.gv_$instance to the user; the wait-history sampler (--sessions) needs select on " +
	"sys.v_$session_wait_history, sys.v_$session_wait and sys.v_$session, or a SYS connection with --fixed-tables for X$KSLWH; " +
	"the AWR range (--awr-from/--awr-to, --awr-last) needs select on sys.dba_hist_snapshot, sys.dba_hist_event_histogram " +
	"and sys.v_$database, and querying the AWR (DBA_HIST_*) views requires an Oracle Diagnostics Pack licence " +
	"(Enterprise Edition): without one, use the GV$ poller"

// Probe returns the live source for "oracle://user@host:port/service".
// With --sessions it runs the wait-history sampler, otherwise the
// GV$EVENT_HISTOGRAM(_MICRO) poller. Only go-ora's network I/O is untested:
// no Oracle server runs on the build machines.
func Probe() source.Probe {
	return source.Probe{
		Scheme: "oracle",
		Description: "Oracle wait events: GV$EVENT_HISTOGRAM_MICRO (12.2+, else GV$EVENT_HISTOGRAM) deltas every --interval, " +
			"merged over instances (--instance N: one), exact sums from GV$SYSTEM_EVENT; with --sessions COND, exact per-wait " +
			"durations sampled from X$KSLWH (--fixed-tables, SYS) or V$SESSION_WAIT_HISTORY; with --awr-from N --awr-to M " +
			"(SNAP_IDs) or --awr-last N, reads DBA_HIST_EVENT_HISTOGRAM once for that snapshot range of the current DBID: " +
			"per-instance deltas between snapshots at their real times, a restart (new STARTUP_TIME) a gap. " + Privileges,
		Open: open,
	}
}

// open builds the source; nothing connects until Run.
func open(arg string, opts source.Options, diag *input.Diagnostics) (source.Source, error) {
	u, err := url.Parse("oracle:" + arg)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("oracle source %q: want oracle://user@host:port/service", redact("oracle:"+arg))
	}
	name := redactURL(u)
	if u.User == nil || u.User.Username() == "" {
		return nil, fmt.Errorf("%s: no user name (oracle://user@host:port/service)", name)
	}
	if _, ok := u.User.Password(); !ok {
		pw, err := password(opts.DB.PasswordFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		u.User = url.UserPassword(u.User.Username(), pw)
	}
	if _, _, err := awrRangeOf(opts.DB); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if diag == nil {
		diag = input.NewDiagnostics(nil, input.DefaultReportLimit) // a zero Diagnostics has no maps
	}
	return &liveSource{dsn: u.String(), name: name, opts: opts, diag: diag}, nil
}

// password comes from ORACLE_PASSWORD, else the first line of the file.
func password(file string) (string, error) {
	if pw := os.Getenv("ORACLE_PASSWORD"); pw != "" {
		return pw, nil
	}
	if file == "" {
		return "", fmt.Errorf("no password: give it in the URI, ORACLE_PASSWORD or --password-file")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("password file: %w", err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return strings.TrimRight(line, "\r"), nil
}

func redactURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.User(c.User.Username())
	}
	return c.String()
}

// redact removes a password from a URI that did not parse.
func redact(s string) string {
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		if c := strings.Index(s, "://"); c >= 0 && c < at {
			if p := strings.IndexByte(s[c+3:at], ':'); p >= 0 {
				return s[:c+3+p] + s[at:]
			}
		}
	}
	return s
}

// liveSource is an oracle:// source.
type liveSource struct {
	dsn, name string
	opts      source.Options
	diag      *input.Diagnostics

	mu    sync.Mutex
	stats stream.SamplerStats
}

func (s *liveSource) Name() string { return s.name }

// SamplerStats reports the wait-history sampler's rate and missed waits.
func (s *liveSource) SamplerStats() stream.SamplerStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

func (s *liveSource) Run(ctx context.Context, emit func(stream.Interval) error) error {
	db, err := sql.Open("oracle", s.dsn)
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	timeout := s.opts.DB.QueryTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	db.SetMaxOpenConns(1)
	rs := &sqlRowSource{db: db, timeout: timeout}
	defer rs.Close()
	interval := s.opts.Interval
	if interval <= 0 {
		interval = time.Second
	}
	events := strings.Join(append(append([]string(nil), DefaultEvents...), s.opts.Events...), ",")
	if rng, ok, _ := awrRangeOf(s.opts.DB); ok {
		return runAWR(ctx, rs, s.name, s.diag, s.opts, rng, events, emit)
	}
	if s.opts.DB.Sessions != "" {
		return s.runSampler(ctx, rs, interval, emit)
	}
	p := &histPoller{ctx: ctx, rs: rs, name: s.name, diag: s.diag, events: events, inst: s.opts.DB.Instance,
		loc: s.opts.Loc(), emit: emit, now: time.Now, pace: newPacer(interval, time.Now, sleepCtx)}
	return p.run()
}
