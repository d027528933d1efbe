package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// workingSetJSON mirrors the parts of the working-set JSON the tests read.
type workingSetJSON struct {
	Exact   bool  `json:"exact"`
	SplitUS int64 `json:"split_us"`
	Total   struct {
		Reads          int64 `json:"reads"`
		ReadCalls      int64 `json:"read_calls"`
		DistinctBlocks int64 `json:"distinct_blocks"`
	} `json:"total"`
	Files []struct {
		File           uint32 `json:"file"`
		DistinctBlocks int64  `json:"distinct_blocks"`
	} `json:"files"`
	Events []struct {
		Name  string `json:"name"`
		Reads int64  `json:"reads"`
	} `json:"events"`
	Classes []struct {
		Name string `json:"name"`
	} `json:"classes"`
}

func workingSet(t *testing.T, args ...string) workingSetJSON {
	t.Helper()
	r := run(t, "", append([]string{"workingset", "--format", "json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("workingset %v: exit %d: %s", args, r.code, r.stderr)
	}
	var w workingSetJSON
	if err := json.Unmarshal([]byte(r.stdout), &w); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestWorkingSetCommand: the command's figures on real traces equal the
// independent awk counts of analysis/workingset's and source/oracle10046's
// tests (DBM11106: 1342 read calls, 2734 block reads, 2710 distinct blocks).
func TestWorkingSetCommand(t *testing.T) {
	repo := testenv.DataFile(t, "trc10046/jkstill-trace-combine_12.2.0.1/main_trcsess_output.trc")
	if w := workingSet(t, repo); w.Total.ReadCalls != 8 || w.Total.Reads != 8 || w.Total.DistinctBlocks != 8 || !w.Exact {
		t.Errorf("main_trcsess_output: %+v", w.Total)
	}
	w := workingSet(t, repo, "--split", "1ms")
	if w.SplitUS != 1024 || len(w.Classes) != 2 {
		t.Errorf("--split 1ms: split %d µs, classes %+v", w.SplitUS, w.Classes)
	}

	t.Run("DBM11106", func(t *testing.T) {
		dbm := testenv.DataFile(t, "trc10046/apress-top1e_10.2.0.3_11.1.0.6/DBM11106_ora_6334.trc")
		w := workingSet(t, dbm)
		if w.Total.ReadCalls != 1342 || w.Total.Reads != 2734 || w.Total.DistinctBlocks != 2710 || w.SplitUS != 16 {
			t.Errorf("DBM11106: %+v, split %d", w.Total, w.SplitUS)
		}
		files := map[uint32]int64{}
		for _, f := range w.Files {
			files[f.File] = f.DistinctBlocks
		}
		if files[1] != 143 || files[3] != 3 || files[4] != 1647 || files[201] != 917 {
			t.Errorf("DBM11106 files: %v", files)
		}
		// --event keeps one event's reads; a small exact limit estimates.
		if w := workingSet(t, dbm, "--event", "db file sequential read", "--no-classes"); w.Total.Reads != 176 || len(w.Events) != 1 || len(w.Classes) != 0 {
			t.Errorf("--event: %+v %+v", w.Total, w.Events)
		}
		if w := workingSet(t, dbm, "--exact-limit", "100"); w.Exact || w.Total.DistinctBlocks < 2710*97/100 || w.Total.DistinctBlocks > 2710*103/100 {
			t.Errorf("estimated: exact %v, distinct %d (2710 ± 3 %%)", w.Exact, w.Total.DistinctBlocks)
		}
	})

	dir := t.TempDir()
	for _, ext := range []string{".json", ".csv", ".txt"} {
		out := filepath.Join(dir, "ws"+ext)
		if r := run(t, "", "workingset", repo, "-o", out); r.code != 0 {
			t.Fatalf("-o %s: exit %d: %s", out, r.code, r.stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{".json": `"distinct_blocks": 8`, ".csv": "total,all", ".txt": "Block-read working set"}[ext]
		if !strings.Contains(string(b), want) {
			t.Errorf("-o %s lacks %q:\n%s", out, want, b)
		}
	}

	// No block read, usage errors.
	none := testenv.DataFile(t, "trc10046/priitp2-trctools_19.x/lobs.trc")
	if r := run(t, "", "workingset", none); r.code != 1 || !strings.Contains(r.stderr, "lobs.trc: no block read") {
		t.Errorf("no block read: exit %d: %s", r.code, r.stderr)
	}
	for _, args := range [][]string{{"workingset"}, {"workingset", repo, "--format", "html"}, {"workingset", repo, "--precision", "30"}, {"workingset", repo, "-o", "ws.html"}} {
		if r := run(t, "", args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, r.code, r.stderr)
		}
	}
}

// TestWorkingSetDocExample: every line docs/workingset.md shows of its
// example on a repository trace is in the command's output.
func TestWorkingSetDocExample(t *testing.T) { checkDocExamples(t, "workingset.md", 1) }
