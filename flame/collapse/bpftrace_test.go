package collapse

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// otherBpftraceCounts sums every "]: N" of a bpftrace output
// independently: entries, total, and the samples of empty stacks "@[]: N".
func otherBpftraceCounts(data []byte) (entries int, total, empty int64) {
	for _, m := range regexp.MustCompile(`(?m)^(.*)\]: (\d+)$`).FindAllSubmatch(data, -1) {
		v, _ := strconv.ParseInt(string(m[2]), 10, 64)
		entries++
		total += v
		if regexp.MustCompile(`^@\w*\[$`).Match(m[1]) {
			empty += v
		}
	}
	return entries, total, empty
}

// TestBpftraceKstack: real @[kstack] output from this machine; frames keep
// their offsets as stackcollapse-bpftrace.pl keeps them.
func TestBpftraceKstack(t *testing.T) {
	data := otherRead(t, "bpftrace-kstack.txt")
	p, diag, folded := otherCollapse(t, BpftraceFormat(), "bpftrace-kstack.txt", data)
	entries, total, empty := otherBpftraceCounts(data)
	if entries != 108 || total != 333 || empty != 99 {
		t.Fatalf("independent count: %d entries, %d samples, %d empty", entries, total, empty)
	}
	// 107 stacks (all distinct: offsets differ), the empty one skipped.
	if p.Len() != 107 || p.Total() != total-empty || len(otherProblems(diag)) != 0 {
		t.Errorf("%d stacks, total %d, %v", p.Len(), p.Total(), otherProblems(diag))
	}
	if w := diag.Warnings(); len(w) != 1 || !strings.Contains(w[0], "99 samples with an empty stack") {
		t.Errorf("warnings %q", w)
	}
	want := "entry_SYSCALL_64_after_hwframe+118;do_syscall_64+113;__x64_sys_pread64+163;vfs_read+570;" +
		"shmem_file_read_iter+124;shmem_get_folio_gfp+381;filemap_get_entry+105;xas_load+83 1\n"
	if !strings.Contains(folded, want) {
		t.Errorf("first stack missing")
	}
}

// TestBpftraceKeys: real output with "@[comm, kstack]" (key first) and
// "@u[ustack, comm]" (key last, empty ustacks as "@u[, comm]: N"): the
// comm becomes the root frame either way.
func TestBpftraceKeys(t *testing.T) {
	data := otherRead(t, "bpftrace-comm-kstack-ustack.txt")
	p, diag, folded := otherCollapse(t, BpftraceFormat(), "keys", data)
	entries, total, _ := otherBpftraceCounts(data)
	if entries != 69 || total != 296 {
		t.Fatalf("independent count: %d entries, %d samples", entries, total)
	}
	if p.Total() != total || len(otherProblems(diag)) != 0 || len(diag.Warnings()) != 0 {
		t.Errorf("total %d, %v %v", p.Total(), otherProblems(diag), diag.Warnings())
	}
	for _, want := range []string{
		"\nkworker/0:1H 1\n",
		"\nlatscope;0x491a21;0x8fe9c8;0x8f64ab;0x8dce0c;0x4f0233;0x48e06e;0x4937ce;0x7f3efe2ddb7c 1\n",
		"\niotest.test;entry_SYSCALL_64_after_hwframe+118;do_syscall_64+113;__x64_sys_pread64+163;",
	} {
		if !strings.Contains("\n"+folded, want) {
			t.Errorf("missing %q", want)
		}
	}
}

func TestBpftraceBadInput(t *testing.T) {
	in := "Attaching 1 probe...\n@[\n    a+1\n    b+2\n]: 3\n@[\n    c+1\n@[\n    d+1\n]: 99999999999999999999\n" +
		"@x[bash]: 4\n@[\n    e+1\n"
	_, diag, folded := otherCollapse(t, BpftraceFormat(), "bad", []byte(in))
	if folded != "b+2;a+1 3\n" {
		t.Errorf("got %q", folded)
	}
	want := []string{"6: stack without its closing \"]: N\" line: skipped",
		"10: count 99999999999999999999 too large: stack skipped",
		"12: stack without its closing \"]: N\" line at the end of the input (truncated?): skipped"}
	if got := otherProblems(diag); !slices.Equal(got, want) {
		t.Errorf("problems %q", got)
	}
}

// TestBpftraceLive runs bpftrace here (root and bpftrace needed).
func TestBpftraceLive(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bpftrace for a second")
	}
	bin, err := exec.LookPath("bpftrace")
	if err != nil || os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "bpftrace and root needed")
	}
	out, err := exec.Command(bin, "-e", "profile:hz:99 { @[kstack] = count(); } interval:ms:800 { exit(); }").Output()
	if err != nil {
		testenv.SkipOrFail(t, "bpftrace cannot run here: %v", err)
	}
	if f, _ := Detect(OtherFormats(), out); f.Name != "bpftrace" {
		t.Errorf("live output detected as %q", f.Name)
	}
	p, diag, _ := otherCollapse(t, BpftraceFormat(), "live", out)
	_, total, empty := otherBpftraceCounts(out)
	if total == 0 || p.Total() != total-empty || len(otherProblems(diag)) != 0 {
		t.Errorf("bpftrace total %d (empty %d), collapsed %d, %v", total, empty, p.Total(), otherProblems(diag))
	}
}

func FuzzBpftrace(f *testing.F) {
	data, err := os.ReadFile("testdata/others/bpftrace-comm-kstack-ustack.txt")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data[:3000])
	f.Add([]byte("@[\n  a\n,\n  b\n, c]: 2\n@[]: 3\n@[x, \n y\n]: 1\n"))
	f.Fuzz(func(t *testing.T, in []byte) { otherFuzzCheck(t, BpftraceFormat(), in) })
}
