package filter

import (
	"bufio"
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// loadFolded reads "frames count" (or "frames base count") lines.
func loadFolded(t *testing.T, path string) *flame.Profile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := flame.New()
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		// Frames may contain spaces: counts are the last one or two fields.
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		c, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil || len(fields) < 2 {
			t.Fatalf("%s:%d: bad folded line %q", path, n, line)
		}
		p.Add(line[:i], c)
	}
	return p
}

func folded(t *testing.T, p *flame.Profile) string {
	t.Helper()
	var b bytes.Buffer
	if err := p.WriteFolded(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

const iperfGolden = "flamegraph/FlameGraph-test/results/perf-iperf-stacks-pidtid-01-collapsed-pid.txt"

// frameSet splits a stack the slow way, independently of the package.
func frameSet(frames string) []string { return strings.Split(frames, ";") }

func TestIncludeExcludeOnRealGolden(t *testing.T) {
	p := loadFolded(t, testenv.DataFile(t, iperfGolden))
	if p.Len() != 106 || p.Total() != 200 {
		t.Fatalf("golden: %d stacks, %d samples; want 106, 200", p.Len(), p.Total())
	}
	re := regexp.MustCompile(`^sock_sendmsg$`)
	in, ex := Include(p, re), Exclude(p, re)
	var wantIn, wantInStacks int64
	for _, s := range p.InOrder() {
		for _, f := range frameSet(s.Frames) {
			if f == "sock_sendmsg" {
				wantIn += s.Count
				wantInStacks++
				break
			}
		}
	}
	if in.Total() != wantIn || int64(in.Len()) != wantInStacks {
		t.Errorf("Include: %d stacks %d samples, want %d %d", in.Len(), in.Total(), wantInStacks, wantIn)
	}
	if in.Total() != 100 || in.Len() != 48 || ex.Total() != 100 || in.Len()+ex.Len() != 106 {
		t.Errorf("Include %d / Exclude %d samples (%d+%d stacks); want 100 (48 stacks) / 100, 106 stacks", in.Total(), ex.Total(), in.Len(), ex.Len())
	}
	// Unanchored, per frame: "sys_" matches inside frames, but ";" never
	// matches (no frame contains it) although the joined line does.
	if got := Include(p, regexp.MustCompile(`;`)); got.Len() != 0 {
		t.Errorf("a regexp matching only the separator kept %d stacks", got.Len())
	}
	var wantSys int64
	for _, s := range p.InOrder() {
		if strings.Contains(s.Frames, "sys_") {
			wantSys += s.Count
		}
	}
	if got := Include(p, regexp.MustCompile(`sys_`)).Total(); got != wantSys {
		t.Errorf("Include(sys_) = %d samples, want %d", got, wantSys)
	}
	// Order of first appearance is kept.
	prev := -1
	order := map[string]int{}
	for i, s := range p.InOrder() {
		order[s.Frames] = i
	}
	for _, s := range ex.InOrder() {
		if order[s.Frames] <= prev {
			t.Fatalf("Exclude reordered stacks at %q", s.Frames)
		}
		prev = order[s.Frames]
	}
}

func TestFocusReRootsAtOutermostFrame(t *testing.T) {
	p := loadFolded(t, testenv.DataFile(t, iperfGolden))
	got := Focus(p, "entry_SYSCALL_64_fastpath")
	want := flame.New()
	for _, s := range p.InOrder() {
		fs := frameSet(s.Frames)
		for i, f := range fs {
			if f == "entry_SYSCALL_64_fastpath" {
				want.Add(strings.Join(fs[i:], ";"), s.Count)
				break
			}
		}
	}
	if g, w := folded(t, got), folded(t, want); g != w {
		t.Errorf("Focus:\n%s\nwant:\n%s", g, w)
	}
	// Re-rooting merges stacks from both iperf processes.
	if got.Total() != 186 || got.Len() >= p.Len() { // 186: awk over the golden
		t.Errorf("Focus kept %d stacks, %d samples", got.Len(), got.Total())
	}
	for _, s := range got.InOrder() {
		if !strings.HasPrefix(s.Frames, "entry_SYSCALL_64_fastpath") {
			t.Errorf("stack not re-rooted: %q", s.Frames)
		}
	}
	// Recursion: the outermost occurrence is the root.
	r := flame.New()
	r.Add("main;f;g;f;h", 3)
	r.Add("main;g", 2)
	if g := folded(t, Focus(r, "f")); g != "f;g;f;h 3\n" {
		t.Errorf("Focus with recursion: %q", g)
	}
}

// TestSkipAfterMatchesInferno compares with inferno-collapse-perf 0.12.8
// --pid --skip-after entry_SYSCALL_64_fastpath --skip-after sock_sendmsg
// run on the same perf script input (testdata/PROVENANCE.md).
func TestSkipAfterMatchesInferno(t *testing.T) {
	p := loadFolded(t, "testdata/iperf-inferno-pid.folded")
	got := SkipAfter(p, "entry_SYSCALL_64_fastpath", "sock_sendmsg")
	want := loadFolded(t, "testdata/iperf-inferno-pid-skipafter.folded")
	if g, w := folded(t, got), folded(t, want); g != w {
		t.Errorf("SkipAfter:\n%s\nwant (inferno):\n%s", g, w)
	}
	if got.Total() != p.Total() {
		t.Errorf("SkipAfter lost samples: %d of %d", got.Total(), p.Total())
	}
	if g, w := folded(t, SkipAfter(p)), folded(t, p); g != w {
		t.Error("SkipAfter without names changed the profile")
	}
	// The innermost occurrence wins.
	r := flame.New()
	r.Add("main;f;g;f;h", 3)
	if g := folded(t, SkipAfter(r, "f")); g != "f;h 3\n" {
		t.Errorf("SkipAfter with recursion: %q", g)
	}
}

func TestDiffBaseCountsKept(t *testing.T) {
	// Synthetic differential profile ("frames base count").
	p := flame.New()
	p.Diff = true
	p.AddDiff("a;b;c", 5, 7)
	p.AddDiff("x;b;c", 1, 2)
	p.AddDiff("a;d", 4, 0)
	got := Focus(p, "b")
	if !got.Diff || folded(t, got) != "b;c 6 9\n" {
		t.Errorf("Focus on a diff: diff=%v %q", got.Diff, folded(t, got))
	}
	if g := folded(t, Exclude(p, regexp.MustCompile(`^c$`))); g != "a;d 4 0\n" {
		t.Errorf("Exclude on a diff: %q", g)
	}
	if g := folded(t, SkipAfter(p, "b")); g != "a;d 4 0\nb;c 6 9\n" {
		t.Errorf("SkipAfter on a diff: %q", g)
	}
}

func TestEmptyAndEdgeFrames(t *testing.T) {
	p := flame.New()
	p.Add("only", 1)
	p.Add("a;;b", 2) // an empty frame name
	if g := folded(t, Focus(p, "")); g != ";b 2\n" {
		t.Errorf("Focus on the empty frame: %q", g)
	}
	if g := folded(t, SkipAfter(p, "only", "b")); g != "b 2\nonly 1\n" {
		t.Errorf("SkipAfter at the leaf and root: %q", g)
	}
	if Include(flame.New(), regexp.MustCompile(`x`)).Len() != 0 {
		t.Error("empty profile")
	}
}
