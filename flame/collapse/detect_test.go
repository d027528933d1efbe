package collapse

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// otherCollapse runs one collapser over data and returns the profile, the
// diagnostics and the folded text (sorted, as the peers print it).
func otherCollapse(t testing.TB, f Format, name string, data []byte) (*flame.Profile, *input.Diagnostics, string) {
	t.Helper()
	diag := input.NewDiagnostics(nil, 100)
	p := flame.New()
	if err := f.Collapse(Input{Name: name, Reader: bytes.NewReader(data), Diag: diag}, Options{}, p); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out bytes.Buffer
	if err := p.WriteFolded(&out); err != nil {
		t.Fatal(err)
	}
	return p, diag, out.String()
}

// otherRead reads a file of the package's testdata/others.
func otherRead(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "others", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// otherProblems lists the reported problems as "line: reason".
func otherProblems(diag *input.Diagnostics) []string {
	var out []string
	for _, sp := range diag.Problems() {
		for _, p := range sp.First {
			out = append(out, strconv.Itoa(p.Line)+": "+p.Reason)
		}
	}
	return out
}

// otherFoldedTotal sums the counts of folded text independently of
// flame.Profile (last field of each line).
func otherFoldedTotal(t testing.TB, folded string) (lines int, total int64) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(folded))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		n, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		if err != nil {
			t.Fatalf("bad folded line %q", sc.Text())
		}
		lines++
		total += n
	}
	return lines, total
}

func TestOtherFormatsOrderAndNames(t *testing.T) {
	var names []string
	for _, f := range OtherFormats() {
		if f.Detect == nil || f.Collapse == nil || f.Description == "" {
			t.Errorf("%s: incomplete format", f.Name)
		}
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ","); got != "dtrace,stap,bpftrace,gdb,folded" {
		t.Errorf("order %s", got)
	}
}

// TestDetectRealInputs offers every real input (and the synthetic
// fixtures) to all formats: each of ours is recognised as exactly its own
// format, the 13 perf script inputs are claimed by none.
func TestDetectRealInputs(t *testing.T) {
	dtrace := testenv.DataFile(t, "flamegraph/example-dtrace-stacks.txt")
	cases := map[string]string{dtrace: "dtrace"}
	for _, f := range []string{"bpftrace-kstack.txt", "bpftrace-comm-kstack-ustack.txt"} {
		cases[filepath.Join("testdata", "others", f)] = "bpftrace"
	}
	cases[filepath.Join("testdata", "others", "gdb-python-threads.txt")] = "gdb"
	cases[filepath.Join("testdata", "others", "pstack-oracle-synthetic.txt")] = "gdb"
	cases[filepath.Join("testdata", "others", "stap-synthetic.txt")] = "stap"
	perf := testenv.DataFiles(t, "flamegraph/FlameGraph-test/*.txt")
	if len(perf) != 13 {
		t.Fatalf("%d perf inputs, want 13", len(perf))
	}
	for _, p := range perf {
		cases[testenv.DataFile(t, p)] = ""
	}
	// Folded: the expected outputs of stackcollapse-perf.pl, and our own
	// collapse of the DTrace example.
	results := testenv.DataFiles(t, "flamegraph/FlameGraph-test/results/*.txt")
	if len(results) != 78 {
		t.Fatalf("%d folded results, want 78", len(results))
	}
	for _, p := range results {
		cases[testenv.DataFile(t, p)] = "folded"
	}
	for path, want := range cases {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 64<<10 {
			data = data[:64<<10] // the opener's detection limit
		}
		var yes []string
		for _, f := range OtherFormats() {
			if f.Detect(data) == input.Yes {
				yes = append(yes, f.Name)
			}
		}
		got := strings.Join(yes, ",")
		if got != want {
			t.Errorf("%s: claimed by %q, want %q", filepath.Base(path), got, want)
		}
		f, v := Detect(OtherFormats(), data)
		if want != "" && (v != input.Yes || f.Name != want) {
			t.Errorf("%s: Detect = %s/%v, want %s", filepath.Base(path), f.Name, v, want)
		}
		if want == "" && v != input.No {
			t.Errorf("%s: Detect = %v, want No", filepath.Base(path), v)
		}
	}
}

// TestDetectGrowingPrefix feeds each real input byte by byte: no format
// says Yes early for the wrong input, and the right one decides within the
// first lines.
func TestDetectGrowingPrefix(t *testing.T) {
	inputs := map[string]string{
		testenv.DataFile(t, "flamegraph/example-dtrace-stacks.txt"):             "dtrace",
		testenv.DataFile(t, "flamegraph/FlameGraph-test/perf-dd-stacks-01.txt"): "",
		filepath.Join("testdata", "others", "gdb-python-threads.txt"):           "gdb",
		filepath.Join("testdata", "others", "bpftrace-kstack.txt"):              "bpftrace",
		filepath.Join("testdata", "others", "stap-synthetic.txt"):               "stap",
	}
	for path, want := range inputs {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= len(data) && n <= 4096; n++ {
			f, v := Detect(OtherFormats(), data[:n])
			if v == input.Yes && f.Name != want {
				t.Fatalf("%s: prefix of %d bytes claimed by %s", filepath.Base(path), n, f.Name)
			}
			if v == input.Yes || v == input.No {
				if want != "" && v == input.No {
					t.Fatalf("%s: prefix of %d bytes refused", filepath.Base(path), n)
				}
				break
			}
			if n == 4096 {
				t.Errorf("%s: undecided after 4096 bytes", filepath.Base(path))
			}
		}
	}
}

// TestDetectOtherInputs: latscope's histogram inputs and odd text are not
// stacks.
func TestDetectOtherInputs(t *testing.T) {
	for _, rel := range []string{
		"pylatencymap/example_latency_data.txt",
		"pylatencymap/test_DTrace_data.txt",
		"pylatencymap/test_SystemTap_data.txt",
		"trc10046/carymillsap-tracing-oracle_23.2",
	} {
		path := testenv.DataFile(t, rel)
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			files, _ := filepath.Glob(filepath.Join(path, "*.trc"))
			if len(files) == 0 {
				t.Fatalf("no trace in %s", path)
			}
			path = files[0]
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, v := Detect(OtherFormats(), data[:min(len(data), 64<<10)]); v == input.Yes {
			t.Errorf("%s claimed", rel)
		}
	}
	for _, text := range []string{"\x00\x01binary\xff\n", "hello world\n", "{\"json\": 1}\n", "@usecs:\n[1, 2) 3 |@@|\n"} {
		if f, v := Detect(OtherFormats(), []byte(text)); v == input.Yes {
			t.Errorf("%q claimed by %s", text, f.Name)
		}
	}
}

// otherCountLines sums the "count" lines of a DTrace/stap-style file
// (digits alone on a line) independently of the collapsers.
func otherCountLines(t testing.TB, data []byte, skip int) (n int, total int64) {
	t.Helper()
	re := regexp.MustCompile(`^\s*(\d+)\s*$`)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for i := 1; sc.Scan(); i++ {
		if m := re.FindStringSubmatch(sc.Text()); m != nil && i > skip {
			v, _ := strconv.ParseInt(m[1], 10, 64)
			n++
			total += v
		}
	}
	return n, total
}
