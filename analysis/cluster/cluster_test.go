package cluster

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/latscope/latscope/input"
)

func TestWaitClass(t *testing.T) {
	for event, want := range map[string]string{
		"db file sequential read":                 "User I/O",
		"log file sync":                           "Commit",
		"SQL*Net message from client":             idleClass,
		"SQL*Net message to client":               "Network",
		"gc cr block 2-way":                       "Cluster",
		"latch: cache buffers chains":             "Concurrency",
		"latch free":                              "Other",
		"cursor: pin S wait on X":                 "Concurrency",
		"enq: TX - row lock contention":           "Application",
		"log file switch (checkpoint incomplete)": "Configuration",
		"Allocate CGA memory from OS":             "Other",
	} {
		if got := WaitClass(event); got != want {
			t.Errorf("WaitClass(%q) = %q, want %q", event, got, want)
		}
	}
}

func line(xs ...float64) [][]float64 {
	points := make([][]float64, len(xs))
	for i, x := range xs {
		points[i] = []float64{x}
	}
	return points
}

// TestLinkByHand: merges on five points of a line, worked out by hand.
func TestLinkByHand(t *testing.T) {
	points := line(0, 1, 3, 7, 15)
	for _, tc := range []struct {
		method  Linkage
		heights []float64
	}{
		{Single, []float64{1, 2, 4, 8}},
		// {0,1}: 1; {0,1}–3: (3+2)/2 = 2.5; {0,1,3}–7: (7+6+4)/3; all–15: (15+14+12+8)/4.
		{Average, []float64{1, 2.5, 17.0 / 3, 49.0 / 4}},
		// Ward: sqrt(2·n_a·n_b/(n_a+n_b))·|centroid distance|.
		{Ward, []float64{1, math.Sqrt(2 * 2 / 3.0 * 2.5 * 2.5), math.Sqrt(2 * 3 / 4.0 * (7 - 4.0/3) * (7 - 4.0/3)), math.Sqrt(2 * 4 / 5.0 * (15 - 11.0/4) * (15 - 11.0/4))}},
	} {
		merges, err := Link(points, tc.method)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range merges {
			if math.Abs(m.Height-tc.heights[i]) > 1e-12 {
				t.Errorf("%s: merge %d at %g, want %g", tc.method, i, m.Height, tc.heights[i])
			}
		}
		want := []Merge{{0, 1, 0, 2}, {2, 5, 0, 3}, {3, 6, 0, 4}, {4, 7, 0, 5}}
		for i := range merges {
			merges[i].Height = 0
		}
		if !slices.Equal(merges, want) {
			t.Errorf("%s: merges %v, want %v", tc.method, merges, want)
		}
	}
}

func TestCut(t *testing.T) {
	merges, _ := Link(line(0, 1, 3, 7, 15), Single)
	for k, want := range map[int][]int{1: {0, 0, 0, 0, 0}, 2: {0, 0, 0, 0, 1}, 3: {0, 0, 0, 1, 2}, 5: {0, 1, 2, 3, 4}, 9: {0, 1, 2, 3, 4}} {
		if got := Cut(merges, k); !slices.Equal(got, want) {
			t.Errorf("k=%d: %v, want %v", k, got, want)
		}
	}
	// Equal gaps tie every merge: no cut leaves 2 or 3 clusters, as
	// SciPy's maxclust gives one.
	tied, _ := Link(line(0, 1, 2, 3), Single)
	if got := Cut(tied, 3); !slices.Equal(got, []int{0, 0, 0, 0}) {
		t.Errorf("tied: %v, want one cluster", got)
	}
	if k, _ := SuggestK(line(0, 1, 3, 7, 15), merges, 10, SuggestGap); k != 2 {
		t.Errorf("suggested %d clusters, want 2 (gap 8 − 4)", k)
	}
	// Silhouettes of {0, 1, 3, 7} {15}: a = 11/3, 3, 3, 17/3 to the
	// others, b = 15, 14, 12, 8 to 15; the lone 15 counts 0.
	want := ((15-11.0/3)/15 + (14-3.0)/14 + (12-3.0)/12 + (8-17.0/3)/8) / 5
	if s, ok := Silhouette(line(0, 1, 3, 7, 15), Cut(merges, 2)); !ok || math.Abs(s-want) > 1e-12 {
		t.Errorf("silhouette %g, want %g", s, want)
	}
	if _, ok := Silhouette(line(0, 1, 3), []int{0, 0, 0}); ok {
		t.Error("silhouette of one cluster")
	}
	if k, c := SuggestK(line(0, 1, 3, 7, 15), merges, 10, SuggestSilhouette); k != 2 || len(c) != 3 || c[0].Silhouette == nil {
		t.Errorf("suggested by silhouette %d, candidates %+v", k, c)
	}
}

func TestScaler(t *testing.T) {
	v := [][]float64{{1, 10, 5}, {3, 30, 5}}
	z := NewScaler(v, ScaleZ).Apply(v)
	r := NewScaler(v, ScaleRange).Apply(v)
	n := NewScaler(v, ScaleNone).Apply(v)
	l := NewScaler([][]float64{{0}, {math.E - 1}}, ScaleLog).Apply([][]float64{{0}, {math.E - 1}})
	if math.Abs(l[0][0]+1) > 1e-12 || math.Abs(l[1][0]-1) > 1e-12 {
		t.Errorf("log: %v", l)
	}
	if !slices.Equal(z[0], []float64{-1, -1, 0}) || !slices.Equal(r[1], []float64{1, 1, 0}) || !slices.Equal(n[1], v[1]) {
		t.Errorf("z %v, range %v, none %v", z, r, n)
	}
}

func TestProject(t *testing.T) {
	// Points on y = 2x, plus a little off-line noise along (−2, 1).
	var pts [][]float64
	for i, off := range []float64{0.1, -0.2, 0, 0.2, -0.1} { // uncorrelated with x
		x := float64(i)
		pts = append(pts, []float64{x - 2*off, 2*x + off})
	}
	p := Project(pts)
	c := p.Components[0]
	if math.Abs(c[0]-1/math.Sqrt(5)) > 1e-9 || math.Abs(c[1]-2/math.Sqrt(5)) > 1e-9 || p.Explained[0] < 0.99 || math.Abs(p.Explained[0]+p.Explained[1]-1) > 1e-12 {
		t.Errorf("projection %+v", p)
	}
	values, _ := symmetricEigen([][]float64{{2, 1, 0}, {1, 2, 0}, {0, 0, 5}})
	if want := []float64{5, 3, 1}; math.Abs(values[0]-want[0])+math.Abs(values[1]-want[1])+math.Abs(values[2]-want[2]) > 1e-12 {
		t.Errorf("eigenvalues %v, want %v", values, want)
	}
}

// pgExport is a pg_stat_statements export as psql's \copy writes it
// (PostgreSQL 15's columns, some left out), with bad rows.
const pgExport = `userid,dbid,toplevel,queryid,query,plans,calls,total_exec_time,rows,shared_blks_hit,shared_blks_read,temp_blks_read,temp_blks_written,blk_read_time,blk_write_time
10,5,t,-4211,"select a
from t where id = $1",0,100,50.5,100,400,20,0,0,10.25,0
10,5,t,-4211,"select a
from t where id = $1",0,100,49.5,100,380,40,0,0,9.75,0
10,5,t,77,select pg_sleep($1),0,0,0,0,0,0,0,0,0,0
10,5,t,78,select 1,0,x,1,1,0,0,0,0,0,0
10,5,t,79,select 2,0,3,1,1,0
10,5,t,80,sort,0,2,300,1,10,100,64,64,40,0
`

func TestReadPgStatStatements(t *testing.T) {
	var errs bytes.Buffer
	diag := input.NewDiagnostics(&errs, 10)
	ws, stats, err := ReadCSV("pgss.csv", strings.NewReader(pgExport), diag)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Kind != KindPgStat || stats.Rows != 3 || stats.Malformed != 2 || stats.Unexecuted != 1 || len(ws) != 2 {
		t.Fatalf("stats %+v, %d workloads", stats, len(ws))
	}
	// The two rows of queryid -4211 (two users) are one statement.
	w := ws[0]
	if w.Key != "-4211" || w.Executions != 200 || w.PerExecution(FeatureExec) != 0.5 || w.PerExecution(FeatureLogicalReads) != 4.2 ||
		w.PerExecution(FeaturePhysicalReads) != 0.3 || w.PerExecution(FeatureUserIO) != 0.1 || !strings.Contains(w.Text, "\nfrom t") {
		t.Errorf("statement %+v", w)
	}
	if ws[1].PerExecution(FeatureTempBlocks) != 64 {
		t.Errorf("temp blocks per execution %g, want 64", ws[1].PerExecution(FeatureTempBlocks))
	}
	for _, want := range []string{`pgss.csv:7: calls "x": not a count`, "pgss.csv:8: 10 fields, want at least 15"} {
		if !strings.Contains(errs.String(), want) {
			t.Errorf("diagnostics lack %q:\n%s", want, errs.String())
		}
	}
}

// digestExport is events_statements_summary_by_digest as mysql -B prints
// it (tab-separated; MySQL 8.0.28's columns, some left out).
const digestExport = "SCHEMA_NAME\tDIGEST\tDIGEST_TEXT\tCOUNT_STAR\tSUM_TIMER_WAIT\tSUM_LOCK_TIME\tSUM_CPU_TIME\tSUM_ROWS_SENT\tSUM_ROWS_EXAMINED\tSUM_CREATED_TMP_DISK_TABLES\tSUM_SORT_ROWS\n" +
	"shop\tab12\tSELECT * FROM `t` WHERE `id` = ?\t1000\t2000000000000\t5000000000\t1000000000000\t1000\t1000\t0\t0\n" +
	"NULL\tNULL\tNULL\t5\t5000000000\t0\tNULL\t0\t500\t1\t20\n" +
	"shop\tcd34\tSELECT ...\t1\t-3\t0\t0\t0\t0\t0\t0\n"

func TestReadDigests(t *testing.T) {
	var errs bytes.Buffer
	ws, stats, err := ReadCSV("digests.tsv", strings.NewReader(digestExport), input.NewDiagnostics(&errs, 10))
	if err != nil {
		t.Fatal(err)
	}
	if stats.Kind != KindPerfSchema || stats.Rows != 2 || stats.Malformed != 1 || len(ws) != 2 {
		t.Fatalf("stats %+v, %d workloads", stats, len(ws))
	}
	w := ws[0]
	if w.Key != "shop/ab12" || w.PerExecution(FeatureExec) != 2 || w.PerExecution(FeatureLock) != 0.005 || w.PerExecution(FeatureCPU) != 1 || w.PerExecution(FeatureRowsExamined) != 1 {
		t.Errorf("statement %+v", w)
	}
	if ws[1].Key != "NULL" || ws[1].PerExecution(FeatureSortRows) != 4 || ws[1].PerExecution(FeatureCPU) != 0 {
		t.Errorf("the NULL digest: %+v", ws[1])
	}
	if !strings.Contains(errs.String(), `digests.tsv:4: sum_timer_wait "-3": not a non-negative number`) {
		t.Errorf("diagnostics: %s", errs.String())
	}
}

func TestReadCSVErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":                                "x.csv: empty: no header",
		"a,b,c\n1,2,3\n":                  "x.csv:1: the header names neither pg_stat_statements",
		"DIGEST,COUNT_STAR\nab,1\n":       "x.csv:1: performance_schema export without column sum_timer_wait",
		"queryid,calls,total_time\n1,1,1": "x.csv:1: pg_stat_statements export without column shared_blks_hit, shared_blks_read",
	} {
		_, _, err := ReadCSV("x.csv", strings.NewReader(in), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

func FuzzReadCSV(f *testing.F) {
	f.Add(pgExport)
	f.Add(digestExport)
	f.Add("queryid,calls,total_exec_time,shared_blks_hit,shared_blks_read\n1,\"2,3,4\n")
	f.Add("queryid,calls,total_exec_time,shared_blks_hit,shared_blks_read\n1,1e308,1e308,1e308,NaN\n")
	f.Add("queryid,calls,total_exec_time,shared_blks_hit,shared_blks_read\n1,1,1e308,0,0\n1,1,1e308,0,0\n2,1,Inf,0,0\n")
	f.Fuzz(func(t *testing.T, in string) {
		ws, stats, err := ReadCSV("fuzz.csv", strings.NewReader(in), input.NewDiagnostics(nil, 0))
		if err != nil {
			return
		}
		if lines := strings.Count(in, "\n") + 1; stats.Rows+stats.Malformed+stats.Unexecuted > lines {
			t.Fatalf("%d rows counted in %d lines", stats.Rows+stats.Malformed+stats.Unexecuted, lines)
		}
		for _, w := range ws {
			if w.Executions <= 0 {
				t.Fatalf("statement %s with %d executions", w.Key, w.Executions)
			}
			for f, v := range w.Totals {
				if v < 0 || math.IsNaN(v) {
					t.Fatalf("statement %s: %s = %g", w.Key, f, v)
				}
			}
		}
		if len(ws) > 0 {
			// Too large demands are an error, nothing else.
			if _, err := Analyze(NewDataset(ws), Options{Linkage: Ward, Scaling: ScaleZ}); err != nil && !strings.Contains(err.Error(), "too large") {
				t.Fatal(err)
			}
		}
	})
}

func TestAnalyzeMixture(t *testing.T) {
	centres := [][]float64{{1, 100}, {20, 100}, {1, 5000}}
	points, groups := mixture(3, centres, 20, 0.02)
	var ws []*Workload
	for i, p := range points {
		// Demands scale with the centre: 2 % spread in each feature.
		c := centres[groups[i]]
		ws = append(ws, &Workload{Key: string(rune('a'+i%26)) + strings.Repeat("x", i/26), Executions: 10, Source: "synthetic",
			Totals: map[string]float64{FeatureCPU: 10 * c[0] * (1 + p[0] - c[0]), FeatureLogicalReads: 10 * c[1] * (1 + p[1] - c[1])}})
	}
	r, err := Analyze(NewDataset(ws), Options{Linkage: Average, Scaling: ScaleZ})
	if err != nil {
		t.Fatal(err)
	}
	if r.K != 3 || !r.KSuggested || len(r.Clusters) != 3 {
		t.Fatalf("k %d (suggested %v), %d clusters", r.K, r.KSuggested, len(r.Clusters))
	}
	for _, c := range r.Clusters {
		g := groups[c.Members[0]]
		for _, m := range c.Members {
			if groups[m] != g {
				t.Errorf("cluster %d mixes groups %d and %d", c.ID, g, groups[m])
			}
		}
		for j := range c.Centroid {
			if want := centres[g][j]; math.Abs(c.Centroid[j]-want) > 0.02*want {
				t.Errorf("cluster %d centroid %v, group centre %v", c.ID, c.Centroid, centres[g])
			}
		}
		if c.Executions != int64(10*len(c.Members)) || math.Abs(c.Totals[0]-10*float64(len(c.Members))*c.Centroid[0]) > 1e-9*c.Totals[0] {
			t.Errorf("cluster %d totals %v over %d executions", c.ID, c.Totals, c.Executions)
		}
	}
	for _, format := range []string{FormatTable, FormatCSV, FormatJSON, FormatHTML} {
		var b bytes.Buffer
		if err := Write(&b, r, format); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		switch format {
		case FormatJSON:
			var back Result
			if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Members) != 60 {
				t.Errorf("json: %v, %d members", err, len(back.Members))
			}
		case FormatCSV:
			if n := strings.Count(b.String(), "\n"); n != 61 {
				t.Errorf("csv: %d lines, want 61", n)
			}
		case FormatHTML:
			if strings.Count(b.String(), "<circle") != 60 || strings.Count(b.String(), "<path d=\"M") < 59 {
				t.Errorf("html: %d points, %d paths", strings.Count(b.String(), "<circle"), strings.Count(b.String(), "<path"))
			}
		}
	}
}

// BenchmarkLink clusters 2000 statements' 8 demands: the size of a
// pg_stat_statements at its default pg_stat_statements.max of 5000, halved.
func BenchmarkLink(b *testing.B) {
	centres := make([][]float64, 10)
	for i := range centres {
		centres[i] = make([]float64, 8)
		for j := range centres[i] {
			centres[i][j] = float64((i*7+j*3)%11) * 3
		}
	}
	points, _ := mixture(5, centres, 200, 1)
	for _, method := range []Linkage{Single, Average, Ward} {
		b.Run(string(method), func(b *testing.B) {
			for b.Loop() {
				if _, err := Link(points, method); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestAnalyzeSmall: one statement, two, and statements without any
// demand cluster and write in every format.
func TestAnalyzeSmall(t *testing.T) {
	w := func(key string, cpu float64) *Workload {
		return &Workload{Key: key, Executions: 1, Totals: map[string]float64{FeatureCPU: cpu}}
	}
	for _, ws := range [][]*Workload{{w("a", 1)}, {w("a", 1), w("b", 2)}, {w("a", 0), w("b", 0), w("c", 0)}} {
		for _, method := range []Linkage{Single, Average, Ward} {
			r, err := Analyze(NewDataset(ws), Options{Linkage: method, Scaling: ScaleZ})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Members) != len(ws) || len(r.Clusters) == 0 || len(r.Clusters) > len(ws) {
				t.Errorf("%d statements, %s: %d clusters", len(ws), method, len(r.Clusters))
			}
			for _, format := range []string{FormatTable, FormatCSV, FormatJSON, FormatHTML} {
				if err := Write(&bytes.Buffer{}, r, format); err != nil {
					t.Errorf("%s: %v", format, err)
				}
			}
		}
	}
	if _, err := Analyze(NewDataset(nil), Options{Linkage: Single}); err == nil {
		t.Error("no statement: no error")
	}
	if err := Write(&bytes.Buffer{}, &Result{}, "xml"); err == nil {
		t.Error("format xml: no error")
	}
}

// TestDendrogramTruncated: above 60 statements the dendrogram draws the
// last 59 merges, its leaves holding every statement once.
func TestDendrogramTruncated(t *testing.T) {
	points, _ := mixture(9, [][]float64{{0, 0}, {5, 5}}, 50, 1)
	var ws []*Workload
	for i, p := range points {
		ws = append(ws, &Workload{Key: string(rune('A' + i%26)), Executions: 1, Totals: map[string]float64{FeatureCPU: p[0] + 10, FeatureLogicalReads: p[1] + 10}})
	}
	r, err := Analyze(NewDataset(ws), Options{Linkage: Ward, Scaling: ScaleZ})
	if err != nil {
		t.Fatal(err)
	}
	d := newDendrogram(r)
	total := 0
	for _, leaf := range d.leaves {
		total += d.size(leaf)
	}
	if len(d.leaves) != dendrogramLeaves || total != 100 {
		t.Errorf("%d leaves holding %d statements, want %d holding 100", len(d.leaves), total, dendrogramLeaves)
	}
	var b bytes.Buffer
	if err := Write(&b, r, FormatHTML); err != nil {
		t.Fatal(err)
	}
	if paths := strings.Count(b.String(), "<path d=\"M") - len(r.Clusters); paths != dendrogramLeaves-1 {
		t.Errorf("%d merges drawn, want %d", paths, dendrogramLeaves-1)
	}
}
