package profile

import (
	"bufio"
	"bytes"
	"maps"
	"math/bits"
	"path"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// rawStatement is what an independent count of the raw lines gives per
// statement: the calls' figures as written (inclusive), and the waits.
type rawStatement struct {
	execs, rows, e, c, waitUS int64
}

type rawCount struct {
	orphans     int64 // recursive calls with no call one level up after them
	orphanCPU   int64
	span        int64
	startSpan   int64 // from the earliest tim − e, tim − ela
	sessions    map[string]Transactions
	cpu, waitUS int64
	waits       map[string]int64
	statements  map[string]*rawStatement
	// callE and callC are the e= and c= of each statement's PARSE, EXEC
	// and FETCH calls.
	callE, callC map[string][]int64
}

// rawSection is one trcsess process section (or the whole trace).
type rawSection struct {
	name         string
	first, last  int64
	start        int64
	seen         bool
	cursorToStmt map[string]string
	calls        []rawCallFigures // depth and c= of every call, in file order
	xact         Transactions
}

type rawCallFigures struct{ dep, c int64 }

var (
	rawParsing = regexp.MustCompile(`^PARSING IN CURSOR #(\d+) `)
	rawCall    = regexp.MustCompile(`^(PARSE|EXEC|FETCH|CLOSE) #(\d+):(c=.*)$`)
	rawWait    = regexp.MustCompile(`^WAIT #(\d+): nam='(.*)' ela= *(\d+) .*tim=(\d+)`)
	rawField   = regexp.MustCompile(`(?:^| )(dep|tim|hv|sqlid)='?([0-9a-z]+)`)
	rawPID     = regexp.MustCompile(`^\*\*\* \[ Unix process pid: (\S+) \]`)
	rawXctend  = regexp.MustCompile(`^XCTEND rlbk=([01]), rd_only=([01])`)
)

// countRaw reads a trace as awk would: line by line, by regular
// expressions, with no state beyond cursor numbers and sums per trcsess
// process section, sharing no code with the parser. SQL text is skipped
// between PARSING IN CURSOR and END OF STMT.
func countRaw(t *testing.T, name string, data []byte) *rawCount {
	rc := &rawCount{waits: map[string]int64{}, statements: map[string]*rawStatement{}, callE: map[string][]int64{}, callC: map[string][]int64{}}
	sections := map[string]*rawSection{}
	var sec *rawSection
	enter := func(pid string) {
		if sections[pid] == nil {
			n := name
			if pid != "" {
				n += " pid " + pid
			}
			sections[pid] = &rawSection{name: n, cursorToStmt: map[string]string{}}
		}
		sec = sections[pid]
	}
	enter("")
	stmtKey := func(cursor string) string {
		key, ok := sec.cursorToStmt[cursor]
		if !ok {
			key = "cursor #" + cursor + " of " + sec.name
			sec.cursorToStmt[cursor] = key
		}
		if rc.statements[key] == nil {
			rc.statements[key] = &rawStatement{}
		}
		return key
	}
	stmt := func(cursor string) *rawStatement { return rc.statements[stmtKey(cursor)] }
	see := func(tim string, dur int64) {
		v, err := strconv.ParseInt(tim, 10, 64)
		if err != nil {
			t.Fatalf("%s: tim %q", name, tim)
		}
		if !sec.seen || v < sec.first {
			sec.first = v
		}
		if !sec.seen || v-dur < sec.start {
			sec.start = v - dur
		}
		if !sec.seen || v > sec.last {
			sec.last = v
		}
		sec.seen = true
	}
	num := func(s string) int64 {
		v, _ := strconv.ParseInt(s, 10, 64)
		return v
	}
	inSQL := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if inSQL {
			inSQL = line != "END OF STMT"
			continue
		}
		if m := rawPID.FindStringSubmatch(line); m != nil {
			enter(m[1])
			continue
		}
		if m := rawXctend.FindStringSubmatch(line); m != nil {
			if m[1] == "1" {
				sec.xact.Rollbacks++
			} else {
				sec.xact.Commits++
			}
			if m[2] == "1" {
				sec.xact.ReadOnly++
			}
			continue
		}
		if m := rawParsing.FindStringSubmatch(line); m != nil {
			inSQL = true
			f := map[string]string{}
			for _, kv := range rawField.FindAllStringSubmatch(line, -1) {
				f[kv[1]] = kv[2]
			}
			see(f["tim"], 0)
			key := f["sqlid"]
			if key == "" && f["hv"] != "" {
				key = "hv:" + f["hv"]
			}
			if key == "" {
				key = "cursor #" + m[1] + " of " + sec.name
			}
			sec.cursorToStmt[m[1]] = key
			continue
		}
		if m := rawCall.FindStringSubmatch(line); m != nil {
			f := map[string]int64{}
			for _, kv := range strings.Split(m[3], ",") {
				k, v, _ := strings.Cut(kv, "=")
				f[k] = num(v)
			}
			see(strconv.FormatInt(f["tim"], 10), f["e"])
			sec.calls = append(sec.calls, rawCallFigures{f["dep"], f["c"]})
			if f["dep"] == 0 {
				rc.cpu += f["c"]
			}
			if m[1] == "CLOSE" {
				stmt(m[2])
				continue
			}
			key := stmtKey(m[2])
			rc.callE[key] = append(rc.callE[key], f["e"])
			rc.callC[key] = append(rc.callC[key], f["c"])
			s := rc.statements[key]
			s.e += f["e"]
			s.c += f["c"]
			s.rows += f["r"]
			if m[1] == "EXEC" {
				s.execs++
			}
			continue
		}
		if m := rawWait.FindStringSubmatch(line); m != nil {
			ela := num(m[3])
			see(m[4], ela)
			rc.waitUS += ela
			rc.waits[m[2]] += ela
			if _, parsed := sec.cursorToStmt["0"]; m[1] != "0" || parsed {
				stmt(m[1]).waitUS += ela
			}
		}
	}
	rc.sessions = map[string]Transactions{}
	for pid, s := range sections {
		rc.sessions[pid] = s.xact
		// An orphan is a recursive call that no call one level up
		// follows: scan backwards, remembering the depths seen.
		later := map[int64]bool{}
		for i := len(s.calls) - 1; i >= 0; i-- {
			c := s.calls[i]
			if c.dep > 0 && !later[c.dep-1] {
				rc.orphans++
				rc.orphanCPU += c.c
			}
			later[c.dep] = true
		}
		rc.span += s.last - s.first
		rc.startSpan += s.last - s.start
	}
	return rc
}

// TestProfileEqualsRawCount checks the profile of every real trace against
// the independent count: span, CPU of top-level calls, waits by event, and
// per statement executions, rows, elapsed and CPU (inclusive) and waits.
func TestProfileEqualsRawCount(t *testing.T) {
	rels := testenv.DataFiles(t, "trc10046/*/*.trc")
	if len(rels) < 12 {
		t.Fatalf("expected the 12 real traces of testdata/trc10046, found %d", len(rels))
	}
	for _, rel := range rels {
		t.Run(path.Base(rel), func(t *testing.T) {
			data := readData(t, rel)
			p := build(t, rel, data)
			rc := countRaw(t, rel, data)
			if p.SpanUS != rc.span || p.TimSpanUS != rc.span {
				t.Errorf("span %d µs (tim %d), raw last − first tim %d", p.SpanUS, p.TimSpanUS, rc.span)
			}
			if p.StartSpanUS != rc.startSpan {
				t.Errorf("span from the earliest start %d µs, raw %d", p.StartSpanUS, rc.startSpan)
			}
			if p.CPUUS != rc.cpu || p.WaitUS != rc.waitUS {
				t.Errorf("cpu %d, waits %d µs; raw %d, %d", p.CPUUS, p.WaitUS, rc.cpu, rc.waitUS)
			}
			if p.OrphanCalls != rc.orphans || p.OrphanCPUUS != rc.orphanCPU {
				t.Errorf("%d orphan recursive calls, %d µs CPU; raw %d, %d", p.OrphanCalls, p.OrphanCPUUS, rc.orphans, rc.orphanCPU)
			}
			if p.UnaccountedUS != p.SpanUS-p.CPUUS-p.OrphanCPUUS-p.WaitUS {
				t.Errorf("unaccounted %d ≠ span − cpu − orphan cpu − waits", p.UnaccountedUS)
			}
			var rows int64
			for _, l := range p.Lines() {
				rows += l.US
			}
			if rows != p.SpanUS {
				t.Errorf("the profile's rows add up to %d µs, span %d", rows, p.SpanUS)
			}
			for _, e := range p.Events {
				if rc.waits[e.Name] != e.US || e.WithinCallsUS+e.BetweenCallsUS != e.US {
					t.Errorf("%s: %d µs (inside %d, between %d), raw %d", e.Name, e.US, e.WithinCallsUS, e.BetweenCallsUS, rc.waits[e.Name])
				}
				// The session waiting for the client's next call is
				// between calls, as Method R counts it, in every trace.
				if e.Name == "SQL*Net message from client" && e.WithinCallsUS != 0 {
					t.Errorf("%s: %d µs inside calls, want all between", e.Name, e.WithinCallsUS)
				}
			}
			if len(p.Events) != len(rc.waits) {
				t.Errorf("%d events, raw %d", len(p.Events), len(rc.waits))
			}
			for _, s := range p.Statements {
				r := rc.statements[s.Key]
				if r == nil {
					t.Errorf("statement %s not in the raw count", s.Key)
					continue
				}
				got := rawStatement{s.Executions, s.Total.Rows, s.InclusiveElapsedUS, s.InclusiveCPUUS, s.WaitUS()}
				if got != *r {
					t.Errorf("%s: %+v, raw %+v", s.Key, got, *r)
				}
				checkDistribution(t, s.Key+" call latency", s.Latency, rc.callE[s.Key])
				checkDistribution(t, s.Key+" call CPU", s.CPU, rc.callC[s.Key])
			}
			for _, s := range p.Traces[0].Sessions {
				if s.Transactions != rc.sessions[s.Process] {
					t.Errorf("pid %q: transactions %+v, raw %+v", s.Process, s.Transactions, rc.sessions[s.Process])
				}
				delete(rc.sessions, s.Process)
			}
			for pid, x := range rc.sessions {
				if x != (Transactions{}) {
					t.Errorf("pid %q: raw transactions %+v not in the profile", pid, x)
				}
			}
			if len(p.Statements) != len(rc.statements) {
				t.Errorf("%d statements, raw %d", len(p.Statements), len(rc.statements))
			}
		})
	}
}

// checkDistribution compares a distribution with the raw values: count,
// max, power-of-two buckets ([0, 1) for 0), and a median of 0 when half
// the values are.
func checkDistribution(t *testing.T, what string, d Distribution, values []int64) {
	t.Helper()
	want := map[float64]int64{}
	var most, zeros int64
	for _, v := range values {
		low := 0.0
		if v > 0 {
			low = float64(uint64(1) << (bits.Len64(uint64(v)) - 1))
		} else {
			zeros++
		}
		want[low]++
		most = max(most, v)
	}
	got := map[float64]int64{}
	for _, b := range d.Buckets {
		got[b.LowUS] = b.Count
	}
	if d.Count != int64(len(values)) || d.MaxUS != most || !maps.Equal(got, want) {
		t.Errorf("%s: %d calls, max %d, buckets %v; raw %d, %d, %v", what, d.Count, d.MaxUS, got, len(values), most, want)
	}
	if 2*zeros >= int64(len(values)) && d.P50US != 0 {
		t.Errorf("%s: p50 %g µs, but %d of %d calls are 0 µs", what, d.P50US, zeros, len(values))
	}
}

// TestTrcsessMergeEqualsItsTraces: trcsess's merge of two sessions that ran
// at the same time profiles as the two traces together (each process's own
// span, not the merge's wall-clock span).
func TestTrcsessMergeEqualsItsTraces(t *testing.T) {
	const dir = "trc10046/jkstill-trace-combine_12.2.0.1/"
	merged := build(t, "merged", readData(t, dir+"main_trcsess_output.trc"))
	var inputs []Input
	for _, f := range []string{"js122a1_ora_9850.trc", "js122a1_ora_9854.trc"} {
		inputs = append(inputs, Input{Name: f, Reader: bytes.NewReader(readData(t, dir+f))})
	}
	apart, err := Build(t.Context(), inputs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if merged.SpanUS != apart.SpanUS || merged.CPUUS != apart.CPUUS || merged.WaitUS != apart.WaitUS {
		t.Errorf("merge: span %d, cpu %d, waits %d µs; the two traces: %d, %d, %d",
			merged.SpanUS, merged.CPUUS, merged.WaitUS, apart.SpanUS, apart.CPUUS, apart.WaitUS)
	}
	if merged.Traces[0].Processes != 2 {
		t.Errorf("merge has %d processes, want 2", merged.Traces[0].Processes)
	}
}
