// Package events reads per-event latency lines and bins them into exact
// histograms per interval:
//
//   - "events": Brendan Gregg's HeatMap input (one "time latency" pair per
//     line, optionally under a header such as "TIMEus DELTAus") and the
//     tables of per-I/O tracers: perf-tools iosnoop -t/-s (STARTs ENDs ...
//     LATms), bcc biosnoop (TIME(s) ... LAT(ms)), bpftrace biosnoop.bt
//     (TIME(ms) ... LAT(ms)).
//   - "oracle-wait-lines": the "HH:MM:SS pid=N event=NAME wait_time=US"
//     lines of Canali's bcc ora_wait_trace.py.
package events

import (
	"strings"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
)

// Format names users give to --input-format.
const (
	FormatName     = "events"
	WaitFormatName = "oracle-wait-lines"
)

// detectGiveUp is how much input without a decisive line makes Detect say
// No: all that detection reads, because the tracers print banners and
// scripts log before their first event line.
const detectGiveUp = input.DetectLimit

// Format returns the per-event table and pair format.
func Format() source.Format {
	return source.Format{
		Name: FormatName,
		Description: "per-event latencies: HeatMap `time latency` pairs, perf-tools iosnoop -ts, bcc/bpftrace biosnoop tables; " +
			"binned per --interval (default 1s) into exact histograms, one series \"latency\". " +
			"Columns come from the header: time = END, else TIME/TIMESTAMP/TS, else START (+latency); latency = LAT/LATENCY/DELTA/DURATION/ELAPSED. " +
			"Units from the header's suffix (TIMEus, LAT(ms), ENDs: s/ms/us/ns); without one time is in s and latency in --unit, else us. " +
			"Times in [2000, 2100) as Unix seconds are wall clock, others (iosnoop's monotonic seconds, time since start) relative; " +
			"tables without a time column (plain iosnoop) are skipped",
		Detection: "a header naming a latency column (LATms, LAT(ms), DELTAus) followed by a row that fits it, " +
			"or a file that starts with two `time latency` number pairs (an optional first header line aside); per-event, no counts to accumulate",
		Example: "latscope heatmap iosnoop-ts.out --interval 1s",
		Detect:  Detect,
		Open:    Open,
	}
}

// WaitFormat returns the ora_wait_trace.py line format.
func WaitFormat() source.Format {
	return source.Format{
		Name: WaitFormatName,
		Description: "bcc ora_wait_trace.py lines `HH:MM:SS pid=N event=NAME wait_time=US`: one series per event (the pid is not part of the key), " +
			"binned per --interval (default 1s) into exact histograms; the day is --date, else the file's modification date; " +
			"a time more than 12 h before the previous one is the next day",
		Detection: "a line HH:MM:SS ... event=NAME wait_time=N; per-event, no counts to accumulate",
		Example:   "latscope report ora_wait_trace.out --date 2024-03-14",
		Detect:    DetectWait,
		Open:      OpenWait,
	}
}

// Detect says Yes once a header of a latency table is followed by a row
// that fits it, or the input starts with two number pairs; No after 64 KiB
// without either.
func Detect(prefix []byte) input.Verdict {
	scan := input.LineScan{GiveUp: detectGiveUp}
	var table *layout
	pairs, lines := 0, 0
	pairsPossible := true
	for l := range scan.Lines(prefix) {
		fields := strings.Fields(string(l.Text))
		if len(fields) == 0 {
			continue
		}
		lines++
		if h, ok := parseHeader(fields); ok {
			table = &h
			continue
		}
		if table != nil {
			if rowFits(table, fields) {
				return input.Yes
			}
			continue
		}
		if len(fields) == 2 && rowFits(&pairsLayout, fields) {
			pairs++
		} else if lines > 1 {
			pairsPossible = false // pairs count only at the very start (a first header aside)
		}
		if pairsPossible && pairs >= 2 {
			return input.Yes
		}
	}
	return scan.Undecided(prefix)
}

// rowFits says a row parses under a table: time (when there is one) and
// latency are numbers; a table without time needs the header's field count.
func rowFits(l *layout, fields []string) bool {
	if !l.startsRow(fields) || (l.timeCol < 0 && len(fields) != len(l.columns)) {
		return false
	}
	if l.timeCol >= 0 {
		ts, ok := l.field(fields, l.timeCol)
		if !ok {
			return false
		}
		if _, ok := parseNanos(ts, l.timeUnit); !ok {
			return false
		}
	}
	ls, ok := l.field(fields, l.latCol)
	if !ok {
		return false
	}
	_, ok = parseLatency(ls)
	return ok
}

// DetectWait says Yes once a complete line is an ora_wait_trace.py line, No
// after 64 KiB without one.
func DetectWait(prefix []byte) input.Verdict {
	scan := input.LineScan{GiveUp: detectGiveUp}
	for l := range scan.Lines(prefix) {
		if _, reason := parseWaitLine(string(l.Text)); reason == "" {
			return input.Yes
		}
	}
	return scan.Undecided(prefix)
}

// Open returns a streaming Source of the events format: each interval is
// emitted once later events close it, the open ones at the end.
func Open(in source.Input, opts source.Options) (source.Source, error) {
	return source.NewLineSource(in, opts, maxLineLen, newPairsParser)
}

// OpenWait returns a streaming Source of ora_wait_trace.py lines.
func OpenWait(in source.Input, opts source.Options) (source.Source, error) {
	return source.NewLineSource(in, opts, maxLineLen, newWaitParser)
}

// maxLineLen bounds the memory one input line may take: event lines are
// shorter than 200 bytes, so longer ones are garbage and only reported.
const maxLineLen = 64 << 10
