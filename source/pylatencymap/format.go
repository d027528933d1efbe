// Package pylatencymap reads the PyLatencyMap record format: cumulative
// power-of-two latency histograms between "<begin record>" and
// "<end record>" lines, as written by PyLatencyMap's SQL*Plus scripts,
// connectors (SystemTap, DTrace, bcc, 10046) and OraLatencyMap-style feeds.
// Records may also hold raw DTrace quantize() or SystemTap @hist_log output
// (what PyLatencyMap's dtrace/systemtap connectors converted): its rows are
// read as lower-bound buckets with the tracehist package's row parser.
//
// It fixes the original engine's quirks instead of copying them: bucket
// semantics (upper or lower bound) are resolved per record and never silently
// default to lower bound for Oracle data, labels keep their case and commas,
// the unit is per record, wrapping µs timestamps are handled, and wall-clock
// time comes from the text dates.
package pylatencymap

import (
	"bytes"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
)

// FormatName is the name users give to --input-format.
const FormatName = "pylatencymap"

// detectGiveUp is how much input without a record makes Detect say No:
// all that detection reads, because records follow SQL*Plus or connector
// chatter of any length.
const detectGiveUp = input.DetectLimit

// Format returns the PyLatencyMap record format.
func Format() source.Format {
	return source.Format{
		Name: FormatName,
		Description: "PyLatencyMap/OraLatencyMap records: cumulative power-of-two latency histograms between <begin record> and <end record>, " +
			"as value, count lines or raw DTrace quantize()/SystemTap @hist_log output (lower-bound buckets)",
		Detection: "a line <begin record> (SQL*Plus chatter around records is fine); counts cumulative",
		Example:   "latscope heatmap example_latency_data.txt",
		Detect:    Detect,
		Open:      Open,
	}
}

// otherFormatMarkers are strings that only appear in inputs of other formats
// (Oracle 10046 traces) and settle detection early.
var otherFormatMarkers = [][]byte{
	[]byte("Trace file "),
	[]byte("PARSING IN CURSOR"),
	[]byte("WAIT #"),
}

// Detect says Yes once the prefix holds a "<begin record>" line, No when it
// is clearly another format or holds 64 KiB without a record, NeedMore
// otherwise.
func Detect(prefix []byte) input.Verdict {
	scan := input.LineScan{Partial: true, GiveUp: detectGiveUp}
	for l := range scan.Lines(prefix) {
		if bytes.EqualFold(bytes.TrimSpace(l.Text), []byte(beginMarker)) {
			return input.Yes
		}
	}
	for _, m := range otherFormatMarkers {
		if bytes.Contains(prefix, m) {
			return input.No
		}
	}
	return scan.Undecided(prefix)
}

// Open returns a Source that emits one interval per record after the first,
// as soon as its "<end record>" line is read; nothing is read until Run.
func Open(in source.Input, opts source.Options) (source.Source, error) {
	return source.NewLineSource(in, opts, maxLineLen, newParser)
}

// maxLineLen bounds the memory one input line may take: real record lines
// are shorter than 100 bytes, so longer ones are garbage and only reported.
const maxLineLen = 64 << 10
