package collapse

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/input"
)

// PerfFormat is `perf script` text, collapsed as inferno-collapse-perf
// does, or exactly as FlameGraph's stackcollapse-perf.pl with
// Options.Perl (same options, same output), in parallel.
func PerfFormat() Format {
	return Format{
		Name: "perf",
		Description: "`perf script` text (perf record -g): sample header lines \"comm pid/tid [cpu] time: period event:\" " +
			"each followed by tab-indented \"addr symbol+off (module)\" lines and a blank line; collapsed as " +
			"inferno-collapse-perf (or FlameGraph's stackcollapse-perf.pl with --compat perl): first event only unless " +
			"--event-filter, weighted by the period column when present, --pid/--tid/--kernel/--jit/--all/--addrs",
		Detect:   DetectPerf,
		Collapse: CollapsePerf,
	}
}

// perfDetectMax is the prefix length after which Detect stops waiting.
const perfDetectMax = 64 << 10

// DetectPerf recognises perf script text: after optional '#' header
// comments and blank lines, a one-line sample (perfOneLineSample) or a
// sample header line (stackcollapse-perf.pl's
// /^(\S.+?)\s+(\d+)\/*(\d+)*\s+/ and a "time:" or "event:" field) followed
// by a stack line "hexaddr symbol (module)".
func DetectPerf(prefix []byte) input.Verdict {
	scan := input.LineScan{GiveUp: perfDetectMax}
	var header []byte
	for l := range scan.Lines(prefix) {
		line := l.Text
		switch {
		case header == nil && (len(line) == 0 || line[0] == '#'):
			continue
		case header == nil && perfOneLineSample(line):
			return input.Yes
		case header == nil:
			if _, ok := perfMatchHeader(line); !ok || bytes.IndexByte(line, ':') < 0 {
				return input.No
			}
			header = line
		default:
			if len(line) == 0 { // a sample without frames: look at the next one
				header = nil
				continue
			}
			f, ok := perfMatchFrame(line)
			if !ok || !perfHex(f.pc) {
				return input.No
			}
			return input.Yes
		}
	}
	return scan.Undecided(prefix)
}

// perfOneLineSample matches a sample of a recording without call graphs:
// the event line with its one frame after the event ("  prog 42
// 1.5: 1001 cpu-clock:  7f12 main+0x1a (/usr/bin/prog)"; perf right-aligns
// comm).
func perfOneLineSample(line []byte) bool {
	line = perfTrimRight(line)
	_, end, ok := perfEventParts(line)
	if !ok {
		return false
	}
	ev := perfEventFields(line[end:])
	f, ok := perfStackParts(ev.single)
	return ev.hasEvent && ok && perfHex(f.pc)
}

func perfHex(b []byte) bool {
	for _, c := range b {
		if !perfDigit(c) && (c|0x20 < 'a' || c|0x20 > 'f') {
			return false
		}
	}
	return len(b) > 0
}

// CollapsePerf adds the stacks of perf script text to p, as
// inferno-collapse-perf with opts would print them, or with opts.Perl as
// stackcollapse-perf.pl would (p.WriteFolded gives the script's exact
// output). The input is cut at blank lines into chunks
// parsed on opts.Threads goroutines; the result does not depend on the
// number of threads, and memory is bounded by the distinct stacks.
func CollapsePerf(in Input, opts Options, p *flame.Profile) error {
	threads := opts.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	r := &perfRun{in: in, opts: opts, set: newPerfSettings(opts), threads: threads}
	if opts.EventFilter != "" {
		r.filter, r.known = []byte(opts.EventFilter), true
	}
	err := r.run()
	r.finish(p)
	if err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	return nil
}

// perfRun is one collapse: the chunk dispatcher, its workers and the
// sequential parser for chunks that are not cut at blank lines.
type perfRun struct {
	in      Input
	opts    Options
	set     perfSettings
	threads int

	filter []byte // decided event filter (known)
	known  bool
	// inEvent: the default reading's scan for the first event is inside
	// a sample (its lines are stack lines, whatever they look like).
	inEvent bool

	seq     *perfParser
	workers []*perfParser
	mu      sync.Mutex
	reports []perfIndexedReport
}

type perfIndexedReport struct {
	idx      int
	last     bool
	longLine int
	perfChunkReport
}

func (r *perfRun) parser() *perfParser {
	q := newPerfParser(r.set)
	r.workers = append(r.workers, q)
	return q
}

// run reads and parses the whole input.
func (r *perfRun) run() error { return r.runWith(chunkBlock, chunkMax) }

// runWith runs with the given chunk sizes (tests use small ones).
func (r *perfRun) runWith(block, max int) error {
	r.set.seed = maphash.MakeSeed()
	ck := newChunker(r.in.Reader, block, max, 2*r.threads+2)
	r.seq = r.parser()
	if r.threads == 1 {
		for {
			ch, err := ck.next()
			if err != nil {
				return perfEOF(err)
			}
			r.decideFilter(ch.data)
			r.parse(r.seq, r.job(ch))
			ck.recycle(ch.buf)
		}
	}
	work := make(chan perfJob, r.threads)
	var wg sync.WaitGroup
	for range r.threads {
		q := r.parser()
		wg.Go(func() {
			for j := range work {
				r.parse(q, j)
				ck.recycle(j.buf)
			}
		})
	}
	var err error
	for {
		var ch textChunk
		ch, err = ck.next()
		if err != nil {
			break
		}
		r.decideFilter(ch.data)
		if ch.seq {
			r.parse(r.seq, r.job(ch))
			ck.recycle(ch.buf)
			continue
		}
		work <- r.job(ch)
	}
	close(work)
	wg.Wait()
	return perfEOF(err)
}

func perfEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// perfJob is a chunk with the event filter as known when it was
// dispatched (the dispatcher goes on deciding it while workers parse).
type perfJob struct {
	textChunk
	filter []byte // never written once decided
	known  bool
}

func (r *perfRun) job(ch textChunk) perfJob {
	return perfJob{textChunk: ch, filter: r.filter, known: r.known}
}

// parse runs one parser over a chunk with the filter known at dispatch.
func (r *perfRun) parse(q *perfParser, ch perfJob) {
	q.filter, q.known = append(q.filter[:0], ch.filter...), ch.known
	rep := q.parseChunk(ch.data, uint64(ch.idx), ch.line)
	r.mu.Lock()
	r.reports = append(r.reports, perfIndexedReport{idx: ch.idx, last: ch.last, longLine: ch.longLine, perfChunkReport: rep})
	r.mu.Unlock()
}

// decideFilter finds, while it is not known, the first event of the input
// (the script keeps only that event's samples). Chunks before the one
// holding it name no event, so they parse the same whatever it is.
func (r *perfRun) decideFilter(data []byte) {
	if r.known {
		return
	}
	ev, ok := []byte(nil), false
	if r.set.perl {
		ev, ok = perfFirstEvent(data)
	} else {
		ev, ok = perfFirstEventDefault(data, &r.inEvent)
	}
	if ok {
		r.filter, r.known = append([]byte(nil), ev...), true
	}
}

// perfFirstEventDefault is perfFirstEvent for the default reading, which
// tells event lines from stack lines by their place: inEvent carries the
// state from chunk to chunk (chunks are scanned in input order).
func perfFirstEventDefault(data []byte, inEvent *bool) ([]byte, bool) {
	for line := range perfLines(data) {
		if len(line) > 0 && line[0] == '#' {
			continue
		}
		line = perfTrimRight(line)
		switch {
		case len(line) == 0:
			*inEvent = false
		case *inEvent: // a stack line
		default:
			_, end, ok := perfEventParts(line)
			if !ok {
				continue
			}
			ev := perfEventFields(line[end:])
			if ev.hasEvent {
				return ev.event, true
			}
			*inEvent = true
			if _, single := perfStackParts(ev.single); single {
				*inEvent = false
			}
		}
	}
	return nil, false
}

// perfFirstEvent returns the event of the first sample header in data that
// names one, classifying lines as the parser does.
func perfFirstEvent(data []byte) ([]byte, bool) {
	for line := range perfLines(data) {
		if len(line) == 0 || line[0] == '#' || perfSpace(line[0]) {
			continue
		}
		if _, ok := perfMatchHeader(line); !ok {
			continue
		}
		if ev, _, ok := perfMatchEvent(line); ok {
			return ev, true
		}
	}
	return nil, false
}

// finish merges the workers' stacks into p in input order and reports
// skipped lines and warnings.
func (r *perfRun) finish(p *flame.Profile) {
	all := newPerfStackSet(r.set.seed)
	others := map[string]int64{}
	for _, q := range r.workers {
		if !r.set.perl { // the sample the input ends in counts
			q.endSample()
		}
		for id := range q.stacks.entries {
			all.merge(&q.stacks, int32(id))
		}
		for _, c := range q.others {
			others[c.event] += c.n
		}
	}
	list := all.entries
	slices.SortFunc(list, func(a, b perfStack) int { return cmp.Compare(a.first, b.first) })
	p.Grow(len(list))
	for _, s := range list {
		p.Add(s.key, s.count)
	}
	r.report(others, len(list))
}

// report sends skipped lines (in input order) and warnings to in.Diag.
func (r *perfRun) report(others map[string]int64, stacks int) {
	d, name := r.in.Diag, r.in.Name
	sort.Slice(r.reports, func(i, j int) bool { return r.reports[i].idx < r.reports[j].idx })
	lines := 0
	for _, rep := range r.reports {
		if rep.longLine > 0 {
			d.Malformed(name, rep.longLine, fmt.Sprintf("line longer than %d MiB skipped", lineMax>>20))
		}
		for _, pr := range rep.problems {
			d.Malformed(name, pr.line, pr.reason)
		}
		lines += rep.lines
		if r.set.perl && rep.last && rep.openSample > 0 {
			d.Warn(name, "the input ends inside the sample that starts at line %d (no blank line after its stack): "+
				"not counted, as stackcollapse-perf.pl does", rep.openSample)
		}
	}
	if len(others) > 0 {
		evs := make([]string, 0, len(others))
		for ev, n := range others {
			evs = append(evs, fmt.Sprintf("%s (%d samples)", ev, n))
		}
		slices.Sort(evs)
		how := "the first event in the input"
		if r.opts.EventFilter != "" {
			how = "--event-filter"
		}
		d.Warn(name, "kept only %q samples (%s); skipped other events: %s; choose one with --event-filter",
			r.filter, how, strings.Join(evs, ", "))
	}
	if stacks == 0 && lines > 0 {
		d.Warn(name, "no perf script stacks found (is this `perf script` output of a `perf record -g` recording?)")
	}
}
