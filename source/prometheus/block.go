package prometheus

import (
	"errors"
	"fmt"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// maxRetries bounds how many malformed lines of one scrape are dropped and
// the scrape parsed again before the whole scrape is given up.
const maxRetries = 64

// block is the histogram lines of one scrape.
type block struct {
	lines    []blockLine
	families []string // in order of first sample
	famSeen  map[string]bool
	series   map[string]bool
	hasTS    bool
	ts       int64
}

type blockLine struct {
	n    int // input line number
	text string
}

func (b *block) empty() bool { return len(b.lines) == 0 }

// firstLine is the input line where the block starts.
func (b *block) firstLine() int {
	if b.empty() {
		return 0
	}
	return b.lines[0].n
}

// add appends a sample line of family fam.
func (b *block) add(n int, text, fam string, sc scanned) {
	if b.famSeen == nil {
		b.famSeen, b.series = map[string]bool{}, map[string]bool{}
	}
	if b.empty() {
		b.hasTS, b.ts = sc.hasTS, sc.ts
	}
	if !b.famSeen[fam] {
		b.famSeen[fam] = true
		b.families = append(b.families, fam)
	}
	b.series[sc.series] = true
	b.lines = append(b.lines, blockLine{n: n, text: text})
}

// startsNew says a sample line cannot belong to the block: its series is
// already in it (the next scrape repeats it), or its timestamp differs.
func (b *block) startsNew(sc scanned) bool {
	if b.empty() {
		return false
	}
	return b.series[sc.series] || sc.hasTS != b.hasTS || sc.ts != b.ts
}

// problem is a malformed line found while parsing a block.
type problem struct {
	line   int
	reason string
}

// parse runs Prometheus' own text parser over the block. A line it rejects
// is reported and dropped, and the rest parsed again; a failure that no
// line can be blamed for drops the whole block.
func (b *block) parse() (map[string]*dto.MetricFamily, []problem) {
	lines := b.lines
	var problems []problem
	for range maxRetries {
		mfs, err := parseText(b.families, lines)
		if err == nil {
			return mfs, problems
		}
		var pe expfmt.ParseError
		header := len(b.families) // the synthesised TYPE lines come first
		if !errors.As(err, &pe) || pe.Line <= header || pe.Line > header+len(lines) {
			return nil, append(problems, problem{b.firstLine(), "scrape dropped: " + err.Error()})
		}
		bad := pe.Line - header - 1
		problems = append(problems, problem{lines[bad].n, pe.Msg})
		lines = append(lines[:bad:bad], lines[bad+1:]...)
		if len(lines) == 0 {
			return nil, problems
		}
	}
	return nil, append(problems, problem{b.firstLine(), fmt.Sprintf("scrape dropped after %d malformed lines", maxRetries)})
}

// parseText parses the lines under synthesised "# TYPE f histogram" lines
// (the scrape's own TYPE lines may be far above, in an earlier scrape).
func parseText(families []string, lines []blockLine) (mfs map[string]*dto.MetricFamily, err error) {
	var sb strings.Builder
	for _, f := range families {
		sb.WriteString("# TYPE " + f + " histogram\n")
	}
	for _, l := range lines {
		sb.WriteString(l.text)
		sb.WriteByte('\n')
	}
	defer func() {
		// A panic in the third-party parser must not take latscope down.
		if r := recover(); r != nil {
			mfs, err = nil, fmt.Errorf("text parser failed: %v", r)
		}
	}()
	p := expfmt.NewTextParser(model.LegacyValidation)
	return p.TextToMetricFamilies(strings.NewReader(sb.String()))
}
