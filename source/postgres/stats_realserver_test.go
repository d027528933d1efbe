package postgres

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/dbtest"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// pgStatIOStandIn is a SYNTHETIC stand-in for pg_stat_io on PostgreSQL 15
// (which has no such view): a table in the public schema with the view's
// PostgreSQL 16/17 columns, so that ioQuery, the driver's scanning of its
// NULLs and the grouping run exactly as on 16+. Its rows are made up.
const pgStatIOStandIn = `create table public.pg_stat_io (backend_type text, object text, context text,
  reads bigint, read_time float8, writes bigint, write_time float8, writebacks bigint, writeback_time float8,
  extends bigint, extend_time float8, op_bytes bigint, hits bigint, evictions bigint, reuses bigint,
  fsyncs bigint, fsync_time float8, stats_reset timestamptz);
insert into public.pg_stat_io (backend_type, object, context, reads, read_time, writes, write_time, fsyncs, fsync_time) values
  ('client backend', 'relation', 'normal', 1000, 50, 10, 1, null, null),
  ('client backend', 'relation', 'bulkread', 200, 20, 0, 0, null, null),
  ('checkpointer', 'relation', 'normal', null, null, 300, 30, 5, 50)`

// TestLiveStatisticsViewsAndLogUnderPgbench runs the live source with
// --log against a real PostgreSQL 15 (pg_stat_statements and
// pg_wait_sampling preloaded, track_io_timing on, shared_buffers small
// enough that pgbench reads blocks) while pgbench runs 400 transactions
// as a role whose statements are all logged, then resets
// pg_stat_statements.
func TestLiveStatisticsViewsAndLogUnderPgbench(t *testing.T) {
	if testing.Short() {
		t.Skip("about 8 s with a real server")
	}
	preload := []string{"pg_stat_statements"}
	bin := dbtest.PostgresBinDir(t)
	if _, err := os.Stat(filepath.Join(bin, "..", "lib", "pg_wait_sampling.so")); err == nil {
		preload = append(preload, "pg_wait_sampling")
	}
	pg := dbtest.StartPostgres(t, dbtest.PostgresOptions{Preload: preload, Settings: map[string]string{
		"track_io_timing": "on",
		"shared_buffers":  "2MB",
		"log_timezone":    "UTC",
	}})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.URI)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(q string) {
		t.Helper()
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("create extension pg_stat_statements")
	exec("create role bench superuser login")
	exec("alter role bench set log_min_duration_statement = 0") // only pgbench's statements are logged
	exec(pgStatIOStandIn)
	pg.Pgbench(t, "-i", "-s", "1", "-q")

	var out strings.Builder
	diag := input.NewDiagnostics(&out, 10)
	src, err := Probe().Open(strings.TrimPrefix(pg.URI, "postgres:"), source.Options{Interval: time.Second, DB: source.DBOptions{Log: pg.StderrLog}}, diag)
	if err != nil {
		t.Fatal(err)
	}
	src.(*liveSource).forceStatIO = true
	logStart := fileSize(t, pg.StderrLog)
	var mu sync.Mutex
	var ivs []stream.Interval
	firstWindow := make(chan struct{})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- src.Run(runCtx, func(iv stream.Interval) error {
			mu.Lock()
			defer mu.Unlock()
			if ivs = append(ivs, iv); len(ivs) == 1 {
				close(firstWindow)
			}
			return nil
		})
	}()
	<-firstWindow // the statistics baseline is taken and the log is followed from its end
	pgbenchOut := pg.Pgbench(t, "-U", "bench", "-n", "-c", "4", "-t", "100")
	exec("select count(*) from pgbench_accounts") // a sequential scan through 2 MB of buffers: block reads
	// SYNTHETIC pg_stat_io activity: 100 client reads in 5 ms, 40
	// checkpointer writes in 4 ms and 2 fsyncs in 20 ms.
	exec(`update public.pg_stat_io set reads = reads + 100, read_time = read_time + 5 where backend_type = 'client backend' and context = 'normal'`)
	exec(`update public.pg_stat_io set writes = writes + 40, write_time = write_time + 4, fsyncs = fsyncs + 2, fsync_time = fsync_time + 20 where backend_type = 'checkpointer'`)
	time.Sleep(1300 * time.Millisecond) // a poll after the load, before the reset
	exec("select pg_stat_statements_reset()")
	for range 3 {
		exec("select 42")
	}
	time.Sleep(1300 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	diag.PrintSummary(&out)
	t.Logf("pgbench: %s\ndiagnostics: %s", lastLines(pgbenchOut, 4), out.String())

	type total struct{ count, sum float64 }
	means := map[stream.Key]total{}
	logCounts := map[string]float64{}
	for _, iv := range ivs {
		if iv.Gap {
			t.Errorf("gap at %s with the server up", iv.Start)
		}
		var all, perStatement float64
		for _, m := range iv.Means {
			if err := m.Validate(); err != nil { // also: no negative count or time
				t.Fatalf("%s: %v", iv.Start, err)
			}
			tt := means[m.Key]
			tt.count += m.Count
			tt.sum += m.Sum
			means[m.Key] = tt
			switch {
			case m.Key.Event == AllStatementsMean:
				all = m.Count
			case strings.HasPrefix(m.Key.Event, StatementMeanPrefix):
				perStatement += m.Count
			}
		}
		if all != perStatement {
			t.Errorf("%s: all statements %v calls, the statements %v", iv.Start, all, perStatement)
		}
		for _, s := range iv.Series {
			logCounts[s.Key.Event] += s.Hist.Count()
		}
	}
	for k, v := range means {
		t.Logf("%s: %v events, %.3f ms, mean %.1f µs", k, v.count, v.sum, v.sum/v.count*1000)
	}

	// pg_stat_statements: pgbench's accounts update ran exactly 400 times.
	var update total
	for k, v := range means {
		if strings.HasPrefix(k.Event, StatementMeanPrefix+"UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?") {
			update = v
		}
	}
	if update.count != 400 {
		t.Errorf("pgbench_accounts update: %v calls, want 400", update.count)
	}
	if mean := update.sum / update.count; !(mean >= 0.001 && mean <= 1000) {
		t.Errorf("pgbench_accounts update mean %v ms, want 1 µs to 1 s", mean)
	}
	for k := range means {
		if strings.Contains(k.Event, "from pg_stat_activity") || strings.Contains(k.Event, "pg_stat_statements(") ||
			strings.Contains(k.Event, "from pg_stat_database") || strings.Contains(k.Event, "current_setting(?)") {
			t.Errorf("latscope's own statement in the means: %s", k.Event)
		}
	}
	if !strings.Contains(out.String(), "pg_stat_statements was reset") {
		t.Error("the reset was not reported")
	}
	if n := means[stream.Key{Event: StatementMeanPrefix + "select ?"}].count; n < 3 {
		t.Errorf("select 42 after the reset: %v calls, want 3 or more", n)
	}

	// pg_stat_database: the scans read blocks, timed.
	reads := means[stream.Key{Event: BlockReadMean, Instance: "postgres"}]
	if reads.count <= 0 || reads.sum <= 0 {
		t.Errorf("block reads %+v", reads)
	} else if mean := reads.sum / reads.count; mean > 100 {
		t.Errorf("block read mean %v ms", mean)
	}

	// pg_stat_io (synthetic stand-in): exactly the made-up activity.
	for k, want := range map[stream.Key]total{
		{Event: IOReadMean, Instance: "client backend"}: {100, 5},
		{Event: IOWriteMean, Instance: "checkpointer"}:  {40, 4},
		{Event: IOFsyncMean, Instance: "checkpointer"}:  {2, 20},
	} {
		if got := means[k]; math.Abs(got.count-want.count) > 0 || math.Abs(got.sum-want.sum) > 1e-9 {
			t.Errorf("%s: %+v, want %+v", k, got, want)
		}
	}

	// --log: every statement pgbench's role logged after the source
	// started, counted independently of the parser.
	b, err := os.ReadFile(pg.StderrLog)
	if err != nil {
		t.Fatal(err)
	}
	logged := len(durationLine.FindAll(b[logStart:], -1))
	if logCounts[AllStatements] != float64(logged) || logged < 7*400 {
		t.Errorf("log: all statements %v, %d duration lines logged (want at least 7 × 400)", logCounts[AllStatements], logged)
	}
	var accounts float64
	for k, n := range logCounts {
		if strings.HasPrefix(k, "UPDATE pgbench_accounts SET abalance") {
			accounts += n
		}
	}
	if accounts != 400 {
		t.Errorf("log: %v pgbench_accounts updates, want 400", accounts)
	}
}

var durationLine = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC \[\d+\] LOG:  duration: [0-9.]+ ms  statement: `)

func fileSize(t *testing.T, path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestLiveWarnsOnceWhatToEnable: without pg_stat_statements and with
// track_io_timing off, the source says once each what to run, emits no
// mean, and keeps sampling.
func TestLiveWarnsOnceWhatToEnable(t *testing.T) {
	if testing.Short() {
		t.Skip("a real server")
	}
	pg := dbtest.StartPostgres(t, dbtest.PostgresOptions{})
	var out strings.Builder
	diag := input.NewDiagnostics(&out, 10)
	missing := filepath.Join(t.TempDir(), "no-such.log")
	src, err := Probe().Open(strings.TrimPrefix(pg.URI, "postgres:"), source.Options{Interval: 300 * time.Millisecond, DB: source.DBOptions{Log: missing}}, diag)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	time.AfterFunc(1500*time.Millisecond, func() { close(stop) })
	ivs := runLive(t, src, stop)
	observed := 0
	for _, iv := range ivs {
		if len(iv.Means) != 0 {
			t.Errorf("%s: means %v", iv.Start, iv.Means)
		}
		// A window before the first connection completes is a gap; on a
		// loaded machine (packages tested in parallel) that can be the first.
		if !iv.Gap {
			observed++
		}
	}
	if observed == 0 {
		t.Errorf("no observed window in %d intervals: sampling did not go on", len(ivs))
	}
	text := out.String()
	for _, want := range []string{
		"shared_preload_libraries = 'pg_stat_statements'",
		"CREATE EXTENSION pg_stat_statements",
		"ALTER SYSTEM SET track_io_timing = on; SELECT pg_reload_conf();",
		"cannot read the server log " + missing,
	} {
		if strings.Count(text, want) != 1 {
			t.Errorf("want %q once in:\n%s", want, text)
		}
	}
	if len(ivs) < 3 {
		t.Errorf("%d intervals", len(ivs))
	}
}
