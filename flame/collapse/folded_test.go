package collapse

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// TestFoldedGoldens reads the 78 expected outputs of stackcollapse-perf.pl
// (real folded text) and writes each back byte for byte.
func TestFoldedGoldens(t *testing.T) {
	files := testenv.DataFiles(t, "flamegraph/FlameGraph-test/results/*.txt")
	if len(files) != 78 {
		t.Fatalf("%d goldens", len(files))
	}
	for _, rel := range files {
		path := testenv.DataFile(t, rel)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		p, diag, folded := otherCollapse(t, FoldedFormat(), filepath.Base(path), data)
		lines, total := otherFoldedTotal(t, string(data))
		if folded != string(data) || p.Len() != lines || p.Total() != total || len(otherProblems(diag)) != 0 {
			t.Errorf("%s: %d/%d stacks, total %d/%d, %v", filepath.Base(path), p.Len(), lines, p.Total(), total,
				otherProblems(diag))
		}
	}
}

// TestFoldedShapes: repeats summed, differentials, frames with spaces and
// fractional counts (synthetic lines in the documented shapes).
func TestFoldedShapes(t *testing.T) {
	p, diag, folded := otherCollapse(t, FoldedFormat(), "f", []byte("a;b 2\nmain;x 1 3\n\na;b\t5\r\n"))
	if folded != "a;b 7\nmain;x 1 3\n" || p.Diff || len(otherProblems(diag)) != 0 {
		t.Errorf("one count: %q", folded)
	}
	p, diag, folded = otherCollapse(t, FoldedFormat(), "d", []byte("a;b 2 5\na;c 0 1\na;b 1 1\na;d 4\n"))
	if folded != "a;b 3 6\na;c 0 1\n" || !p.Diff {
		t.Errorf("diff: %q", folded)
	}
	if got := otherProblems(diag); !slices.Equal(got, []string{`4: one count on a line of a differential ("stack base new", line 1): skipped`}) {
		t.Errorf("problems %q", got)
	}
	p, diag, folded = otherCollapse(t, FoldedFormat(), "frac", []byte("a;b 2.75\na;b 1.5\na;c 3.0\n"))
	if folded != "a;b 3\na;c 3\n" || len(diag.Warnings()) != 1 ||
		!strings.Contains(diag.Warnings()[0], "2 fractional sample counts truncated") {
		t.Errorf("fractional: %q %q", folded, diag.Warnings())
	}
}

func TestFoldedBadInput(t *testing.T) {
	in := "a;b 2\nno count here\na;b -3\n\x00\xff 1\na;c 99999999999999999999\n 5\n"
	_, diag, folded := otherCollapse(t, FoldedFormat(), "bad", []byte(in))
	if folded != "a;b 2\n" {
		t.Errorf("got %q", folded)
	}
	want := []string{
		`2: not a folded stack ("frame;frame;... count"): skipped`,
		`3: not a folded stack ("frame;frame;... count"): skipped`,
		"4: binary data, not text: line skipped",
		"5: count too large: skipped",
		`6: not a folded stack ("frame;frame;... count"): skipped`,
	}
	if got := otherProblems(diag); !slices.Equal(got, want) {
		t.Errorf("problems %q", got)
	}
}

func FuzzFolded(f *testing.F) {
	f.Add([]byte("a;b 2\nmain;x 1 3\n"))
	f.Add([]byte("a;b 2 5\na;c 0.5 1\n"))
	f.Add([]byte("java-123;Ljava/lang/Thread;::run 44\n"))
	f.Fuzz(func(t *testing.T, in []byte) { otherFuzzCheck(t, FoldedFormat(), in) })
}
