// Package hdrlog reads HdrHistogram interval logs (.hlog, log format 1.2
// and 1.3, V2 compressed histograms, optional tags), as written by jHiccup,
// HdrHistogram's HistogramLogWriter in Java or Go, wrk2, YCSB or latscope's
// own sink/hdrlog. The payload codec is the maintained Go HdrHistogram
// library's.
//
// Each data line is one series' histogram over one interval; tags name the
// series. HdrHistogram values carry no unit: latency logs record
// nanoseconds by convention, so values are read as ns unless --unit says
// otherwise. Each HDR bucket's count goes to latscope's per-event grid (64
// buckets per power of two) at the bucket's median equivalent value, as
// HdrHistogram itself reports values; sums are estimates. Logs written by
// latscope carry comment lines (see latscope.go) that restore the original
// buckets, sums and windows exactly.
package hdrlog

import (
	"bytes"
	"context"
	"strings"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// FormatName is the name users give to --input-format.
const FormatName = "hdrlog"

// Format returns the HdrHistogram interval log format.
func Format() source.Format {
	return source.Format{
		Name: FormatName,
		Description: "HdrHistogram interval log (.hlog 1.2/1.3, V2 compressed): one series per tag, values in ns " +
			"(--unit for others), wall clock from StartTime/BaseTime; counts per interval " +
			"(--counts cumulative for logs of running totals); latscope-written logs read back exactly",
		Detection: "a line #[Histogram log format version, #[StartTime:, #[BaseTime:, the \"StartTimestamp\" legend, " +
			"or a data line [Tag=T,]start,length,max,HIST... before any other text",
		Example: "latscope heatmap hiccup.hlog",
		Detect:  Detect,
		Open:    Open,
	}
}

// detectGiveUp is how much comment-only input makes Detect say No.
const detectGiveUp = 8 << 10

// headerPrefixes start the comment and legend lines only HdrHistogram logs
// have.
var headerPrefixes = [][]byte{
	[]byte("#[Histogram log format version"),
	[]byte("#[StartTime:"),
	[]byte("#[BaseTime:"),
	[]byte(`"StartTimestamp"`),
	[]byte(CommentPrefix + KindMarker),
}

// Detect says Yes at the first HdrHistogram header, legend or data line,
// skipping other # comments (jHiccup's "#[Logged with ..."); No at the
// first other line.
func Detect(prefix []byte) input.Verdict {
	scan := input.LineScan{Partial: true, GiveUp: detectGiveUp}
	for l := range scan.Lines(prefix) {
		line := l.Text
		if !l.Complete {
			if len(line) > 0 && !strings.ContainsRune("#\"T0123456789 \t\r", rune(line[0])) {
				return input.No // an incomplete line that can be none of the below
			}
			break
		}
		for _, p := range headerPrefixes {
			if bytes.HasPrefix(line, p) {
				return input.Yes
			}
		}
		switch {
		case len(bytes.TrimSpace(line)) == 0, line[0] == '#':
			continue
		case isDataLine(line):
			return input.Yes
		default:
			return input.No
		}
	}
	return scan.Undecided(prefix)
}

// isDataLine reports whether a line has the shape of a data line.
func isDataLine(line []byte) bool {
	if bytes.HasPrefix(line, []byte("Tag=")) {
		i := bytes.IndexByte(line, ',')
		if i < 0 {
			return false
		}
		line = line[i+1:]
	}
	f := bytes.SplitN(line, []byte(","), 4)
	if len(f) != 4 || !bytes.HasPrefix(f[3], []byte("HIST")) {
		return false
	}
	for _, n := range f[:3] {
		if _, ok := parseDecimal(string(n)); !ok {
			return false
		}
	}
	return true
}

// Open returns a Source over an interval log that reads it line by line
// when run, emitting each interval once the next one starts.
func Open(in source.Input, opts source.Options) (source.Source, error) {
	return source.NewInputSource(in, func(ctx context.Context, emit func(stream.Interval) error) error {
		return newReader(in, opts, emit).run(ctx)
	})
}
