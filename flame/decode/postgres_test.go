package decode

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/flame/collapse"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/dbtest"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// TestPostgresPlanFromRealPerf profiles a real PostgreSQL backend running
// a hash join, a sort and a filtered sequential scan, and checks that the
// plan view shows the nodes the exported functions of a stripped
// distribution build reveal.
func TestPostgresPlanFromRealPerf(t *testing.T) {
	if testing.Short() {
		t.Skip("profiles a live server for 3 s")
	}
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "perf record -p on a server running as another user needs root")
	}
	if _, err := exec.LookPath("perf"); err != nil {
		testenv.SkipOrFail(t, "perf not found")
	}
	pg := dbtest.StartPostgres(t, dbtest.PostgresOptions{Settings: map[string]string{"max_parallel_workers_per_gather": "0"}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn, err := pgx.Connect(ctx, pg.URI)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, q := range []string{
		"create table a as select g id, g % 1000 k, md5(g::text) t from generate_series(1, 200000) g",
		"create table b as select g id from generate_series(1, 100000) g",
		"analyze",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var pid int
	if err := conn.QueryRow(ctx, "select pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	queries := []string{
		"select count(*) from a join b on a.id = b.id where a.t like '%ab%'", // Hash Join, Hash, Seq Scan
		"select id from a order by t desc limit 5",                           // Limit, Sort, Seq Scan
		"select count(*) from a where t like '%ff%'",                         // Aggregate, Seq Scan + filter
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ctx.Err() == nil; i++ {
			var n int64
			_ = conn.QueryRow(ctx, queries[i%len(queries)]).Scan(&n)
		}
	}()
	dir := t.TempDir()
	data := filepath.Join(dir, "perf.data")
	rec := exec.Command("perf", "record", "-F", "999", "-e", "cpu-clock", "-g", "--call-graph", "dwarf", "-p", strconv.Itoa(pid), "-o", data, "--", "sleep", "3")
	if out, err := rec.CombinedOutput(); err != nil {
		cancel()
		<-done
		testenv.SkipOrFail(t, "perf record cannot record here: %v\n%s", err, out)
	}
	cancel()
	<-done
	script, err := exec.Command("perf", "script", "-i", data).Output()
	if err != nil {
		t.Fatalf("perf script: %v", err)
	}
	p := foldPerfScript(t, script)
	// Samples are weighted by perf's period; shares are what counts. A
	// loaded machine (CI runs packages in parallel) gets fewer samples.
	if n := bytes.Count(script, []byte("cpu-clock")); n < 300 {
		t.Fatalf("only %d samples in 3 s at 999 Hz", n)
	}
	plan := Apply(p, Options{DB: Postgres, View: ViewPlan, Marked: true})
	share := map[string]int64{}
	for _, n := range plan.Tree(false).Children {
		walk(n, share)
	}
	t.Logf("%d weighted samples; plan view %d, %d stacks", p.Total(), plan.Total(), plan.Len())
	var pb bytes.Buffer
	_ = plan.WriteFolded(&pb)
	t.Logf("plan:\n%s", pb.String())
	for node, n := range share {
		t.Logf("  %-40s %5.1f%%", node, 100*float64(n)/float64(p.Total()))
	}
	for _, node := range []string{"Executor (standard_ExecutorRun)", "Seq Scan (ExecScan)", "Hash Join ([postgres])", "Hash (MultiExecHash)", "Sort ([postgres])"} {
		if pct := 100 * float64(share[node]) / float64(p.Total()); pct < 2 {
			t.Errorf("%s: %.1f%% of samples, want at least 2%%", node, pct)
		}
	}
	// Truncated dwarf stacks (8 KB of stack copied per sample) can lose
	// the evidence below a scan: a few samples stay unidentified.
	if pct := 100 * float64(share["Scan (ExecScan)"]) / float64(p.Total()); pct > 2 {
		t.Errorf("%.1f%% of samples in an unidentified scan", pct)
	}
}

// walk sums Total per frame name (each frame counted once per path).
func walk(n *flame.Node, share map[string]int64) {
	share[n.Name] += n.Total
	for _, c := range n.Children {
		walk(c, share)
	}
}

// foldPerfScript collapses perf script text with latscope's perf
// collapser, marking frames of the postgres binary as `latscope flame --db
// postgres` does.
func foldPerfScript(t *testing.T, script []byte) *flame.Profile {
	t.Helper()
	p := flame.New()
	in := collapse.Input{Name: "perf script", Reader: bytes.NewReader(script), Diag: input.NewDiagnostics(nil, 0)}
	if err := collapse.PerfFormat().Collapse(in, collapse.Options{FrameHook: MarkFrame(Postgres)}, p); err != nil {
		t.Fatal(err)
	}
	return p
}
