// Package tracehist reads the latency histograms tracing tools print:
// DTrace quantize()/lquantize()/llquantize() aggregations, SystemTap
// @hist_log/@hist_linear, bcc tool tables (biolatency, funclatency,
// ext4dist ...), bpftrace hist()/lhist() maps and perf-tools iolatency.
//
// Each tool is one source.Format. The output is split into prints (what the
// tool printed at one time: a time line or DTrace probe line starts one, and
// a series seen twice starts the next); each print becomes one interval,
// subtracted from the previous print when the tool's counts are cumulative
// (--counts; DTrace and SystemTap default to cumulative, bcc, bpftrace and
// iolatency to per interval). A cumulative print's first appearance counts
// from zero, because tracers start their aggregations empty one period
// before the first print; counts going down make a gap and a new baseline.
//
// Time: a time line (bcc -T "06:20:16", ext4dist "10:19:00:", bpftrace
// time(), DTrace printf("%Y"), ctime) ends its print's window; time-only
// lines fall on --date, else the file's modification date, and roll over
// at midnight. The first window is as long as the gap to the second time
// line (or DTrace's tick-N period, or --interval). Without time lines the
// prints are placed in relative time, tick-N or --interval apart (default
// 1 s), with a warning.
// Prose around the tables (the tools' example files, "Tracing... Hit
// Ctrl-C", a script's log) is skipped as chatter; rows that do not parse
// inside a table are reported as malformed. An input with no row of a
// latency table at all is an error naming its unused lines (a forced
// --input-format on the wrong file must not end in a silent "no data").
//
// Series: bpftrace tables are named by their map ("@usecs") with the map
// key as the instance ("sda, 8"); DTrace tables by their key line ("oracle
// 12345") and bcc tables by their section line, in any form: bcc's
// "disk = 'sda'", "key=value" after a sed rename ("event=db file
// sequential read"), or a bare name; else by the format name ("dtrace",
// "bcc", "systemtap", "iolatency"), which is what --event matches.
//
// Units: bcc's value label may be any text; its first word naming a time
// unit gives the unit ("usecs", "nsecs", "msecs", "wait time, microsec").
// A label naming a size is no latency; one naming no unit ("value") is
// read in --unit, else skipped with a warning naming its line.
//
// Buckets: power-of-two rows stay on latscope's power-of-two grid as
// lower-bound buckets ([N, 2N)); bcc's "0 -> 1" row is [0, 2) because bcc's
// slot for 0 and 1 is the same; linear and log-linear rows keep their own
// edges (hist.NewCustom). Negative buckets are dropped with a warning.
package tracehist

import (
	"bytes"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
)

// DTraceFormat returns the DTrace aggregation printout format.
func DTraceFormat() source.Format {
	return newFormat(dtraceDialect,
		"DTrace quantize()/lquantize()/llquantize() aggregations printed periodically (printa in a tick-N probe); "+
			"key lines name the series; unit ns unless --unit; counts cumulative by default (--counts interval if the script trunc()s)",
		"a line \"value  ---- Distribution ---- count\" before any other format's marker; counts cumulative",
		"dtrace -s pread_latency.d > pread.txt; latscope heatmap pread.txt --unit ns")
}

// SystemTapFormat returns the SystemTap histogram printout format.
func SystemTapFormat() source.Format {
	return newFormat(systemtapDialect,
		"SystemTap @hist_log/@hist_linear printed periodically (~ lines elide zero rows); "+
			"unit us unless --unit; counts cumulative by default (--counts interval if the script deletes the aggregate)",
		"a line \"value |-------- count\"; counts cumulative",
		"stap blockio_rq_issue_pylatencymap.stp 3 > stap.txt; latscope report stap.txt")
}

// BCCFormat returns the bcc tools' histogram table format.
func BCCFormat() source.Format {
	return newFormat(bccDialect,
		"bcc tool and script tables (biolatency, funclatency, ext4dist, Oracle wait histograms ...): \"LABEL : count distribution\" and \"a -> b\" rows, "+
			"-T time lines, per-key sections (disk = 'sda', event=NAME after sed, a bare name); unit from the label's words "+
			"(usecs, nsecs, msecs, \"wait time, microsec\"; none: --unit); counts per interval by default",
		"a line \"LABEL : count distribution\" (LABEL not a size), after any prose; counts per interval (stock tools clear each interval)",
		"biolatency-bpfcc -mT 1 60 > bio.txt; latscope heatmap bio.txt")
}

// BpftraceFormat returns the bpftrace map printout format.
func BpftraceFormat() source.Format {
	return newFormat(bpftraceDialect,
		"bpftrace hist()/lhist() maps (@name[key]: then [lo, hi) rows, K/M/G suffixes) printed by print() or at exit, "+
			"time() lines; unit from the map name (@usecs, @lat_ns, @ms), else --unit, else us; counts per interval by default "+
			"(--counts cumulative for scripts that print without clear())",
		"a line \"@name:\" or \"@name[key]:\" followed by a [lo, hi) row; counts per interval",
		"bpftrace -e 'tracepoint:block:block_rq_issue {...} interval:s:1 { time(); print(@usecs); clear(@usecs) }' > bt.txt; latscope heatmap bt.txt")
}

// IolatencyFormat returns the perf-tools iolatency printout format.
func IolatencyFormat() source.Format {
	return newFormat(iolatencyDialect,
		"perf-tools iolatency (ftrace) summaries: \">=(ms) .. <(ms) : I/O |Distribution\" tables, -T time lines; "+
			"unit ms; counts per interval",
		"a line \">=(ms) .. <(ms)   : I/O      |Distribution\"; counts per interval",
		"iolatency -T 5 > iolat.txt; latscope report iolat.txt --interval 5s")
}

// Formats returns every format of this package in the order to register
// them (any order works: each says Yes only on its own header).
func Formats() []source.Format {
	return []source.Format{DTraceFormat(), SystemTapFormat(), BCCFormat(), BpftraceFormat(), IolatencyFormat()}
}

func newFormat(d *dialect, description, detection, example string) source.Format {
	return source.Format{
		Name:        d.name,
		Description: description,
		Detection:   detection,
		Example:     example,
		Detect:      func(prefix []byte) input.Verdict { return detect(d.id, prefix) },
		Open: func(in source.Input, opts source.Options) (source.Source, error) {
			// One interval per print, each once the next print has begun
			// (or the input has ended).
			return source.NewLineSource(in, opts, maxLineLen, d.newParser)
		},
	}
}

// detectGiveUp is how much input without any table header makes Detect
// say No: all that detection reads, because tables follow prose (the tools'
// banners, their example files' pages of text, a script's log).
const detectGiveUp = input.DetectLimit

// otherMarkers start lines of other latscope formats (PyLatencyMap
// records, which may hold raw DTrace/SystemTap output, and Oracle traces).
var otherMarkers = [][]byte{
	[]byte("<begin record>"), []byte("<BEGIN RECORD>"),
	[]byte("Trace file "), []byte("PARSING IN CURSOR #"), []byte("WAIT #"), []byte("*** SESSION ID:("),
}

// detect says Yes when the first decisive line of the prefix is want's
// table header, No when it belongs to another format (or the prefix starts
// like JSON, or holds 64 KiB without a header), NeedMore otherwise. Only
// complete lines are judged.
func detect(want dialectID, prefix []byte) input.Verdict {
	if t := bytes.TrimLeft(prefix, " \t\r\n\ufeff"); len(t) > 0 && (t[0] == '{' || t[0] == '[') && !looksLikeBpftraceRow(t) {
		return input.No
	}
	got, needMore := firstDecisive(prefix)
	switch {
	case got == want:
		return input.Yes
	case got != dialectNone:
		return input.No
	case needMore || len(prefix) < detectGiveUp:
		return input.NeedMore
	}
	return input.No
}

// looksLikeBpftraceRow lets a prefix starting "[0]" or "[1, 2)" (a map's
// rows cut from its header) through the JSON check.
func looksLikeBpftraceRow(t []byte) bool {
	line, _, _ := bytes.Cut(t, []byte("\n"))
	_, shaped, _ := parseBracketRow(string(line))
	return shaped
}

// firstDecisive returns the dialect of the first line that settles
// detection; needMore says a bpftrace map header waits for its first row.
func firstDecisive(prefix []byte) (dialectID, bool) {
	mapHeader := false // the previous line was a bpftrace map header
	for l := range (input.LineScan{}).Lines(prefix) {
		if mapHeader {
			mapHeader = false
			if _, shaped, reason := parseBracketRow(string(l.Text)); shaped && reason == "" {
				return dialectBpftrace, false
			}
		}
		for _, m := range otherMarkers {
			if bytes.HasPrefix(bytes.TrimLeft(l.Text, " \t"), m) {
				return dialectOther, false
			}
		}
		h, ok := parseHeader(string(l.Text))
		switch {
		case !ok:
		case h.dialect == dialectBCC && h.labelKind == labelSize: // a bcc table of sizes, not latencies
		case h.dialect == dialectBpftrace:
			mapHeader = true
		default:
			return h.dialect, false
		}
	}
	return dialectNone, mapHeader
}

// maxLineLen bounds the memory one input line may take: histogram rows are
// shorter than 200 bytes, so longer lines are garbage and only reported.
const maxLineLen = 64 << 10
