// Package source defines how latscope reads latency data: a Source emits
// stream.Intervals; file formats are recognised by sniffing the start of the
// input; probes (scheme:ARG) are opened by name; RunAll runs them all.
// Malformed input is counted and reported through input.Diagnostics
// without losing the good part.
package source

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/stream"
)

// Source produces intervals until its input ends, ctx is cancelled or an
// error stops it. Run calls emit from one goroutine; an error from emit
// stops the source and is returned.
type Source interface {
	Name() string
	Run(ctx context.Context, emit func(stream.Interval) error) error
}

// Options are the reading choices a user can make; zero values mean "the
// source's default".
type Options struct {
	// Format forces an input format by name instead of detection.
	Format string
	// Bound sets the bucket semantics of records that do not say which they
	// use (BoundUnknown: infer from the record, else warn and use upper).
	Bound hist.BoundKind
	// Location is the time zone of timestamps that carry no UTC offset.
	Location *time.Location
	// Interval is the binning interval for per-event sources.
	Interval time.Duration
	// Events keeps only these events (exact names); empty keeps all.
	Events []string
	// Follow keeps reading a growing file like tail -f.
	Follow bool
	// Progress receives human progress lines for long setup work, such as
	// a probe creating its scratch file (nil: silent).
	Progress io.Writer
	// Counts says whether a format's periodic histograms are cumulative or
	// per interval (--counts); CountsDefault keeps the format's default.
	Counts Counts
	// Unit is the latency unit of formats that do not say (--unit; 0: the
	// format's default).
	Unit hist.Unit
	// Date is the day of time-only timestamps (--date; zero: the input
	// file's modification date, else today).
	Date time.Time
	// DB configures the live database sources (postgres://, mysql://,
	// oracle://).
	DB DBOptions
	// From and To select the windows a store (the archive) returns:
	// From ≤ start < To, zero for no bound. Series is a glob of the series
	// to return (empty: all).
	From, To time.Time
	Series   string
	// Server says how a latscope serve SOURCE (http:// or https://) is
	// read.
	Server ServerOptions
	// Calls adds the database calls of 10046 traces as latency series
	// beside the waits (--calls): CallsByType or CallsBySQL; empty: none.
	Calls string
	// CallCPU adds, with Calls, the calls' c= CPU as series of their own
	// ("cpu FETCH", --calls type,cpu).
	CallCPU bool
	// BlockReads, when set, receives the address of every block read the
	// source sees (10046 WAIT lines, the Oracle wait-history samplers'
	// p1/p2/p3), beside the intervals: the block-read working set.
	BlockReads stream.BlockReads
}

// The --calls modes.
const (
	// CallsByType: one series per call type and depth ("call FETCH",
	// "call EXEC dep=1").
	CallsByType = "type"
	// CallsBySQL: one series per call type and statement ("call FETCH
	// g4h8jndhd8vst": sqlid, else hv:N, else #cursor).
	CallsBySQL = "sql"
)

// ServerOptions are the options of a latscope serve SOURCE.
type ServerOptions struct {
	// TokenFile holds the API token on its first line (else the
	// environment's LATSCOPE_TOKEN); tokens are never printed.
	TokenFile string
	// CAFile adds PEM certificates to the system's roots.
	CAFile string
	// InsecureSkipVerify accepts any server certificate (warned).
	InsecureSkipVerify bool
}

// DBOptions are the live database sources' options. Zero values take each
// source's documented defaults.
type DBOptions struct {
	// PasswordFile holds the password (first line) when the URI and the
	// environment do not; passwords are never printed.
	PasswordFile string
	// QueryTimeout bounds every query (default 5 s).
	QueryTimeout time.Duration
	// Setup lets a source change the server's instrumentation (MySQL
	// performance_schema consumers and instruments); Instruments names
	// the instruments to enable instead of the defaults.
	Setup       bool
	Instruments []string
	// Sessions selects the sessions a sampler watches (a SQL condition,
	// e.g. "username like 'APP%'").
	Sessions string
	// FixedTables lets the Oracle sampler read X$KSLWH (needs SYS).
	FixedTables bool
	// Instance keeps one Oracle RAC instance (0: all, merged per event).
	Instance int
	// Log is a PostgreSQL server log to follow for statement durations.
	Log string
	// Probe is a statement timed every ProbeEvery from the client side.
	Probe      string
	ProbeEvery time.Duration
	// AWRFrom and AWRTo select an AWR snapshot range (SNAP_IDs, inclusive)
	// and AWRLast the last N snapshots: the Oracle source then reads
	// DBA_HIST_EVENT_HISTOGRAM once instead of polling.
	AWRFrom, AWRTo, AWRLast int
	// Stats makes a sampler report its own CPU use (--stats).
	Stats bool
	// Link hears when a live source loses its server and when it reads
	// it again (nil: nobody listens). The source still writes the time in
	// between as gaps itself; Link only tells, so that latscope serve can
	// show the outage in the job's state.
	Link Link
}

// Link receives a live database source's connection changes. Calls come
// from the source's goroutines while its Run runs.
type Link interface {
	// Lost says the source cannot read its server since at, because of err
	// (called again, with the newer error, while reconnecting fails).
	Lost(at time.Time, err error)
	// Restored says the source reads its server again since at.
	Restored(at time.Time)
}

// Counts says how periodic histogram counts accumulate.
type Counts int

// Counting modes.
const (
	// CountsDefault: the format's documented default.
	CountsDefault Counts = iota
	// CountsCumulative: every print holds all events since the start (a
	// never-cleared aggregation); deltas are taken.
	CountsCumulative
	// CountsInterval: every print holds only the events since the previous
	// one (stock bcc/bpftrace tools clear each interval).
	CountsInterval
)

// ParseCounts reads "cumulative" or "interval".
func ParseCounts(s string) (Counts, error) {
	switch s {
	case "cumulative":
		return CountsCumulative, nil
	case "interval":
		return CountsInterval, nil
	}
	return CountsDefault, fmt.Errorf("unknown counts mode %q (want cumulative or interval)", s)
}

// Resolve returns the mode to use given a format's default.
func (c Counts) Resolve(formatDefault Counts) Counts {
	if c == CountsDefault {
		return formatDefault
	}
	return c
}

// Day returns the date for time-only timestamps: --date, else the input's
// modification time, else now; in the --tz location.
func (o Options) Day(in Input) time.Time {
	switch {
	case !o.Date.IsZero():
		return o.Date.In(o.Loc())
	case !in.ModTime.IsZero():
		return in.ModTime.In(o.Loc())
	}
	return time.Now().In(o.Loc())
}

// Loc returns the zone for offset-less timestamps (local by default).
func (o Options) Loc() *time.Location {
	if o.Location != nil {
		return o.Location
	}
	return time.Local
}

// KeepEvent reports whether an event passes the --event filter.
func (o Options) KeepEvent(name string) bool {
	if len(o.Events) == 0 {
		return true
	}
	for _, e := range o.Events {
		if e == name {
			return true
		}
	}
	return false
}

// KeepEvents applies --event to a window of a store: the window stays
// (observed), its series of other events go.
func (o Options) KeepEvents(iv stream.Interval) stream.Interval {
	if len(o.Events) == 0 {
		return iv
	}
	series := iv.Series[:0:0]
	for _, sh := range iv.Series {
		if o.KeepEvent(sh.Key.Event) {
			series = append(series, sh)
		}
	}
	means := iv.Means[:0:0]
	for _, m := range iv.Means {
		if o.KeepEvent(m.Key.Event) {
			means = append(means, m)
		}
	}
	iv.Series, iv.Means = series, means
	return iv
}

// Input is an opened input handed to a format.
type Input struct {
	// Name is the path (or "-") used in messages.
	Name string
	// Reader yields the whole input, including the prefix detection read.
	Reader io.Reader
	// Diag receives malformed-line reports and warnings.
	Diag *input.Diagnostics
	// ModTime is the file's modification time (zero for stdin).
	ModTime time.Time
	// At reads the same bytes as Reader at any offset, and Size is their
	// number, for a regular uncompressed file read once from start to end
	// (nil and 0 for stdin, --follow, compressed files and anything else):
	// parsers may read such a file in parallel chunks.
	At   io.ReaderAt
	Size int64
}

// Store is an input that is a path to a database rather than a stream of
// bytes (the archive: a data directory or its database file). Stores are
// tried before a path is opened as a file.
type Store struct {
	Name        string
	Description string
	Detection   string
	Example     string
	// Match reports whether path holds one of the store's databases.
	Match func(path string) bool
	// Open returns a Source reading the selection of opts (From, To,
	// Series, Events).
	Open func(path string, opts Options, diag *input.Diagnostics) (Source, error)
}

// Format is one file format latscope reads.
type Format struct {
	Name        string
	Description string
	// Detection says, for `latscope formats`, how the format is recognised.
	Detection string
	// Example is a command line reading the format.
	Example string
	// Detect looks at the start of the input.
	Detect func(prefix []byte) input.Verdict
	// Open returns a Source that reads the input.
	Open func(in Input, opts Options) (Source, error)
}

// LinkWatch reports a sampler's connection to its Link: every failure to
// reach the server, and a restore only after a failure. One goroutine
// (the sampling loop) uses it.
type LinkWatch struct {
	link Link
	down bool
}

// NewLinkWatch watches for link (nil: reports go nowhere).
func NewLinkWatch(link Link) *LinkWatch { return &LinkWatch{link: link} }

// Lost reports that the server cannot be read, because of err.
func (w *LinkWatch) Lost(err error) {
	w.down = true
	if w.link != nil {
		w.link.Lost(time.Now(), err)
	}
}

// Reached reports a working connection: a restore when it had been lost.
func (w *LinkWatch) Reached() {
	if !w.down {
		return
	}
	w.down = false
	if w.link != nil {
		w.link.Restored(time.Now())
	}
}
