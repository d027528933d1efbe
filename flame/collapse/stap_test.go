package collapse

import (
	"os"
	"slices"
	"testing"
)

// TestStapSynthetic: the SystemTap layout documented in
// stackcollapse-stap.pl (testdata/others/stap-synthetic.txt is synthetic:
// no SystemTap on these machines); expected lines follow the script's
// s/\+[^+]*$//; s/.* : // rules.
func TestStapSynthetic(t *testing.T) {
	data := otherRead(t, "stap-synthetic.txt")
	p, diag, folded := otherCollapse(t, StapFormat(), "stap-synthetic.txt", data)
	want := "0x4004f9;__libc_start_main;main;__poll 3\n" +
		"x86_64_start_kernel;x86_64_start_reservations;start_kernel;rest_init;cpu_idle;default_idle;native_safe_halt 16\n"
	if folded != want {
		t.Errorf("got\n%s", folded)
	}
	nCounts, total := otherCountLines(t, data, 0)
	if nCounts != 3 || p.Total() != total || total != 19 || len(otherProblems(diag)) != 0 {
		t.Errorf("%d count lines, total %d, profile %d, %v", nCounts, total, p.Total(), otherProblems(diag))
	}
}

func TestStapBadInput(t *testing.T) {
	in := " 0xffffffff8103ce3b : native_safe_halt+0xb/0x10 [kernel]\n\t2\n\t3\n" +
		" 0x4005d6 : a;b+0x36/0x50 [/tmp/a.out]\n\t1\n 0x4005d6 : main+0x36/0x50 [/tmp/a.out]\n"
	_, diag, folded := otherCollapse(t, StapFormat(), "bad", []byte(in))
	if folded != "a:b 1\nnative_safe_halt 2\n" {
		t.Errorf("got %q", folded)
	}
	want := []string{"3: count 3 without a stack before it: skipped",
		"6: stack without a count line at the end of the input (truncated?): skipped"}
	if got := otherProblems(diag); !slices.Equal(got, want) {
		t.Errorf("problems %q", got)
	}
}

func FuzzStap(f *testing.F) {
	data, err := os.ReadFile("testdata/others/stap-synthetic.txt")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(" 0x1 : a+1/2 [k]\n 0x2 : 0x2\n\t7\n"))
	f.Fuzz(func(t *testing.T, in []byte) { otherFuzzCheck(t, StapFormat(), in) })
}
