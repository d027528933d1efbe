package oracle10046

import (
	"bytes"
	"context"
	"regexp"
	"testing"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
)

// callCounter counts what ReadCalls hands over.
type callCounter struct {
	cursors int
	calls   map[CallType]int
	waits   int
	e, c    int64
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
	for _, rel := range allTraces(t) {
		t.Run(rel, func(t *testing.T) {
			data := readShared(t, rel)
			cc := readCalls(t, data)
			want := map[CallType]int{}
			for _, m := range callRe.FindAllSubmatch(data, -1) {
				for _, cl := range callLines {
					if bytes.HasPrefix(m[0], cl.prefix) {
						want[cl.typ]++
					}
				}
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
		for _, cl := range callLines {
			lines += bytes.Count(data, append([]byte("\n"), cl.prefix...))
			if bytes.HasPrefix(bytes.TrimPrefix(data, utf8BOM), cl.prefix) {
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
