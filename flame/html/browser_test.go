package html

import (
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

var selftestResult = regexp.MustCompile(`(?s)<pre id="selftest-result"[^>]*>(.*?)</pre>`)
var timingAttr = regexp.MustCompile(`data-timing="([^"]*)"`)

// step is one #selftest action; the page runs them through its own event
// handlers and reports JSON.
type step map[string]any

// drive writes the page, runs headless Chromium (off the network) on it
// with the steps, and returns one raw JSON result per step.
func drive(t *testing.T, p *flame.Profile, o Options, steps ...step) ([]json.RawMessage, time.Duration) {
	t.Helper()
	dir := t.TempDir()
	page := filepath.Join(dir, "flame.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(f, p, o); err != nil {
		t.Fatal(err)
	}
	f.Close()
	js, _ := json.Marshal(steps)
	start := time.Now()
	dom := testenv.RunChromium(t, "file://"+page+"#selftest="+url.PathEscape(string(js)), 90*time.Second,
		"--window-size=1300,900", "--dump-dom")
	wall := time.Since(start)
	if !strings.Contains(dom, `data-flame="ready"`) {
		t.Fatalf("the viewer did not start:\n%s", tail(dom, 800))
	}
	m := selftestResult.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no self-test result:\n%s", tail(dom, 800))
	}
	var out []json.RawMessage
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &out); err != nil || len(out) != len(steps) {
		t.Fatalf("self-test result %v: %s", err, tail(m[1], 800))
	}
	for i, r := range out {
		if strings.HasPrefix(string(r), `{"error"`) {
			t.Errorf("step %d %v: %s", i, steps[i], r)
		}
	}
	if tm := timingAttr.FindStringSubmatch(dom); tm != nil {
		t.Logf("page timing (ms): %s; chromium wall %v", html.UnescapeString(tm[1]), wall.Round(time.Millisecond))
	}
	return out, wall
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func decode[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return v
}

// goMatched is the independent "Matched" figure: samples of stacks with at
// least one frame matching, each stack counted once.
func goMatched(stacks []stack, re *regexp.Regexp) (sum, total int64) {
	for _, s := range stacks {
		total += s.count
		for _, f := range s.frames {
			if re.MatchString(f) {
				sum += s.count
				break
			}
		}
	}
	return sum, total
}

// fmtInt is the page's en-US integer format.
func fmtInt(v int64) string {
	s := fmt.Sprint(v)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

type frameResult struct {
	Zoom, Crumbs, Matched string
	Cur                   int
	ShowBase              bool
	ZoomTotal, ZoomBase   int64
}

// TestBrowserVertx drives the viewer on the real vertx profile: it renders,
// search reports Go's Matched %, next/previous match zoom to matches, the
// table's top self function and the sandwich's callers equal Go's.
func TestBrowserVertx(t *testing.T) {
	stacks := readFolded(t, testenv.DataFile(t, vertxGolden))
	p := profileOf(stacks, false)
	const search = "netty.*flush"
	re := regexp.MustCompile("(?i)" + search)
	sum, total := goMatched(stacks, re)

	// Top self function (self = the stack's last frame), ties by name.
	self, tot := map[string]int64{}, map[string]int64{}
	for _, s := range stacks {
		self[s.frames[len(s.frames)-1]] += s.count
		seen := map[string]bool{}
		for _, f := range s.frames {
			if !seen[f] {
				tot[f] += s.count
				seen[f] = true
			}
		}
	}
	fns := make([]string, 0, len(self))
	for f := range tot {
		fns = append(fns, f)
	}
	sort.Slice(fns, func(i, j int) bool {
		if self[fns[i]] != self[fns[j]] {
			return self[fns[i]] > self[fns[j]]
		}
		return fns[i] < fns[j]
	})
	// The sandwich function: one with several distinct callers.
	const sandwichFn = "system_call_fastpath_[k]"
	callers := map[string]int64{}
	for _, s := range stacks {
		for k, f := range s.frames {
			if f == sandwichFn {
				if k > 0 {
					callers[s.frames[k-1]] += s.count
				}
				break
			}
		}
	}

	out, _ := drive(t, p, Options{Title: "vertx"},
		step{"op": "render"},
		step{"op": "table", "rows": 3},
		step{"op": "row", "name": sandwichFn},
		step{"op": "search", "re": search},
		step{"op": "key", "key": "Enter", "target": "search"},
		step{"op": "key", "key": "n"},
		step{"op": "key", "key": "Enter", "shift": true, "target": "search"},
		step{"op": "hover", "name": "SpinPause"},
		step{"op": "click", "name": "GCTaskThread::run"},
	)
	r := decode[struct {
		NonBlank, Drawn int
	}](t, out[0])
	if r.NonBlank < 5000 || r.Drawn < 50 {
		t.Errorf("canvas nearly blank: %d non-white pixels, %d frames drawn", r.NonBlank, r.Drawn)
	}

	tb := decode[struct{ Rows [][]string }](t, out[1])
	for k := 0; k < 3; k++ {
		f := fns[k]
		want := []string{f, fmtInt(self[f]), fmt.Sprintf("%.2f%%", 100*float64(self[f])/float64(total)), fmtInt(tot[f]),
			fmt.Sprintf("%.2f%%", 100*float64(tot[f])/float64(total))}
		if k >= len(tb.Rows) || strings.Join(tb.Rows[k], "|") != strings.Join(want, "|") {
			t.Errorf("table row %d: page %v, Go %v", k, tb.Rows, want)
		}
	}

	sw := decode[struct {
		Title    string
		Callers  [][]any
		Callees  [][]any
		NonBlank []int
	}](t, out[2])
	got := map[string]int64{}
	for _, c := range sw.Callers {
		got[c[0].(string)] += int64(c[1].(float64))
	}
	if fmt.Sprint(got) != fmt.Sprint(callers) || len(callers) < 3 {
		t.Errorf("sandwich callers of %s: page %v, Go %v", sandwichFn, got, callers)
	}
	if sw.Title != "Sandwich: "+sandwichFn || sw.NonBlank[0] < 500 || sw.NonBlank[1] < 500 || len(sw.Callees) == 0 {
		t.Errorf("sandwich %q: %d callees, drawn %v", sw.Title, len(sw.Callees), sw.NonBlank)
	}

	s := decode[struct {
		Matched string
		Sum     int64
		Frames  int
	}](t, out[3])
	want := fmt.Sprintf("Matched: %.2f%%", 100*float64(sum)/float64(total))
	if s.Sum != sum || !strings.HasPrefix(s.Matched, want+" · ") || s.Frames < 3 {
		t.Errorf("search %q: page %q (%d samples), Go %q (%d samples)", search, s.Matched, s.Sum, want, sum)
	}
	t.Logf("search %q: %s", search, s.Matched)

	first, second, back := decode[frameResult](t, out[4]), decode[frameResult](t, out[5]), decode[frameResult](t, out[6])
	if !re.MatchString(first.Zoom) || first.Cur != 0 || !strings.Contains(first.Crumbs, first.Zoom) {
		t.Errorf("Enter: zoomed to %q (match %d), crumbs %q", first.Zoom, first.Cur, first.Crumbs)
	}
	if !re.MatchString(second.Zoom) || second.Cur != 1 {
		t.Errorf("n: zoomed to %q (match %d)", second.Zoom, second.Cur)
	}
	if back.Cur != 0 || back.Zoom != first.Zoom {
		t.Errorf("Shift+Enter: match %d %q, want 0 %q", back.Cur, back.Zoom, first.Zoom)
	}

	tip := decode[struct{ Tip string }](t, out[7]).Tip
	wantTip := fmt.Sprintf("Function: SpinPause\n%s samples (%.2f%%), self %s (%.2f%%)", fmtInt(tot["SpinPause"]),
		100*float64(tot["SpinPause"])/float64(total), fmtInt(self["SpinPause"]), 100*float64(self["SpinPause"])/float64(total))
	if tip != wantTip {
		t.Errorf("tooltip %q, want %q", tip, wantTip)
	}
	if z := decode[frameResult](t, out[8]); z.Zoom != "GCTaskThread::run" {
		t.Errorf("click zoomed to %q", z.Zoom)
	}
}

// TestBrowserDiff: a grown frame is drawn red, a shrunk one blue, and the
// vanished frame is found by search, listed, and shown in BASE's shape.
func TestBrowserDiff(t *testing.T) {
	stacks := diffStacks()
	out, _ := drive(t, profileOf(stacks, true), Options{},
		step{"op": "pixel", "name": "grow"},
		step{"op": "pixel", "name": "same"},
		step{"op": "hover", "name": "grow"},
		step{"op": "table", "rows": 10},
		step{"op": "search", "re": "^gone$"},
		step{"op": "key", "key": "Enter", "target": "search"},
		step{"op": "pixel", "name": "gone"},
		step{"op": "base", "on": false},
	)
	type px struct{ RGB [3]int }
	grow, same := decode[px](t, out[0]).RGB, decode[px](t, out[1]).RGB
	if grow[0] != 255 || grow[1] > 150 || grow[1] != grow[2] {
		t.Errorf("grown frame drawn %v, want red", grow)
	}
	// "same" keeps 40 samples but its share falls from 40% to 26.7%: blue.
	if same[2] != 255 || same[0] > 200 || same[0] != same[1] {
		t.Errorf("shrunk frame drawn %v, want blue", same)
	}
	tip := decode[struct{ Tip string }](t, out[2]).Tip
	if !strings.Contains(tip, "total 20 → 80 samples (Δ +60)") || !strings.Contains(tip, "share 20.00% → 53.33%") {
		t.Errorf("diff tooltip %q", tip)
	}
	tb := decode[struct{ Rows [][]string }](t, out[3])
	var gone []string
	for _, r := range tb.Rows {
		if r[0] == "gone" {
			gone = r
		}
	}
	if strings.Join(gone, "|") != "gone|40|0|40|0|-40.00 pp" {
		t.Errorf("table row of the vanished frame: %v (rows %v)", gone, tb.Rows)
	}
	s := decode[struct {
		Matched string
		Sum     int64
		Base    int64
		Frames  int
	}](t, out[4])
	if s.Sum != 0 || s.Base != 40 || s.Frames != 1 || s.Matched != "Matched: 0.00% (base 40.00%) · 1 frames" {
		t.Errorf("search for the vanished frame: %+v", s)
	}
	f := decode[frameResult](t, out[5])
	if f.Zoom != "gone" || !f.ShowBase || f.ZoomBase != 40 {
		t.Errorf("next match on a vanished frame: %+v", f)
	}
	if g := decode[px](t, out[6]).RGB; g != [3]int{230, 0, 230} {
		t.Errorf("vanished frame (search-highlighted) drawn %v", g)
	}
	if b := decode[struct{ ShowBase bool }](t, out[7]); b.ShowBase {
		t.Error("base toggle did not turn off")
	}
}

// TestBrowserLarge loads a synthetic profile of more than 200k frames and
// logs how long the page takes to parse, lay out and draw. Synthetic:
// random stacks over a fixed name pool, seeded, so it is the same each run.
func TestBrowserLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large profile: skipped with -short")
	}
	n := 200_000
	if v, err := strconv.Atoi(os.Getenv("LATSCOPE_FLAME_LARGE_FRAMES")); err == nil && v > 0 {
		n = v // manual runs at other sizes
	}
	p, frames := largeProfile(n)
	start := time.Now()
	var size countWriter
	if err := Write(&size, p, Options{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("synthetic: %d stacks, %d frames, page %.1f MB written in %v", p.Len(), frames, float64(size)/1e6,
		time.Since(start).Round(time.Millisecond))
	out, wall := drive(t, p, Options{}, step{"op": "render"}, step{"op": "search", "re": "fn1[0-9]$"})
	r := decode[struct {
		NonBlank, Drawn int
		Timing          map[string]float64
	}](t, out[0])
	if r.NonBlank < 5000 {
		t.Errorf("large profile: canvas nearly blank (%d pixels)", r.NonBlank)
	}
	t.Logf("large profile: drawn %d frames; timing %v ms; chromium wall %v", r.Drawn, r.Timing, wall.Round(time.Millisecond))
}

type countWriter int

func (c *countWriter) Write(b []byte) (int, error) { *c += countWriter(len(b)); return len(b), nil }

// largeProfile builds random stacks until the merged tree has at least
// minFrames frames.
func largeProfile(minFrames int) (*flame.Profile, int) {
	rng := rand.New(rand.NewPCG(7, 11))
	p := flame.New()
	for {
		for k := 0; k < 5000; k++ {
			depth := 5 + rng.IntN(40)
			fr := make([]string, depth)
			for d := range fr {
				fr[d] = fmt.Sprintf("pkg%d.fn%d", d%7, rng.IntN(4+d*3))
			}
			p.Add(strings.Join(fr, ";"), int64(1+rng.IntN(20)))
		}
		if n := len(buildData(p, Options{}).N); n >= minFrames {
			return p, n
		}
	}
}
