package oracle10046

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// callCounter counts what ReadCalls hands over.
type callCounter struct {
	cursors int
	calls   map[CallType]int
	waits   int
	e, c    int64
	// commits and rollbacks count XCTEND lines.
	commits, rollbacks int
}

func (cc *callCounter) Cursor(Cursor) { cc.cursors++ }
func (cc *callCounter) Call(c Call) {
	if cc.calls == nil {
		cc.calls = map[CallType]int{}
	}
	cc.calls[c.Type]++
	cc.e += c.E
	cc.c += c.C
}
func (cc *callCounter) Wait(Wait) { cc.waits++ }
func (cc *callCounter) Transaction(x Transaction) {
	if x.Rollback {
		cc.rollbacks++
	} else {
		cc.commits++
	}
}

func readCalls(t testing.TB, data []byte) *callCounter {
	t.Helper()
	var cc callCounter
	in := source.Input{Name: "t", Reader: bytes.NewReader(data), Diag: input.NewDiagnostics(nil, 0)}
	if err := ReadCalls(context.Background(), in, source.Options{}, &cc); err != nil {
		t.Fatal(err)
	}
	return &cc
}

// TestReadCallsCountsEveryLine compares ReadCalls with a regexp count of
// the raw lines on every real trace.
func TestReadCallsCountsEveryLine(t *testing.T) {
	callRe := regexp.MustCompile(`(?m)^(PARSE|EXEC|FETCH|CLOSE) #\d+:c=\d+,e=\d+,.*tim=\d+\r?$`)
	cursorRe := regexp.MustCompile(`(?m)^PARSING IN CURSOR #`)
	waitRe := regexp.MustCompile(`(?m)^WAIT #\d+: nam='`)
	xctendRe := regexp.MustCompile(`(?m)^XCTEND rlbk=([01]), rd_only=[01]`)
	for _, rel := range allTraces(t) {
		t.Run(rel, func(t *testing.T) {
			data := readShared(t, rel)
			cc := readCalls(t, data)
			want := map[CallType]int{}
			for _, m := range callRe.FindAllSubmatch(data, -1) {
				want[map[string]CallType{"PARSE": CallParse, "EXEC": CallExec, "FETCH": CallFetch, "CLOSE": CallClose}[string(m[1])]]++
			}
			for typ, n := range want {
				if cc.calls[typ] != n {
					t.Errorf("%s calls = %d, want %d", typ, cc.calls[typ], n)
				}
			}
			if n := len(cursorRe.FindAll(data, -1)); cc.cursors != n {
				t.Errorf("cursors = %d, want %d", cc.cursors, n)
			}
			if n := len(waitRe.FindAll(data, -1)); cc.waits != n {
				t.Errorf("waits = %d, want %d", cc.waits, n)
			}
			commits, rollbacks := 0, 0
			for _, m := range xctendRe.FindAllSubmatch(data, -1) {
				if string(m[1]) == "1" {
					rollbacks++
				} else {
					commits++
				}
			}
			if cc.commits != commits || cc.rollbacks != rollbacks {
				t.Errorf("XCTEND: %d commits, %d rollbacks; want %d, %d", cc.commits, cc.rollbacks, commits, rollbacks)
			}
		})
	}
}

func TestParseCall(t *testing.T) {
	c, ok := parseCall([]byte("4:c=3999,e=4507,p=13,cr=55,cu=0,mis=1,r=1,dep=0,og=1,plh=0,tim=1204267391460853"))
	want := Call{Cursor: 4, C: 3999, E: 4507, P: 13, CR: 55, R: 1, Tim: 1204267391460853}
	if !ok || c != want {
		t.Fatalf("parseCall = %+v, %v; want %+v", c, ok, want)
	}
	// CLOSE lines have type= after dep; 12c cursors are long numbers.
	c, ok = parseCall([]byte("140737:c=0,e=2,dep=1,type=3,tim=99"))
	if !ok || c.Cursor != 140737 || c.Dep != 1 || c.E != 2 || c.Tim != 99 {
		t.Fatalf("CLOSE: %+v, %v", c, ok)
	}
	for _, bad := range []string{"", "x:c=1", "4:c=1,e=x,tim=5", "4:c=1,e=3", "4:e=3,tim=5x"} {
		if _, ok := parseCall([]byte(bad)); ok {
			t.Errorf("parseCall(%q) accepted", bad)
		}
	}
}

// FuzzReadCalls: arbitrary input never panics nor fails, and gives no more
// calls than it has call lines.
func FuzzReadCalls(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Add([]byte("EXEC #1:c=1,e=2,r=0,dep=0,tim=3\nFETCH #1:e=,tim=\nCLOSE #1:c=0,e=1,dep=0,type=0,tim=9\n"))
	f.Add([]byte("PARSING IN CURSOR #1 len=6 dep=0 tim=1 hv=1 sqlid='a'\nselect\nEND OF STMT\nPARSE #1:c=0,e=1,dep=0,tim=2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cc := readCalls(t, data)
		total := 0
		for _, n := range cc.calls {
			total += n
		}
		lines := 0
		for _, prefix := range [][]byte{parseCallPrefix, execCallPrefix, fetchCallPrefix, closeCallPrefix} {
			lines += bytes.Count(data, append([]byte("\n"), prefix...))
			if bytes.HasPrefix(bytes.TrimPrefix(data, utf8BOM), prefix) {
				lines++
			}
		}
		if total > lines {
			t.Fatalf("%d calls out of %d call lines", total, lines)
		}
		if cc.e < 0 || cc.c < 0 {
			t.Fatalf("negative times")
		}
	})
}

// TestCallSeriesEqualRawLines: with --calls, every call line of every real
// trace is one event of its series, at its e=; the waits are unchanged.
func TestCallSeriesEqualRawLines(t *testing.T) {
	callRe := regexp.MustCompile(`(?m)^(PARSE|EXEC|FETCH|CLOSE) #\d+:c=(\d+),e=(\d+),.*dep=(\d+),.*tim=\d+\r?$`)
	for _, rel := range allTraces(t) {
		t.Run(rel, func(t *testing.T) {
			data := readShared(t, rel)
			want, wantCPU := map[string]eventTotal{}, map[string]eventTotal{}
			byType := map[string]eventTotal{}
			for _, m := range callRe.FindAllSubmatch(data, -1) {
				name := string(m[1])
				if string(m[4]) != "0" {
					name += " dep=" + string(m[4])
				}
				c, _ := strconv.ParseFloat(string(m[2]), 64)
				e, _ := strconv.ParseFloat(string(m[3]), 64)
				w := want["call "+name]
				want["call "+name] = eventTotal{w.count + 1, w.sum + e}
				w = wantCPU["cpu "+name]
				wantCPU["cpu "+name] = eventTotal{w.count + 1, w.sum + c}
				b := byType["call "+string(m[1])]
				byType["call "+string(m[1])] = eventTotal{b.count + 1, b.sum + e}
			}
			// --calls type,cpu: the c= of every call line as "cpu ..." series.
			withCPU := totals(run(t, rel, data, source.Options{Calls: source.CallsByType, CallCPU: true}).Intervals)
			for name, w := range wantCPU {
				if withCPU[name] != w {
					t.Errorf("%s: %+v, raw lines %+v", name, withCPU[name], w)
				}
			}
			plain := totals(run(t, rel, data, source.Options{}).Intervals)
			got := totals(run(t, rel, data, source.Options{Calls: source.CallsByType}).Intervals)
			for name, w := range want {
				if got[name] != w {
					t.Errorf("%s: %+v, raw lines %+v", name, got[name], w)
				}
			}
			for name, w := range plain {
				if got[name] != w {
					t.Errorf("wait %s: %+v with --calls, %+v without", name, got[name], w)
				}
			}
			if len(got) != len(plain)+len(want) {
				t.Errorf("%d series, want %d waits and %d call series", len(got), len(plain), len(want))
			}
			// Per SQL, the series of one call type add up to the type's.
			sum := map[string]eventTotal{}
			for name, tot := range totals(run(t, rel, data, source.Options{Calls: source.CallsBySQL}).Intervals) {
				if !strings.HasPrefix(name, "call ") {
					continue
				}
				typ := strings.Join(strings.Fields(name)[:2], " ")
				s := sum[typ]
				sum[typ] = eventTotal{s.count + tot.count, s.sum + tot.sum}
			}
			for typ, w := range byType {
				if sum[typ] != w {
					t.Errorf("--calls sql %s: %+v, raw lines %+v", typ, sum[typ], w)
				}
			}
		})
	}
}

// FuzzCallSeries: with --calls, arbitrary input never panics nor fails,
// every interval is valid, and no more events come out than the input has
// WAIT and call lines.
func FuzzCallSeries(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s, true)
	}
	f.Add([]byte("PARSING IN CURSOR #1 len=6 dep=0 tim=1 hv=1 sqlid='a'\nselect\nEND OF STMT\nEXEC #1:c=0,e=1,dep=0,tim=2\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, bySQL bool) {
		opts := source.Options{Calls: source.CallsByType, Location: time.UTC}
		if bySQL {
			opts.Calls = source.CallsBySQL
		}
		src, _ := Open(source.Input{Name: "fuzz", Reader: bytes.NewReader(data), Diag: input.NewDiagnostics(nil, 0)}, opts)
		var events float64
		err := src.Run(context.Background(), func(iv stream.Interval) error {
			if err := iv.Validate(); err != nil {
				t.Fatalf("invalid interval: %v", err)
			}
			for _, s := range iv.Series {
				events += s.Hist.Count()
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		if events > float64(lines) {
			t.Fatalf("%g events out of %d lines", events, lines)
		}
	})
}
