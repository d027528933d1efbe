package workingset

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/stream"
)

// waitRead matches the 10046 WAIT lines of block reads: the db file reads
// name file#=, block#=, blocks=; the direct path reads file number=,
// first dba=, block cnt=.
var waitRead = regexp.MustCompile(`^WAIT #\d+: nam='(db file sequential read|db file scattered read|direct path read|direct path read temp)' ela= *(\d+) (?:file#=(\d+) block#=(\d+) blocks=(\d+)|file number=(\d+) first dba=(\d+) block cnt=(\d+))`)

// traceReads reads a trace's block reads with waitRead: a test-only reader,
// independent of source/oracle10046, whose integration is checked later
// against the same numbers.
func traceReads(t *testing.T, path string) []stream.BlockRead {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var reads []stream.BlockRead
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		m := waitRead.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		addr := m[3:6]
		if m[3] == "" {
			addr = m[6:9]
		}
		n := func(s string) uint64 {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				t.Fatalf("%s:%d: %v", path, line, err)
			}
			return v
		}
		reads = append(reads, stream.BlockRead{File: uint32(n(addr[0])), Block: n(addr[1]), Blocks: uint32(n(addr[2])),
			Micros: int64(n(m[2])), Event: m[1]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return reads
}

// awkCount is the independent count: awk expands every read's range into
// file:block pairs and counts them and the distinct ones, in all and per
// file ("total CALLS READS DISTINCT" and "file F DISTINCT" lines).
const awkCount = `
/^WAIT #[0-9]+: nam='(db file sequential read|db file scattered read|direct path read|direct path read temp)'/ {
	if (match($0, /file#=[0-9]+/)) {
		f = substr($0, RSTART + 6, RLENGTH - 6)
		match($0, /block#=[0-9]+/); b = substr($0, RSTART + 7, RLENGTH - 7)
		match($0, /blocks=[0-9]+/); n = substr($0, RSTART + 7, RLENGTH - 7)
	} else if (match($0, /file number=[0-9]+/)) {
		f = substr($0, RSTART + 12, RLENGTH - 12)
		match($0, /first dba=[0-9]+/); b = substr($0, RSTART + 10, RLENGTH - 10)
		match($0, /block cnt=[0-9]+/); n = substr($0, RSTART + 10, RLENGTH - 10)
	} else next
	calls++
	for (i = 0; i < n + 0; i++) {
		reads++
		k = f ":" (b + i)
		if (!(k in seen)) { seen[k] = 1; distinct++; perfile[f]++ }
	}
}
END {
	printf "total %d %d %d\n", calls, reads, distinct
	for (f in perfile) printf "file %s %d\n", f, perfile[f]
}`

// TestRealTracesAgainstAwk: on every real 10046 trace, the counter's reads,
// read calls and distinct blocks (in all and per file) equal awk's.
func TestRealTracesAgainstAwk(t *testing.T) {
	awk, err := exec.LookPath("awk")
	if err != nil {
		testenv.SkipOrFail(t, "awk is not installed: the independent count needs it")
	}
	rels := testenv.DataFiles(t, "trc10046/*/*.trc")
	if len(rels) == 0 {
		t.Fatal("no 10046 traces in the test data")
	}
	var withReads int
	for _, rel := range rels {
		t.Run(rel, func(t *testing.T) {
			path := testenv.DataFile(t, rel)
			out, err := exec.Command(awk, awkCount, path).Output()
			if err != nil {
				t.Fatalf("awk: %v", err)
			}
			want := strings.Split(strings.TrimSpace(string(out)), "\n")
			c := NewCounter(Options{})
			for _, r := range traceReads(t, path) {
				c.Add(r)
			}
			res := c.Result(0)
			got := []string{fmt.Sprintf("total %d %d %d", res.Total.ReadCalls, res.Total.Reads, res.Total.DistinctBlocks)}
			for _, f := range res.Files {
				got = append(got, fmt.Sprintf("file %d %d", f.File, f.DistinctBlocks))
			}
			// awk lists files in its hash order: compare as sets.
			if strings.Join(sortedCopy(got), "\n") != strings.Join(sortedCopy(want), "\n") {
				t.Errorf("counter:\n%s\nawk:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if !res.Exact || res.Skipped != 0 {
				t.Errorf("exact %v, skipped %d", res.Exact, res.Skipped)
			}
			if res.Total.Reads > 0 {
				withReads++
			}
			t.Logf("%s", got[0])
		})
	}
	if withReads == 0 {
		t.Error("no trace had block reads: the comparison compared nothing")
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
