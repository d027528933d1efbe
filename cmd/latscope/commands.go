package main

import (
	"fmt"
	"io"
	"math/bits"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/latscope/latscope/driver"
	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/view/heatmap"
	"github.com/latscope/latscope/view/reportset"
	"github.com/latscope/latscope/view/terminal"
)

// environment is the process's standard streams, injected for tests.
type environment struct {
	stdin                io.Reader
	stdout, stderr       io.Writer
	stdoutTTY, stderrTTY bool
}

// sharedFlags are the flags every data command takes.
type sharedFlags struct {
	inputFormat string
	bound       string
	tz          string
	interval    time.Duration
	events      []string
	follow      bool
	by          string
	duration    time.Duration
	counts      string
	unit        string
	date        string
	from, until string
	to          string // --to, the alias of --until where convert's --to is not meant
	series      string
	calls       string
	db          dbFlags
	server      serverFlags
}

func (f *sharedFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.inputFormat, "input-format", "", "force an input format instead of detecting it (see `latscope formats`)")
	fl.StringVar(&f.bound, "bound", "", "bucket values of records that do not say: upper (Oracle) or lower (DTrace/SystemTap/bcc)")
	fl.StringVar(&f.tz, "tz", "", "time zone of timestamps without a UTC offset, e.g. Europe/Zurich or UTC (default: local)")
	fl.DurationVar(&f.interval, "interval", 0, "binning interval for per-event sources and heat-map column width (default: 3s for traces, 1s for iotest, else the data's own)")
	fl.StringArrayVar(&f.events, "event", nil, "keep only this wait event (repeatable; exact name)")
	fl.BoolVarP(&f.follow, "follow", "f", false, "keep reading files as they grow, like tail -f")
	fl.StringVar(&f.calls, "calls", "", "10046 traces: add the database calls' elapsed times as series, per call type and depth (type) or per call type and SQL (sql); ,cpu adds their CPU (type,cpu)")
	fl.StringVar(&f.by, "by", "", "\"file\" keeps series from different SOURCE files apart instead of summing them")
	fl.DurationVar(&f.duration, "duration", 0, "stop live sources (probes, --follow, pipes) after this long, e.g. 30s")
	fl.StringVar(&f.counts, "counts", "", "periodic histograms are cumulative or interval (default: each format's own, see `latscope formats`)")
	fl.StringVar(&f.unit, "unit", "", "latency unit of inputs that do not say: ns, us, ms or s (DTrace defaults to ns)")
	fl.StringVar(&f.date, "date", "", "day of time-only timestamps, YYYY-MM-DD (default: the file's modification date)")
	fl.StringVar(&f.from, "from", "", "keep windows starting at or after this time: RFC 3339, YYYY-MM-DD[ HH:MM[:SS]] (--tz), now, or relative like -24h, -7d")
	fl.StringVar(&f.until, "until", "", "keep windows starting before this time (same forms as --from)")
	fl.StringVar(&f.series, "series", "", "archive and server SOURCEs: keep series whose event or source matches this glob, e.g. 'log file*'")
	f.db.register(cmd)
	f.server.register(cmd)
}

// registerTo adds --to as the alias of --until, for the commands where
// --to does not name an output format (convert's --to does).
func (f *sharedFlags) registerTo(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.to, "to", "", "the same as --until")
}

// config turns the flags into the driver's shared configuration.
func (f *sharedFlags) config(env environment, args []string) (driver.Config, error) {
	c := driver.Config{
		Sources: args, ByFile: f.by == "file", Duration: f.duration,
		Stdin: env.stdin, Stdout: env.stdout, Stderr: env.stderr, StdoutTTY: env.stdoutTTY, StderrTTY: env.stderrTTY,
	}
	switch f.by {
	case "", "file", "none":
	default:
		return c, usagef("--by %q: want file", f.by)
	}
	c.Read.Format = f.inputFormat
	if f.bound != "" {
		b, err := hist.ParseBoundKind(f.bound)
		if err != nil {
			return c, usageError{err}
		}
		c.Read.Bound = b
	}
	if f.tz != "" {
		loc, err := loadLocation(f.tz)
		if err != nil {
			return c, usagef("--tz %q: %v", f.tz, err)
		}
		c.Read.Location = loc
	}
	if f.interval < 0 {
		return c, usagef("--interval must be positive")
	}
	c.Read.Interval = f.interval
	c.Read.DB = f.db.options()
	c.Read.Server = f.server.options()
	c.Read.Events = f.events
	c.Read.Follow = f.follow
	calls, cpu, _ := strings.Cut(f.calls, ",")
	switch {
	case calls != "" && calls != source.CallsByType && calls != source.CallsBySQL,
		cpu != "" && cpu != "cpu", calls == "" && strings.Contains(f.calls, ","):
		return c, usagef("--calls %q: want type or sql, optionally with ,cpu (type,cpu)", f.calls)
	}
	c.Read.Calls, c.Read.CallCPU = calls, cpu == "cpu"
	if f.counts != "" {
		mode, err := source.ParseCounts(f.counts)
		if err != nil {
			return c, usageError{err}
		}
		c.Read.Counts = mode
	}
	if f.unit != "" {
		u, err := hist.ParseUnit(f.unit)
		if err != nil {
			return c, usageError{err}
		}
		c.Read.Unit = u
	}
	if f.date != "" {
		d, err := time.ParseInLocation("2006-01-02", f.date, c.Read.Loc())
		if err != nil {
			return c, usagef("--date %q: want YYYY-MM-DD", f.date)
		}
		c.Read.Date = d
	}
	return c, f.window(&c)
}

// window reads --from, --until (or --to) and --series.
func (f *sharedFlags) window(c *driver.Config) error {
	until := f.until
	if f.to != "" {
		if until != "" && until != f.to {
			return usagef("--to is --until: give one of them")
		}
		until = f.to
	}
	now := time.Now()
	for _, w := range []struct {
		name, value string
		into        *time.Time
	}{{"from", f.from, &c.Read.From}, {"until", until, &c.Read.To}} {
		if w.value == "" {
			continue
		}
		t, err := source.ParseWhen(w.value, now, c.Read.Loc())
		if err != nil {
			return usagef("--%s: %v", w.name, err)
		}
		*w.into = t
	}
	if !c.Read.From.IsZero() && !c.Read.To.IsZero() && !c.Read.From.Before(c.Read.To) {
		return usagef("--from %s is not before --until %s", c.Read.From.Format(time.RFC3339), c.Read.To.Format(time.RFC3339))
	}
	if f.series != "" {
		if err := driver.CheckSeriesPattern(f.series); err != nil {
			return usagef("--series: %v", err)
		}
	}
	c.Read.Series = f.series
	return nil
}

// loadLocation accepts IANA names, UTC and fixed offsets like +02:00.
func loadLocation(name string) (*time.Location, error) {
	if t, err := time.Parse("-07:00", name); err == nil {
		_, off := t.Zone()
		return time.FixedZone(name, off), nil
	}
	return time.LoadLocation(name)
}

func newRootCommand(env environment) *cobra.Command {
	root := &cobra.Command{
		Use:   "latscope",
		Short: "Latency heat maps and reports for databases and hosts",
		Long: `latscope makes database and host latency visible: latency histograms over time
(heat maps), per-event reports and recordings, from Oracle 10046 traces, PyLatencyMap
records (Oracle event histograms, AWR extracts), live PostgreSQL, MySQL/MariaDB and Oracle
databases, tracing-tool histograms, latscope recordings and storage and network probes;
and flame graphs from sampled stacks, with database-aware decoding.

Frequency heat maps show events per second per latency bucket; intensity heat maps show
time waited per second, which is where the time goes.`,
		Example: `  latscope heatmap iotest:/var/tmp --duration 30s       # live storage latency test
  latscope heatmap trace.trc                           # replay a 10046 trace as heat maps
  latscope heatmap example_latency_data.txt -o map.html
  latscope report trace.trc --format json
  latscope record iotest:. --duration 1m -o io.lsr && latscope heatmap io.lsr
  latscope report postgres://app@db01/appdb --duration 1m
  latscope flame --pid 4242 --duration 10s -o cpu.html`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
	}
	root.SetOut(env.stdout)
	root.SetErr(env.stderr)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w (see %s --help)", err, cmd.CommandPath())}
	})
	root.AddCommand(newHeatmapCommand(env), newReportCommand(env), newRecordCommand(env), newConvertCommand(env), newFormatsCommand(env), newIOTestCommand(env), newNetTestCommand(env), newSourcesCommand(env), newCollapseCommand(env), newFlameCommand(env), newServeCommand(env), newAWRCommand(env), newProfileCommand(env), newWorkingSetCommand(env), newWhatIfCommand(env), newDiffCommand(env), newClusterCommand(env), newAuditCommand(env))
	root.SetVersionTemplate("latscope {{.Version}}\n")
	return root
}

func requireSources(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return usagef("%s needs at least one SOURCE (a file, - for stdin, or a probe such as iotest:DIR); see --help", cmd.CommandPath())
	}
	return nil
}

func newHeatmapCommand(env environment) *cobra.Command {
	var (
		shared       sharedFlags
		output       string
		style        mapStyleFlags
		show, format string
		once, plain  bool
		speed        float64
	)
	cmd := &cobra.Command{
		Use:   "heatmap SOURCE...",
		Short: "Show latency heat maps in the terminal or write them as HTML/SVG/PNG",
		Long: `Show frequency (events/s) and intensity (time waited/s) heat maps per latency bucket
over time, one series at a time, as OraLatencyMap and PyLatencyMap do.

Files are replayed (at most 10 frames/s; --speed N paces at N× recorded time); probes,
--follow and stdin are drawn live. Keys: space pause, n/p next/previous series,
f/i/b frequency/intensity/both, l log scale, q quit.

Without a terminal (pipes, CI) frames are printed as plain text: ' ' no data, '.' zero
events, '1'-'6' colour levels. -o FILE.html|.svg|.png writes the whole recording as one
image (HTML: every series, hover tooltips, summary table, no network access); for a live
source the terminal view runs first and the file is written when it stops.`,
		Example: `  latscope heatmap iotest:. --duration 30s
  latscope heatmap DBM11106_ora_6334.trc --event 'db file sequential read'
  latscope heatmap example_latency_data.txt --once --plain
  latscope heatmap a.trc b.trc -o waits.html
  latscope heatmap DBM11106_ora_6334.trc --rows-per-octave 4 --scale log -o waits.svg
  latscope heatmap example_latency_data.txt --format json > matrix.json
  sqlplus -S / @ora_latency.sql | latscope heatmap -
  latscope heatmap /var/lib/latscope --from -1h -o last-hour.html   # from the archive
  latscope heatmap /var/lib/latscope --from '2026-11-25 03:00' --to '2026-11-25 03:30' --series 'log file sync'
  latscope heatmap https://latscope.example:7879 --from -1h --token-file ~/.latscope-token -o last-hour.html`,
		Args: requireSources,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := shared.config(env, args)
			if err != nil {
				return err
			}
			hc := driver.HeatmapConfig{Config: c, Output: output, Once: once, Plain: plain, Speed: speed, ColumnWidth: shared.interval}
			switch format {
			case "table", "json", "csv":
				hc.Format = format
			default:
				return usagef("--format %q: want table, json or csv", format)
			}
			if hc.MapStyle, err = style.parse(); err != nil {
				return err
			}
			if hc.Show, err = terminal.ParseShow(show); err != nil {
				return usagef("--%w", err)
			}
			if speed < 0 {
				return usagef("--speed must be positive")
			}
			return driver.Heatmap(cmd.Context(), hc)
		},
	}
	shared.register(cmd)
	shared.registerTo(cmd)
	fl := cmd.Flags()
	fl.StringVarP(&output, "output", "o", "", "write the whole recording to FILE.html, .svg or .png")
	fl.StringVar(&show, "show", "both", "maps to show: both, frequency or intensity")
	style.register(cmd, "colour scale: linear or log")
	fl.BoolVar(&once, "once", false, "read the whole source and print only the final frame of every series")
	fl.BoolVar(&plain, "plain", false, "print frames without escape codes (implied when stdout is not a terminal)")
	fl.Float64Var(&speed, "speed", 0, "replay at N× recorded time (default: one column per frame, 10 frames/s)")
	fl.StringVar(&format, "format", "table", "table draws the maps; json or csv print every series' whole heat-map matrix (rates per cell) instead")
	return cmd
}

func newReportCommand(env environment) *cobra.Command {
	var (
		shared    sharedFlags
		format    string
		output    string
		intervals bool
		set       string
		style     mapStyleFlags
	)
	cmd := &cobra.Command{
		Use:   "report SOURCE...",
		Short: "Summarise latency per series: counts, time waited, percentiles, buckets, intervals",
		Long: `Summarise every series (wait event and instance): events, total time waited (exact when
the source gives every event's duration, else estimated from bucket midpoints), mean,
p50/p90/p99, power-of-two latency buckets and per-interval rows.

--format json gives the machine-readable form (docs/report-format.md); csv gives one long
table with a "kind" column (series, bucket, interval). -o FILE writes by extension:
.json, .csv, .txt, or .html/.svg/.png for heat-map images, drawn with --scale and
--rows-per-octave as latscope heatmap draws them.

--set prints host series (the host: source, or a recording, archive or PCP archive
holding them) per interval in sysstat's layouts, with Average rows: sar-u, iostat-x,
sar-n-dev, or every series of a group: cpu, mem, disk, net (docs/host.md).`,
		Example: `  latscope report DBM11106_ora_6334.trc
  latscope report example_latency_data.txt --format json | jq '.series[0].mean_us'
  latscope report a.trc b.trc --by file --format csv > waits.csv
  latscope report DBM11106_ora_6334.trc --rows-per-octave 4 --scale log -o waits.html
  latscope report /var/lib/latscope --from -24h --series 'db file*'   # from the archive
  latscope report https://latscope.example:7879 --from -1h --token-file ~/.latscope-token   # from a server
  latscope report host: --set iostat-x --interval 1s --duration 1m     # as iostat -x 1 60 prints it`,
		Args: requireSources,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := shared.config(env, args)
			if err != nil {
				return err
			}
			switch format {
			case "table", "json", "csv":
			default:
				return usagef("--format %q: want table, json or csv", format)
			}
			if set != "" && !slices.Contains(reportset.Names(), set) {
				return usagef("--set %q: want one of %s", set, strings.Join(reportset.Names(), ", "))
			}
			rc := driver.ReportConfig{Config: c, Format: format, Output: output, Intervals: intervals, Set: set}
			if rc.MapStyle, err = style.parse(); err != nil {
				return err
			}
			return driver.Report(cmd.Context(), rc)
		},
	}
	shared.register(cmd)
	shared.registerTo(cmd)
	fl := cmd.Flags()
	fl.StringVar(&format, "format", "table", "stdout format: table, json or csv")
	fl.StringVarP(&output, "output", "o", "", "write to FILE (.json, .csv, .txt, .html, .svg, .png) instead of stdout")
	fl.BoolVar(&intervals, "intervals", false, "list per-interval rows in the table too")
	fl.StringVar(&set, "set", "", "print host series per interval as sysstat does: "+strings.Join(reportset.Names(), ", "))
	style.register(cmd, "heat-map colour scale of -o .html, .svg or .png: linear or log")
	return cmd
}

func newRecordCommand(env environment) *cobra.Command {
	var (
		shared      sharedFlags
		output, dir string
	)
	cmd := &cobra.Command{
		Use:   "record SOURCE... -o FILE | --archive DIR",
		Short: "Save the normalised latency stream in a recording file or the embedded archive",
		Long: `Save the stream of latency histograms (every interval of every series) in latscope's
compact, versioned recording format (docs/recording-format.md). Every latscope command
accepts the file as a SOURCE, so a recording can be replayed, reported or turned into an
image later. Live sources are written interval by interval, so another latscope can
follow the file while it grows (latscope heatmap --follow FILE).

--archive DIR appends to the embedded archive in the data directory DIR instead
(docs/archive.md): a SQLite database indexed by series and time, one transaction per
interval of a live source, downsampled to 1-minute windows and pruned (raw 7 days,
minutes 90 days) every minute while recording. Every command reads DIR as a SOURCE,
selected with --from, --until and --series.`,
		Example: `  latscope record iotest:/u01 --duration 10m -o u01.lsr
  latscope record DBM11106_ora_6334.trc -o trace.lsr && latscope report trace.lsr
  latscope record mysql://app@db01:3306/ --archive /var/lib/latscope --duration 1h
  latscope heatmap /var/lib/latscope --from -1h -o last-hour.html`,
		Args: requireSources,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := shared.config(env, args)
			if err != nil {
				return err
			}
			switch {
			case output == "" && dir == "":
				return usagef("record needs -o FILE (for example -o capture.lsr) or --archive DIR")
			case output != "" && dir != "":
				return usagef("record writes -o FILE or --archive DIR, not both")
			}
			return driver.Record(cmd.Context(), driver.RecordConfig{Config: c, Output: output, Archive: dir})
		},
	}
	shared.register(cmd)
	shared.registerTo(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "", "recording file to write")
	cmd.Flags().StringVar(&dir, "archive", "", "data directory of the embedded archive to append to (created if missing)")
	return cmd
}

func newConvertCommand(env environment) *cobra.Command {
	var (
		shared               sharedFlags
		to, output, endpoint string
	)
	cmd := &cobra.Command{
		Use:   "convert SOURCE... --to FORMAT [-o FILE]",
		Short: "Write the latency stream in another tool's format",
		Long: `Write the stream of latency histograms in another tool's format, so latscope's
histograms flow into PyLatencyMap, HdrHistogram tools, Grafana/Prometheus or a
spreadsheet. The conversion is exact where the target can hold the data; when it
cannot (for example rebinning into power-of-two buckets), latscope says so on stderr.
Without -o (or with -o -) the output goes to stdout. See latscope formats for the
targets and what each keeps.`,
		Example: `  latscope convert DBM11106_ora_6334.trc --to hdrlog -o waits.hlog
  latscope convert fio.json --to pylatencymap | python3 LatencyMap.py
  latscope convert example_latency_data.txt -o waits.jsonl
  latscope convert /var/lib/latscope --from -7d --until -6d -o day.jsonl   # from the archive
  latscope convert trace.trc --to otlp --otlp-endpoint http://127.0.0.1:4318   # OpenTelemetry`,
		Args: requireSources,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := shared.config(env, args)
			if err != nil {
				return err
			}
			if to == "" && (output == "" || output == "-") {
				return usagef("say which format to write with --to (see latscope formats)")
			}
			return driver.Convert(cmd.Context(), driver.ConvertConfig{Config: c, To: to, Output: output, Endpoint: endpoint})
		},
	}
	shared.register(cmd)
	cmd.Flags().StringVar(&to, "to", "", "output format (default: from the -o extension)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "file to write (default: stdout)")
	cmd.Flags().StringVar(&endpoint, "otlp-endpoint", "", "OTLP/HTTP receiver for --to otlp (http://HOST:4318; path default /v1/metrics)")
	return cmd
}

func newFormatsCommand(env environment) *cobra.Command {
	return &cobra.Command{
		Use:   "formats",
		Short: "List the input formats, output formats and live probes",
		Long: `List every input format latscope detects (and how), every output format of
latscope convert (and what it keeps), and the live probes, each with an example.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return writeFormats(env.stdout)
		},
	}
}

func newSourcesCommand(env environment) *cobra.Command {
	return &cobra.Command{
		Use:   "sources",
		Short: "List the live sources (databases, probes) with what each reads and the privileges to grant",
		Long: `List every live SOURCE scheme (postgres://, mysql://, mariadb://, oracle://, iotest:):
what it reads, how often, its limits and the exact privileges its database user needs.
Database passwords come from the URI, the environment (PGPASSWORD, MYSQL_PWD,
ORACLE_PASSWORD) or --password-file, and are never printed.`,
		Example: `  latscope sources
  latscope heatmap postgres://app@db01:5432/appdb --probe "select 1"
  latscope report mysql://app@db01:3306/ --setup --duration 1m --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var b strings.Builder
			b.WriteString("LIVE SOURCES (use them wherever a SOURCE is accepted; --duration stops them)\n")
			first := map[string]string{} // description → the scheme that showed it
			for _, p := range driver.Probes() {
				if alias, ok := first[p.Description]; ok {
					fmt.Fprintf(&b, "\n  %s:\n    the same as %s:\n", p.Scheme, alias)
					continue
				}
				first[p.Description] = p.Scheme
				fmt.Fprintf(&b, "\n  %s:\n    %s\n", p.Scheme, p.Description)
			}
			_, err := io.WriteString(env.stdout, b.String())
			return err
		},
	}
}

// writeFormats prints the format catalogue.
func writeFormats(w io.Writer) error {
	var b strings.Builder
	b.WriteString("INPUT FORMATS (detected in this order; --input-format NAME forces one)\n")
	for _, f := range driver.Formats() {
		fmt.Fprintf(&b, "\n  %s\n    %s\n", f.Name, f.Description)
		if f.Detection != "" {
			fmt.Fprintf(&b, "    detected by: %s\n", f.Detection)
		}
		if f.Example != "" {
			fmt.Fprintf(&b, "    example:     %s\n", f.Example)
		}
	}
	b.WriteString("\nARCHIVES (a path, or a server URL, given as SOURCE; --from, --until and --series select from them)\n")
	for _, st := range driver.Stores() {
		fmt.Fprintf(&b, "\n  %s\n    %s\n    detected by: %s\n    example:     %s\n", st.Name, st.Description, st.Detection, st.Example)
	}
	b.WriteString("\nOUTPUT FORMATS (latscope convert --to NAME, or by -o extension)\n")
	for _, f := range driver.Sinks() {
		where := f.Extension
		if f.Sent {
			where = "sent to --otlp-endpoint"
		}
		fmt.Fprintf(&b, "\n  %s (%s)\n    %s\n    keeps: %s\n", f.Name, where, f.Description, f.Keeps)
		if f.Example != "" {
			fmt.Fprintf(&b, "    example: %s\n", f.Example)
		}
	}
	b.WriteString("\nLIVE PROBES\n")
	for _, p := range driver.Probes() {
		fmt.Fprintf(&b, "\n  %s:ARG\n    %s\n", p.Scheme, p.Description)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// buildVersion is set by the Makefile (-ldflags -X main.buildVersion=...).
var buildVersion string

// version reports the version the binary was built from.
func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v = strings.TrimSpace(v + " " + s.Value[:12])
		}
	}
	if v == "" || v == "(devel)" {
		return "dev"
	}
	return v
}

// mapStyleFlags are the flags of every command that draws heat maps.
type mapStyleFlags struct {
	scale         string
	rowsPerOctave int
}

func (f *mapStyleFlags) register(cmd *cobra.Command, scaleUsage string) {
	fl := cmd.Flags()
	fl.StringVar(&f.scale, "scale", "linear", scaleUsage)
	fl.IntVar(&f.rowsPerOctave, "rows-per-octave", 1, "latency rows per power of two: 1, 2, 4 or 8 (finer rows only for sources with exact durations)")
}

func (f mapStyleFlags) parse() (driver.MapStyle, error) {
	var s driver.MapStyle
	var err error
	// The parsers name what they read ("scale"), which is the flag.
	if s.Scale, err = heatmap.ParseScale(f.scale); err != nil {
		return s, usagef("--%w", err)
	}
	switch f.rowsPerOctave {
	case 1, 2, 4, 8:
		s.RowScale = bits.TrailingZeros(uint(f.rowsPerOctave))
		return s, nil
	}
	return s, usagef("--rows-per-octave %d: want 1, 2, 4 or 8", f.rowsPerOctave)
}
