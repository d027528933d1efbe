package html

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

const vertxGolden = "flamegraph/FlameGraph-test/results/perf-vertx-stacks-01-collapsed-all.txt"

// stack is one folded line as read by readFolded, independently of flame.
type stack struct {
	frames      []string
	base, count int64
}

// readFolded is a small local reader of "frames count" (or "frames base
// count") lines, so the tests check the page against the file itself.
func readFolded(t *testing.T, path string) []stack {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []stack
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		n, err := strconv.ParseInt(fields[len(fields)-1], 10, 64)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		// Frame names may hold spaces: the count is the last field.
		frames := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(sc.Text()), fields[len(fields)-1]))
		// Trailing empty frames vanish, as with Perl's split in flamegraph.pl
		// (the vertx golden has stacks ending in ";").
		parts := strings.Split(frames, ";")
		for len(parts) > 1 && parts[len(parts)-1] == "" {
			parts = parts[:len(parts)-1]
		}
		out = append(out, stack{frames: parts, count: n})
	}
	return out
}

func profileOf(stacks []stack, diff bool) *flame.Profile {
	p := flame.New()
	p.Diff = diff
	for _, s := range stacks {
		p.AddDiff(strings.Join(s.frames, ";"), s.base, s.count)
	}
	return p
}

var dataScript = regexp.MustCompile(`(?s)<script type="application/json" id="flame-data">(.*?)</script>`)

func pageOf(t *testing.T, p *flame.Profile, o Options) ([]byte, *pageData) {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, p, o); err != nil {
		t.Fatal(err)
	}
	m := dataScript.FindSubmatch(buf.Bytes())
	if m == nil {
		t.Fatal("no embedded data in the page")
	}
	var d pageData
	if err := json.Unmarshal(m[1], &d); err != nil {
		t.Fatalf("embedded data: %v", err)
	}
	return buf.Bytes(), &d
}

// pathTotals sums the embedded frames' totals, self counts and base counts
// per root-to-frame path (the tree may draw one path twice when stacks
// are not consecutive; the sums are what the profile says).
func pathTotals(t *testing.T, d *pageData) (total, self, base map[string]int64) {
	t.Helper()
	total, self, base = map[string]int64{}, map[string]int64{}, map[string]int64{}
	var path []string
	var keys []string
	for i := range d.N {
		depth := int(d.D[i])
		if depth > len(path) || (i == 0) != (depth == 0) {
			t.Fatalf("frame %d: depth %d after a path of %d frames", i, depth, len(path))
		}
		path = append(path[:depth], d.Names[d.N[i]])
		key := strings.Join(path[1:], ";")
		keys = append(keys[:depth], key)
		total[key] += d.T[i]
		self[key] += d.T[i]
		if depth > 0 {
			self[keys[depth-1]] -= d.T[i]
		}
		if d.Diff {
			base[key] += d.B[i]
		}
	}
	return total, self, base
}

// expectedPaths computes the same per-path sums from the folded lines.
func expectedPaths(stacks []stack) (total, self, base map[string]int64) {
	total, self, base = map[string]int64{}, map[string]int64{}, map[string]int64{}
	for _, s := range stacks {
		total[""] += s.count
		base[""] += s.base
		for k := range s.frames {
			key := strings.Join(s.frames[:k+1], ";")
			total[key] += s.count
			base[key] += s.base
		}
		self[strings.Join(s.frames, ";")] += s.count
	}
	return total, self, base
}

func compareMaps(t *testing.T, what string, got, want map[string]int64) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s of %q: page %d, folded file %d", what, k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok && v != 0 {
			t.Errorf("%s of %q: page %d, not in the folded file", what, k, v)
		}
	}
}

// TestEmbeddedDataVertx checks the embedded tree against the real
// stackcollapse-perf.pl golden: every frame's total and self, summed per
// path, equal the folded file's.
func TestEmbeddedDataVertx(t *testing.T) {
	stacks := readFolded(t, testenv.DataFile(t, vertxGolden))
	page, d := pageOf(t, profileOf(stacks, false), Options{Subtitle: "vertx"})
	wantT, wantS, _ := expectedPaths(stacks)
	gotT, gotS, _ := pathTotals(t, d)
	compareMaps(t, "total", gotT, wantT)
	compareMaps(t, "self", gotS, wantS)
	if d.Names[0] != "all" || d.T[0] != wantT[""] || d.T[0] != 285 {
		t.Errorf("root %q with %d samples, want all with %d (285)", d.Names[0], d.T[0], wantT[""])
	}
	if d.Title != "Flame Graph" || d.CountName != "samples" || d.Diff || d.B != nil {
		t.Errorf("title %q, count name %q, diff %v", d.Title, d.CountName, d.Diff)
	}
	t.Logf("vertx: %d stacks, %d frames, %d names, page %d bytes", len(stacks), len(d.N), len(d.Names), len(page))
	for _, bad := range []string{"http://", "https://", "@import", "url("} {
		if bytes.Contains(page, []byte(bad)) {
			t.Errorf("the page mentions %q: it must not fetch anything", bad)
		}
	}
}

// TestEmbeddedDiff checks base counts, vanished frames (total 0, base > 0)
// and the page title of a differential (synthetic: three stacks).
func TestEmbeddedDiff(t *testing.T) {
	stacks := diffStacks()
	_, d := pageOf(t, profileOf(stacks, true), Options{})
	wantT, _, wantB := expectedPaths(stacks)
	gotT, _, gotB := pathTotals(t, d)
	compareMaps(t, "total", gotT, wantT)
	compareMaps(t, "base", gotB, wantB)
	if !d.Diff || d.Title != "Differential Flame Graph" {
		t.Errorf("diff %v, title %q", d.Diff, d.Title)
	}
	if gotT["main;gone"] != 0 || gotB["main;gone"] != 40 {
		t.Errorf("vanished frame: total %d base %d, want 0 and 40", gotT["main;gone"], gotB["main;gone"])
	}
}

// diffStacks is a synthetic differential: "grow" doubles its share, "gone"
// vanishes, "same" keeps its count, "fresh" is new.
func diffStacks() []stack {
	return []stack{
		{frames: []string{"main", "grow"}, base: 20, count: 80},
		{frames: []string{"main", "same"}, base: 40, count: 40},
		{frames: []string{"main", "gone"}, base: 40, count: 0},
		{frames: []string{"main", "fresh", "leaf"}, base: 0, count: 30},
	}
}

// TestOptions checks option defaults and --reverse.
func TestOptions(t *testing.T) {
	p := profileOf([]stack{{frames: []string{"a", "b", "c"}, count: 3}, {frames: []string{"a", "d"}, count: 1}}, false)
	page, d := pageOf(t, p, Options{Title: "T <x>", Inverted: true, CountName: "bytes", Reverse: true, MinWidth: 2})
	if !bytes.Contains(page, []byte("<title>T &lt;x&gt;</title>")) || d.Title != "T <x>" {
		t.Errorf("title not escaped or lost: %q", d.Title)
	}
	if !d.Inverted || d.CountName != "bytes" || d.MinWidth != 2 || d.NameType != "Function:" {
		t.Errorf("options lost: %+v", d)
	}
	gotT, _, _ := pathTotals(t, d)
	if gotT["c;b;a"] != 3 || gotT["d;a"] != 1 || gotT["c"] != 3 {
		t.Errorf("reverse: %v", gotT)
	}
	_, e := pageOf(t, flame.New(), Options{})
	if len(e.N) != 1 || e.T[0] != 0 {
		t.Errorf("empty profile: %+v", e)
	}
}
