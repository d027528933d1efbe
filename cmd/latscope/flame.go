package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/latscope/latscope/driver"
	"github.com/latscope/latscope/flame/collapse"
	"github.com/latscope/latscope/flame/load"
	"github.com/latscope/latscope/flame/svg"
)

// stackFlags are the flags shared by collapse and flame.
type stackFlags struct {
	pid, tid, kernel, jit, addrs bool
	eventFilter                  string
	threads                      int
	include, exclude, skipAfter  []string
	focus, db, view              string
	compat                       string
	output, format               string
	inputFormat, sampleIndex     string
	diff, all                    bool
}

// register adds the flags; flame names stackcollapse-perf.pl's --pid and
// --tid --per-process and --per-thread, since its --pid PID profiles live.
func (f *stackFlags) register(cmd *cobra.Command, flame bool) {
	fl := cmd.Flags()
	pid, tid := "pid", "tid"
	if flame {
		pid, tid = "per-process", "per-thread"
	}
	fl.BoolVar(&f.pid, pid, false, "perf: add comm-PID to the root frame (stackcollapse-perf.pl --pid)")
	fl.BoolVar(&f.tid, tid, false, "perf: add comm-PID/TID to the root frame (stackcollapse-perf.pl --tid)")
	fl.BoolVar(&f.kernel, "kernel", false, "perf: mark kernel frames with _[k]")
	fl.BoolVar(&f.jit, "jit", false, "perf: mark JIT frames (perf-PID.map) with _[j]")
	fl.BoolVar(&f.addrs, "addrs", false, "perf: keep raw addresses of unknown symbols")
	fl.StringVar(&f.eventFilter, "event-filter", "", "perf: keep samples of this event (default: the first event seen)")
	fl.StringVar(&f.compat, "compat", "", "perl: collapse as FlameGraph's stackcollapse-perf.pl (exactly, faults included) and stackcollapse.pl "+
		"(default: as inferno, which keeps C++ names with parentheses and counts a last sample without a blank line after it)")
	fl.IntVar(&f.threads, "threads", 0, "collapse with this many threads (default: all CPUs; output does not depend on it)")
	fl.StringArrayVar(&f.include, "include", nil, "keep only stacks with a frame matching this regular expression (repeatable)")
	fl.StringArrayVar(&f.exclude, "exclude", nil, "drop stacks with a frame matching this regular expression (repeatable)")
	fl.StringVar(&f.focus, "focus", "", "re-root every stack at this function; stacks without it are dropped")
	fl.StringArrayVar(&f.skipAfter, "skip-after", nil, "cut the callers of this function (repeatable)")
	fl.StringVar(&f.db, "db", "", "decode database frames: oracle (qer* rowsources → plan operations) or postgres (executor → plan nodes)")
	fl.StringVar(&f.view, "view", "", "with --db: plan (only plan operations) or plan+layers (also the database's layer functions)")
	fl.StringVarP(&f.output, "output", "o", "", "write to FILE: .svg, .html, .folded/.txt, .json (functions by self and total) or .pb.gz/.pb (pprof)")
	fl.StringVar(&f.inputFormat, "input-format", "", "read INPUTs as this format: perf, dtrace, stap, bpftrace, gdb, folded or pprof (default: detected)")
	fl.StringVar(&f.sampleIndex, "sample-index", "", "pprof input: the sample type to draw, by index or name (default: the profile's default, else its last, as pprof)")
	fl.BoolVar(&f.diff, "diff", false, "differential: the two INPUTs are BASE and NEW (width from NEW, colour by the change)")
}

func (f *stackFlags) config(env environment, args []string) (driver.FlameConfig, error) {
	if f.compat != "" && f.compat != "perl" {
		return driver.FlameConfig{}, usagef("--compat %q: the only choice is perl (the default collapses as inferno)", f.compat)
	}
	c := driver.FlameConfig{
		Input: load.Input{Files: args, Format: f.inputFormat, SampleIndex: f.sampleIndex, Options: collapse.Options{
			Perl: f.compat == "perl", PID: f.pid, TID: f.tid, Kernel: f.kernel, JIT: f.jit, All: f.all, Addrs: f.addrs,
			EventFilter: f.eventFilter, Threads: f.threads,
		}},
		Filters: driver.StackFilters{Include: f.include, Exclude: f.exclude, Focus: f.focus, SkipAfter: f.skipAfter, DB: f.db, View: f.view},
		Output:  f.output, Format: f.format,
		Stdin: env.stdin, Stdout: env.stdout, Stderr: env.stderr, StdoutTTY: env.stdoutTTY, StderrTTY: env.stderrTTY,
	}
	if f.diff {
		c.Diff, c.Input.Files = args, nil
	}
	return c, nil
}

// formatWord takes a leading stack-format word ("perf", "dtrace", ...)
// off the arguments unless a file of that name exists.
func formatWord(args []string) (string, []string) {
	if len(args) == 0 {
		return "", args
	}
	if args[0] == "pstack" { // one format for gdb and pstack backtraces
		if _, err := os.Stat(args[0]); err != nil {
			return "gdb", args[1:]
		}
	}
	names := []string{"pprof"}
	for _, f := range collapse.Formats() {
		names = append(names, f.Name)
	}
	for _, name := range names {
		if args[0] == name {
			if _, err := os.Stat(args[0]); err != nil {
				return name, args[1:]
			}
		}
	}
	return "", args
}

func newCollapseCommand(env environment) *cobra.Command {
	var f stackFlags
	cmd := &cobra.Command{
		Use:   "collapse [perf|dtrace|stap|bpftrace|gdb|pstack|folded|pprof] INPUT...",
		Short: "Fold sampled stacks (perf script, perf.data, DTrace, SystemTap, bpftrace, gdb) into frame;frame;... count lines",
		Long: `Fold sampled stacks into the folded format of FlameGraph and inferno: one line per distinct
stack, frames from the root joined by ';', then the sample count (perf's period when present).
The format word may be left out: it is detected. perf.data files are read through perf script.
Stacks are collapsed as inferno does (inferno-collapse-perf, inferno-collapse-dtrace);
--compat perl gives FlameGraph's stackcollapse-perf.pl output byte for byte, faults included
(C++ names cut at their first '(', a last sample without a blank line after it lost), and
stackcollapse.pl's for DTrace (whose first lines are skipped only when they are dtrace's header).
pprof profiles (.pb.gz, .pb: Go, Pyroscope, Parca) are read too; -o out.pb.gz writes one.
See docs/flamegraphs.md.
Inputs may be gzip-compressed; - reads standard input.`,
		Example: `  perf script | latscope collapse > out.folded           # as inferno-collapse-perf
  latscope collapse perf.data --pid --kernel -o out.folded
  perf script | latscope collapse --compat perl            # stackcollapse-perf.pl's exact output
  latscope collapse dtrace out.stacks                      # DTrace ustack() aggregation
  latscope collapse perf.data --db oracle --view plan      # Oracle rowsources only (os_explain)
  latscope collapse perf.data -o cpu.pb.gz                 # pprof for go tool pprof, Pyroscope, Parca
  latscope collapse cpu.pb.gz --sample-index cpu           # a pprof profile as folded stacks`,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, rest := formatWord(args) // no INPUT: standard input
			if len(rest) == 0 {
				rest = []string{"-"}
			}
			c, err := f.config(env, rest)
			if err != nil {
				return err
			}
			if format != "" {
				c.Input.Format = format
			}
			return driver.Collapse(cmd.Context(), c)
		},
	}
	f.register(cmd, false)
	cmd.Flags().BoolVar(&f.all, "all", false, "perf: mark kernel and JIT frames (--kernel --jit)")
	cmd.Flags().StringVar(&f.format, "format", "", "stdout format: folded (default), json or pprof")
	return cmd
}

// flameFlags are the flamegraph.pl options plus live profiling.
type flameFlags struct {
	stackFlags
	svg       svg.Options
	pidLive   int
	allCPUs   bool
	duration  time.Duration
	frequency int
	event     string
	callGraph string
}

func newFlameCommand(env environment) *cobra.Command {
	var f flameFlags
	cmd := &cobra.Command{
		Use:   "flame INPUT... -o out.svg|out.html",
		Short: "Draw a flame graph (SVG or interactive HTML) from perf.data, perf script, folded stacks or a live perf record",
		Long: `Draw a flame graph from sampled stacks in one command: perf.data (read with perf script),
perf script text, folded stacks, DTrace, SystemTap, bpftrace or gdb output, pprof profiles
(.pb.gz), or profile live with
--pid PID or --all (runs perf record for --duration, then cleans up).

-o out.svg writes flamegraph.pl's SVG (same options; frame geometry equal to inferno's) with
click-to-zoom and search; -o out.html writes a self-contained viewer that stays fast for very
large profiles, with search (next/previous match), a table of functions, a sandwich view of one
function's callers and callees, and --diff BASE NEW.`,
		Example: `  latscope flame perf.data -o cpu.svg
  perf script | latscope flame - -o cpu.html
  latscope flame --pid 4242 --duration 10s -o db.html        # runs perf record itself
  latscope flame --all --duration 30s --frequency 99 -o host.svg
  latscope flame --diff before.folded after.folded -o diff.html
  latscope flame cpu.pb.gz -o cpu.html                       # a Go (or any pprof) profile
  latscope flame perf.data --db postgres --view plan -o plan.svg
  latscope flame oracle.perf.data --db oracle --view plan+layers -o rowsources.html`,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.config(env, args)
			if err != nil {
				return err
			}
			c.SVG = f.svg
			c.Input.TimeOrder = f.svg.FlameChart
			c.Input.PID, c.Input.All = f.pidLive, f.allCPUs
			c.Input.Duration, c.Input.Frequency, c.Input.Event, c.Input.CallGraph = f.duration, f.frequency, f.event, f.callGraph
			if (f.pidLive != 0 || f.allCPUs) && len(args) > 0 {
				return usagef("give INPUT files or --pid/--all, not both")
			}
			if f.pidLive == 0 && !f.allCPUs && len(args) == 0 {
				return usagef("give INPUT files (- for stdin), or --pid PID or --all to profile live")
			}
			if f.svg.MinWidth != "" {
				if err := svg.ParseMinWidth(f.svg.MinWidth); err != nil {
					return usagef("--minwidth: %v", err)
				}
			}
			return driver.Flame(cmd.Context(), c)
		},
	}
	f.stackFlags.register(cmd, true)
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "", "stdout format when no -o: svg (default), html, folded, json or pprof")
	fl.IntVarP(&f.pidLive, "pid", "p", 0, "profile this process live with perf record")
	fl.BoolVar(&f.allCPUs, "all", false, "profile every CPU live with perf record -a")
	fl.DurationVar(&f.duration, "duration", 10*time.Second, "live profiling time")
	fl.IntVar(&f.frequency, "frequency", 99, "live sampling frequency, Hz")
	fl.StringVar(&f.event, "perf-event", "cpu-clock", "live sampling event (cpu-clock works in VMs without hardware counters)")
	fl.StringVar(&f.callGraph, "call-graph", "fp", "live stack unwinding: fp (frame pointers), dwarf or lbr")
	fl.StringVar(&f.svg.Title, "title", "", "title (default \"Flame Graph\", \"Icicle Graph\" with --inverted)")
	fl.StringVar(&f.svg.Subtitle, "subtitle", "", "second title line")
	fl.IntVar(&f.svg.Width, "width", 0, "SVG width in pixels (default 1200)")
	fl.IntVar(&f.svg.Height, "height", 0, "frame height in pixels (default 16)")
	fl.StringVar(&f.svg.MinWidth, "minwidth", "", "omit frames narrower than this: pixels (default 0.1) or N%")
	fl.StringVar(&f.svg.FontType, "fonttype", "", "font (default Verdana)")
	fl.IntVar(&f.svg.FontSize, "fontsize", 0, "font size (default 12)")
	fl.StringVar(&f.svg.CountName, "countname", "", "what counts are (default samples)")
	fl.StringVar(&f.svg.NameType, "nametype", "", "label before a frame's name (default Function:)")
	fl.StringVar(&f.svg.Colors, "colors", "", "palette: hot (default), mem, io, wakeup, chain, java, js, perl, python, rust, red, green, blue, aqua, yellow, purple, orange")
	fl.StringVar(&f.svg.BgColors, "bgcolors", "", "background: yellow, blue, green, grey or #rrggbb")
	fl.BoolVar(&f.svg.Hash, "hash", false, "colour by a hash of the name (similar names, similar colours)")
	fl.BoolVar(&f.svg.Reverse, "reverse", false, "merge stacks from the leaf end (callers of leaf functions)")
	fl.BoolVar(&f.svg.Inverted, "inverted", false, "icicle graph: root at the top")
	fl.BoolVar(&f.svg.FlameChart, "flamechart", false, "flame chart: stacks in input (time) order, not merged")
	fl.BoolVar(&f.svg.Negate, "negate", false, "differential: swap the colours (blue = grew)")
	fl.StringVar(&f.svg.Notes, "notes", "", "notes embedded in the SVG")
	return cmd
}
