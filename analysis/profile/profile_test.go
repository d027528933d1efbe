package profile

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

const (
	dirApress  = "trc10046/apress-top1e_10.2.0.3_11.1.0.6/"
	fileTrace  = dirApress + "DBM11106_ora_6334.trc"
	fileTkprof = dirApress + "DBM11106_ora_6334_tkprof.txt"
	fileTVD    = dirApress + "DBM11106_ora_6334_tvdxtat.html"
)

func readData(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(testenv.DataFile(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func build(t *testing.T, name string, data []byte) *Profile {
	t.Helper()
	return buildWith(t, name, data, Options{})
}

func buildWith(t *testing.T, name string, data []byte, opts Options) *Profile {
	t.Helper()
	in := Input{Name: name, Reader: bytes.NewReader(data), Diag: input.NewDiagnostics(nil, 0)}
	p, err := Build(context.Background(), []Input{in}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// tkprofBlock is one statement (or OVERALL TOTALS) section of a tkprof report.
type tkprofBlock struct {
	id    string // SQL ID, the first text line without one, or the OVERALL title
	calls map[string][]float64
	waits map[string][3]float64 // times, max wait, total waited
}

// parseTkprof reads the call and wait tables of a tkprof text report.
func parseTkprof(t *testing.T, data []byte) []tkprofBlock {
	var blocks []tkprofBlock
	var cur *tkprofBlock
	inWaits := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		switch {
		case len(line) >= 40 && (strings.Trim(line, "*") == "" || strings.Trim(line, "-") == ""):
			blocks = append(blocks, tkprofBlock{calls: map[string][]float64{}, waits: map[string][3]float64{}})
			cur, inWaits = &blocks[len(blocks)-1], false
		case cur == nil:
		case strings.HasPrefix(line, "SQL ID"):
			cur.id = strings.TrimSpace(line[strings.Index(line, ":")+1:])
		case strings.HasPrefix(line, "OVERALL TOTALS"):
			// Both OVERALL sections follow one separator.
			blocks = append(blocks, tkprofBlock{id: line, calls: map[string][]float64{}, waits: map[string][3]float64{}})
			cur, inWaits = &blocks[len(blocks)-1], false
		case cur.id == "" && len(cur.calls) == 0 && strings.TrimSpace(line) != "":
			cur.id = "text:" + strings.TrimSpace(line)
		case len(fields) == 8 && (fields[0] == "Parse" || fields[0] == "Execute" || fields[0] == "Fetch" || fields[0] == "total"):
			cur.calls[fields[0]] = numbers(t, fields[1:])
		case strings.Contains(line, "Event waited on"):
			inWaits = true
		case inWaits && len(fields) >= 4 && !strings.HasPrefix(line, "  ---"):
			n := numbers(t, fields[len(fields)-3:])
			cur.waits[strings.Join(fields[:len(fields)-3], " ")] = [3]float64{n[0], n[1], n[2]}
		case inWaits && strings.TrimSpace(line) == "":
			inWaits = false
		}
	}
	return blocks
}

func numbers(t *testing.T, fields []string) []float64 {
	out := make([]float64, len(fields))
	for i, f := range fields {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			t.Fatalf("tkprof number %q: %v", f, err)
		}
		out[i] = v
	}
	return out
}

// truncated is what tkprof prints for µs: seconds cut to two decimals.
func truncated(us int64) float64 { return math.Floor(float64(us)/1e4) / 100 }

func checkFigures(t *testing.T, what string, f Figures, printed []float64) {
	t.Helper()
	got := []float64{float64(f.Count), truncated(f.CPUUS), truncated(f.ElapsedUS), float64(f.Disk), float64(f.Query), float64(f.Current), float64(f.Rows)}
	for i, name := range []string{"count", "cpu", "elapsed", "disk", "query", "current", "rows"} {
		if math.Abs(got[i]-printed[i]) > 1e-9 {
			t.Errorf("%s %s = %g (%+v), tkprof prints %g", what, name, got[i], f, printed[i])
		}
	}
}

// TestTkprofAgreement compares every statement and total tkprof printed for
// DBM11106 with the profile, to tkprof's printed precision (seconds cut,
// not rounded, to two decimals).
func TestTkprofAgreement(t *testing.T) {
	p := build(t, fileTrace, readData(t, fileTrace))
	blocks := parseTkprof(t, readData(t, fileTkprof))
	checked := 0
	for _, b := range blocks {
		if len(b.calls) == 0 {
			continue
		}
		checked++
		if strings.HasPrefix(b.id, "OVERALL") {
			recursive := !strings.Contains(b.id, "NON-RECURSIVE")
			for _, c := range p.Calls {
				if c.Recursive == recursive {
					row := map[string]string{"PARSE": "Parse", "EXEC": "Execute", "FETCH": "Fetch"}[c.Type]
					checkFigures(t, b.id+" "+row, c.Figures, b.calls[row])
				}
			}
			continue
		}
		s := findStatement(p, b.id)
		if s == nil {
			t.Errorf("tkprof statement %q not in the profile", b.id)
			continue
		}
		for row, f := range map[string]Figures{"Parse": s.Parse, "Execute": s.Exec, "Fetch": s.Fetch, "total": s.Total} {
			checkFigures(t, s.Key+" "+row, f, b.calls[row])
		}
		events := map[string]Event{}
		for _, e := range s.Events {
			events[e.Name] = e
		}
		if len(events) != len(b.waits) {
			t.Errorf("%s: %d events, tkprof %d", s.Key, len(events), len(b.waits))
		}
		for name, w := range b.waits {
			e := events[name]
			if float64(e.Count) != w[0] || truncated(e.MaxUS) != w[1] || truncated(e.US) != w[2] {
				t.Errorf("%s %s: %d waits, max %d µs, total %d µs; tkprof %v", s.Key, name, e.Count, e.MaxUS, e.US, w)
			}
		}
	}
	if checked != 5 {
		t.Errorf("checked %d tkprof sections, want 3 statements and 2 overall totals", checked)
	}
}

func findStatement(p *Profile, id string) *Statement {
	for _, s := range p.Statements {
		if s.Key == id || (strings.HasPrefix(id, "text:") && strings.HasPrefix(s.Text, strings.TrimPrefix(id, "text:"))) {
			return s
		}
	}
	return nil
}

var (
	tvdTable = regexp.MustCompile(`(?s)Resource Usage Profile.*?</table>`)
	tvdRow   = regexp.MustCompile(`(?s)<tr[^>]*>(.*?)</tr>`)
	tvdCell  = regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
	anyTag   = regexp.MustCompile(`<[^>]*>`)
)

// TestTVDXTATAgreement compares the resource usage profile with
// TVD$XTAT's (milliseconds, rounded): CPU and every event's time and
// count, and, with --span start, its duration and unaccounted-for time
// (TVD$XTAT's duration starts at the earliest tim − e, 13 ms before the
// first tim: docs/profile.md).
func TestTVDXTATAgreement(t *testing.T) {
	data := readData(t, fileTrace)
	p := build(t, fileTrace, data)
	fromStart := buildWith(t, fileTrace, data, Options{Span: SpanStart})
	table := tvdTable.Find(readData(t, fileTVD))
	rows := 0
	for _, r := range tvdRow.FindAllSubmatch(table, -1) {
		var cells []string
		for _, c := range tvdCell.FindAllSubmatch(r[1], -1) {
			if s := strings.TrimSpace(string(anyTag.ReplaceAll(c[1], nil))); s != "" {
				cells = append(cells, s)
			}
		}
		if len(cells) < 2 {
			continue
		}
		ms, _ := strconv.ParseFloat(cells[1], 64)
		switch cells[0] {
		case "Total":
			if got := math.Round(float64(fromStart.SpanUS) / 1e3); got != math.Round(ms*1e3) {
				t.Errorf("--span start: span %g ms, TVD$XTAT's duration %s s", got, cells[1])
			}
			rows++
			continue
		case "unaccounted-for":
			// TVD$XTAT leaves the orphan recursive calls' CPU in it.
			if got := math.Round(float64(fromStart.UnaccountedUS+fromStart.OrphanCPUUS) / 1e3); got != math.Round(ms*1e3) {
				t.Errorf("--span start: unaccounted-for + orphan CPU %g ms, TVD$XTAT %s s", got, cells[1])
			}
			rows++
			continue
		}
		if len(cells) < 3 {
			continue
		}
		rows++
		for _, l := range p.Lines() {
			name := l.Component
			if name == "CPU (top-level calls, c=)" {
				name = "CPU"
			}
			if name != cells[0] {
				continue
			}
			if got := math.Round(float64(l.US) / 1e3); got != math.Round(ms*1e3) {
				t.Errorf("%s: %g ms, TVD$XTAT %s s", cells[0], got, cells[1])
			}
			if l.Waited && strconv.FormatInt(l.Count, 10) != cells[3] {
				t.Errorf("%s: %d waits, TVD$XTAT %s", cells[0], l.Count, cells[3])
			}
		}
	}
	if rows != 10 {
		t.Errorf("compared %d TVD$XTAT rows, want CPU, 7 events, unaccounted-for and total", rows)
	}
}

// TestInsideOrBetweenCalls: the waits before a top-level call are placed
// by tim arithmetic (midpoint after the call's tim − e), except a wait on
// the previous call's cursor written, and over, before the first line of
// the call's own work: DBM11106's clock skew, in miniature.
func TestInsideOrBetweenCalls(t *testing.T) {
	const trace = `EXEC #4:c=3999,e=4507,p=0,cr=0,cu=0,mis=0,r=1,dep=0,og=1,tim=1000000
WAIT #4: nam='SQL*Net message from client' ela= 6410 driver id=1 #bytes=1 p3=0 obj#=1 tim=1007000
PARSE #5:c=0,e=336,p=0,cr=0,cu=0,mis=1,r=0,dep=1,og=4,tim=1008000
WAIT #0: nam='library cache: mutex X' ela= 700 idn=1 value=2 where=3 obj#=-1 tim=1009000
WAIT #6: nam='cursor: pin S wait on X' ela= 500 idn=1 value=2 where=3 obj#=-1 tim=1009600
PARSE #6:c=23997,e=161775,p=0,cr=0,cu=0,mis=1,r=0,dep=0,og=1,tim=1150000
WAIT #6: nam='SQL*Net message from client' ela= 2000 driver id=1 #bytes=1 p3=0 obj#=1 tim=1152100
WAIT #0: nam='library cache: mutex X' ela= 100 idn=1 value=2 where=3 obj#=-1 tim=1152300
WAIT #7: nam='cursor: pin S wait on X' ela= 400 idn=1 value=2 where=3 obj#=-1 tim=1152800
PARSE #7:c=1000,e=900,p=0,cr=0,cu=0,mis=1,r=0,dep=0,og=1,tim=1153000
`
	p := build(t, "skew", []byte(trace))
	want := map[string][2]int64{ // inside, between
		// PARSE #6 starts at 988225 by tim − e, before EXEC #4 ended; the
		// client wait on #4 ends before PARSE #5 (dep=1) starts: between.
		// The waits after PARSE #5 are inside PARSE #6.
		"SQL*Net message from client": {0, 6410 + 2000},
		// PARSE #7 starts at 1152100 (tim − e), clocks agreeing: the mutex
		// wait on #0 before its first own line is inside it.
		"library cache: mutex X":  {700 + 100, 0},
		"cursor: pin S wait on X": {500 + 400, 0},
	}
	for _, e := range p.Events {
		if got := [2]int64{e.WithinCallsUS, e.BetweenCallsUS}; got != want[e.Name] {
			t.Errorf("%s: inside %d, between %d µs; want %v", e.Name, got[0], got[1], want[e.Name])
		}
	}
}

var tvdTransactions = regexp.MustCompile(`>(Committed|Rollbacked)</td><td[^>]*>(\d+)<`)

// TestTVDXTATTransactions: the XCTEND lines counted as TVD$XTAT counts
// them (its Overall Information: Committed, Rollbacked).
func TestTVDXTATTransactions(t *testing.T) {
	p := build(t, fileTrace, readData(t, fileTrace))
	got := map[string]int64{"Committed": p.Transactions.Commits, "Rollbacked": p.Transactions.Rollbacks}
	found := tvdTransactions.FindAllSubmatch(readData(t, fileTVD), -1)
	if len(found) != 2 {
		t.Fatalf("TVD$XTAT's transactions: found %d figures, want 2", len(found))
	}
	for _, m := range found {
		if n, _ := strconv.ParseInt(string(m[2]), 10, 64); got[string(m[1])] != n {
			t.Errorf("%s: %d, TVD$XTAT %d", m[1], got[string(m[1])], n)
		}
	}
	if p.Transactions.ReadOnly != 1 {
		t.Errorf("read-only transactions %d, want 1 (XCTEND rlbk=0, rd_only=1)", p.Transactions.ReadOnly)
	}
}

// TestTransactionsPerSession: XCTEND lines by trcsess process section,
// commits and rollbacks apart, however the trace is cut into reads; a
// malformed XCTEND line is reported with its line number.
func TestTransactionsPerSession(t *testing.T) {
	const trace = "*** [ Unix process pid: 11 ]\r\n" +
		"EXEC #1:c=0,e=5,p=0,cr=0,cu=0,mis=0,r=1,dep=0,og=1,tim=100\r\n" +
		"XCTEND rlbk=0, rd_only=0, tim=101\r\n" +
		"*** [ Unix process pid: 12 ]\n" +
		"EXEC #1:c=0,e=5,p=0,cr=0,cu=0,mis=0,r=1,dep=0,og=1,tim=200\n" +
		"XCTEND rlbk=1, rd_only=1\n" +
		"XCTEND rlbk=0, rd_only=1\n" +
		"XCTEND rlbk=2, rd_only=0\n" +
		"*** [ Unix process pid: 11 ]\n" +
		"XCTEND rlbk=1, rd_only=0, tim=300"
	want := []Session{
		{Process: "11", Transactions: Transactions{Commits: 1, Rollbacks: 1}},
		{Process: "12", Transactions: Transactions{Commits: 1, Rollbacks: 1, ReadOnly: 2}},
	}
	for _, oneByte := range []bool{false, true} {
		var r io.Reader = strings.NewReader(trace)
		if oneByte {
			r = iotest.OneByteReader(r)
		}
		var report bytes.Buffer
		in := Input{Name: "x.trc", Reader: r, Diag: input.NewDiagnostics(&report, 10)}
		p, err := Build(t.Context(), []Input{in}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Traces[0].Sessions; !slices.Equal(got, want) {
			t.Errorf("one-byte reads %v: sessions %+v, want %+v", oneByte, got, want)
		}
		if p.Transactions != (Transactions{Commits: 2, Rollbacks: 2, ReadOnly: 2}) {
			t.Errorf("total %+v", p.Transactions)
		}
		if !strings.Contains(report.String(), "x.trc:8") || !strings.Contains(report.String(), "rlbk=2") {
			t.Errorf("malformed XCTEND line not reported as x.trc:8: %q", report.String())
		}
	}
}

// BenchmarkBuild profiles DBM11106.
func BenchmarkBuild(b *testing.B) {
	data := readData(b, fileTrace)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		in := Input{Name: "b", Reader: bytes.NewReader(data)}
		if _, err := Build(b.Context(), []Input{in}, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
