// Package oracle10046 reads Oracle extended SQL trace files (event 10046,
// level 8 or 12) and turns their WAIT lines into per-event latency
// histograms on wall-clock intervals.
//
// Only what latency needs is parsed: WAIT lines (event name, ela, tim), the
// "***" timestamp lines that anchor the opaque tim clock to the wall clock,
// the header's instance name, and the PARSING/PARSE ERROR/END OF STMT lines
// that delimit SQL text (which must never be read as trace lines). Everything
// else is skipped without being looked at, which is what makes the parser
// fast: it scans a large buffer for newlines and dispatches on the first
// byte of each line.
package oracle10046

import (
	"bytes"
	"context"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// FormatName is the name users give to --input-format.
const FormatName = "oracle-10046"

// detectGiveUp is how much input without any 10046 marker makes Detect say No.
const detectGiveUp = 4 << 10

// Format returns the Oracle 10046 trace format.
func Format() source.Format {
	return source.Format{
		Name:        FormatName,
		Description: "Oracle extended SQL trace (event 10046): WAIT lines binned into per-event histograms on wall-clock intervals",
		Detection:   "a line starting Trace file, PARSING IN CURSOR #, WAIT #, *** SESSION ID:( or an Oracle Database banner",
		Example:     "latscope report DBM11106_ora_6334.trc --interval 1s",
		Detect:      Detect,
		Open:        Open,
	}
}

// detectMarkers are line starts that only 10046 traces have.
var detectMarkers = [][]byte{
	[]byte("Trace file "),
	[]byte("PARSING IN CURSOR #"),
	[]byte("WAIT #"),
	[]byte("*** SESSION ID:("),
	[]byte("*** TRACE CONTINUED FROM FILE"),
	[]byte("*** [ Unix process pid:"),
}

// callLinePrefixes start database call lines ("EXEC #12:c=0,e=5,...") that
// settle detection of header-less traces starting with a call.
var callLinePrefixes = [][]byte{
	[]byte("PARSE #"), []byte("EXEC #"), []byte("FETCH #"), []byte("CLOSE #"),
}

var otherFormatMarker = []byte("<begin record>")

// Detect says Yes once a line of the prefix starts with a 10046 marker, No
// for PyLatencyMap records or 4 KiB without any marker, NeedMore otherwise.
// The first decisive line wins. The "Oracle Database" banner counts only as
// the first or second line, where trace headers have it (10.2 traces start
// with the bare path): SQL*Plus output piped into other formats prints it
// after "Connected to:".
func Detect(prefix []byte) input.Verdict {
	scan := input.LineScan{SkipBOM: true, Partial: true, GiveUp: detectGiveUp}
	for l := range scan.Lines(prefix) {
		line := l.Text
		if bytes.HasPrefix(line, otherFormatMarker) {
			return input.No
		}
		for _, m := range detectMarkers {
			if bytes.HasPrefix(line, m) {
				return input.Yes
			}
		}
		if l.N <= 2 && bytes.HasPrefix(line, bannerPrefix) {
			return input.Yes
		}
		if isCallLine(line) {
			return input.Yes
		}
	}
	return scan.Undecided(prefix)
}

// isCallLine recognises "EXEC #<digits>:c=" and its siblings.
func isCallLine(line []byte) bool {
	for _, p := range callLinePrefixes {
		if !bytes.HasPrefix(line, p) {
			continue
		}
		_, n, ok := parseUint(line[len(p):])
		return ok && bytes.HasPrefix(line[len(p)+n:], []byte(":c="))
	}
	return false
}

// Open returns a streaming Source over the input: when run, it parses the
// whole input, emitting intervals as soon as later waits close them, and
// the remaining ones at the end of the input.
func Open(in source.Input, opts source.Options) (source.Source, error) {
	return source.NewInputSource(in, func(ctx context.Context, emit func(stream.Interval) error) error {
		p := newParser(in, opts, emit)
		if n := parallelWorkers(in, opts); n > 0 {
			return p.runParallel(ctx, in.At, in.Size, n, parallelChunk)
		}
		return p.run(ctx, in.Reader)
	})
}
