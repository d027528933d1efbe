package main

// End-to-end tests of the live database sources against real servers the
// tests start themselves (internal/testkit/dbtest).

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	_ "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/internal/testkit/dbtest"
)

// TestMySQLSourceEndToEnd samples a real MariaDB under a small workload
// through the binary: `latscope report mysql://... --setup --duration`.
func TestMySQLSourceEndToEnd(t *testing.T) {
	m := dbtest.StartMariaDB(t, dbtest.MariaDBOptions{})
	db, err := sql.Open("mysql", m.DSN("latscope"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				var v int
				_ = db.QueryRowContext(ctx, "SELECT v FROM t WHERE id = 2").Scan(&v)
			}
		}()
	}
	defer func() { cancel(); wg.Wait() }()
	// Without --setup the error says what to enable, and nothing changes.
	r := run(t, "", "report", m.URI(), "--duration", "1s")
	if r.code != 1 || !strings.Contains(r.stderr, "UPDATE performance_schema.setup_consumers") || strings.Contains(r.stderr, m.Password) {
		t.Errorf("without --setup: exit %d\n%s", r.code, r.stderr)
	}
	out := run(t, "", "report", m.URI(), "--setup", "--duration", "3s", "--interval", "500ms", "--format", "json")
	var rep jsonReport
	var sampler struct {
		Source *struct {
			Kind         string   `json:"kind"`
			PollsPerS    float64  `json:"polls_per_s"`
			CaptureRatio *float64 `json:"capture_ratio"`
		} `json:"source"`
	}
	if out.code != 0 || json.Unmarshal([]byte(out.stdout), &rep) != nil || json.Unmarshal([]byte(out.stdout), &sampler) != nil {
		t.Fatalf("report: exit %d\n%s\n%s", out.code, out.stderr, out.stdout)
	}
	// The report says how the data was sampled and how much was caught.
	if s := sampler.Source; s == nil || s.Kind == "" || s.PollsPerS < 20 || s.CaptureRatio == nil || *s.CaptureRatio < 0.8 {
		t.Errorf("report's source object: %+v", s)
	} else {
		t.Logf("source: %s, %.0f polls/s, capture ratio %.3f", s.Kind, s.PollsPerS, *s.CaptureRatio)
	}
	statements := 0.0
	for _, s := range rep.Series {
		if strings.HasPrefix(s.Event, "statement: SELECT `v` FROM `t`") || strings.HasPrefix(s.Event, "statement: SELECT v FROM t") {
			statements += s.Count
		}
	}
	if statements < 100 {
		var names []string
		for _, s := range rep.Series {
			names = append(names, s.Event)
		}
		t.Errorf("%g sampled statements of the workload; series: %v", statements, names)
	}
}

// TestPostgresSourceEndToEnd samples a real PostgreSQL under pgbench
// through the binary: waits, the client-side probe, pg_stat_statements and
// block read means, the server log followed with --log, and the HTML export.
func TestPostgresSourceEndToEnd(t *testing.T) {
	pg := dbtest.StartPostgres(t, dbtest.PostgresOptions{Preload: []string{"pg_stat_statements"},
		Settings: map[string]string{"track_io_timing": "on", "shared_buffers": "2MB"}})
	conn, err := pgx.Connect(context.Background(), pg.URI)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"create extension pg_stat_statements", "alter database postgres set log_min_duration_statement = 0"} {
		if _, err := conn.Exec(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn.Close(context.Background())
	pg.Pgbench(t, "-i", "-s", "1", "-q")
	load := func() chan struct{} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			pg.Pgbench(t, "-c", "4", "-T", "3")
		}()
		return done
	}
	done := load()
	r := run(t, "", "report", "--format", "json", pg.URI, "--probe", "select 1", "--log", pg.StderrLog,
		"--duration", "2500ms", "--interval", "500ms")
	<-done
	var rep jsonReport
	var means struct {
		Means []struct {
			Event  string   `json:"event"`
			Count  float64  `json:"count"`
			MeanUs *float64 `json:"mean_us"`
		} `json:"means"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rep) != nil || json.Unmarshal([]byte(r.stdout), &means) != nil {
		t.Fatalf("report: exit %d\n%s\n%s", r.code, r.stderr, r.stdout)
	}
	seen := map[string]float64{}
	for _, s := range rep.Series {
		seen[s.Event] += s.Count
	}
	if seen["probe: select 1"] < 10 {
		t.Errorf("probe: %g round trips; series %v", seen["probe: select 1"], seen)
	}
	// Statement durations from the log: pgbench's UPDATEs among them.
	if seen["all statements"] < 100 || !hasPrefixWithCount(seen, "UPDATE pgbench_accounts", 10) {
		t.Errorf("--log: %g statements; series %v", seen["all statements"], seen)
	}
	if seen["CPU"]+seen["IO:DataFileRead"]+seen["Lock:transactionid"]+seen["Client:ClientRead"] < 20 {
		t.Errorf("few sampled waits under pgbench; series %v", seen)
	}
	// Means: pg_stat_statements per statement and overall, block reads.
	got := map[string]float64{}
	for _, m := range means.Means {
		got[m.Event] += m.Count
		if m.Count > 0 && (m.MeanUs == nil || *m.MeanUs <= 0 || *m.MeanUs > 1e6) {
			t.Errorf("mean %q: implausible mean %v µs", m.Event, m.MeanUs)
		}
	}
	if got["statement mean: all statements"] < 100 || got["block read mean"] <= 0 {
		t.Errorf("means: %v", got)
	}
	// The HTML export draws the means under the heat maps.
	page := filepath.Join(t.TempDir(), "pg.html")
	done = load()
	r = run(t, "", "report", pg.URI, "--duration", "1500ms", "--interval", "500ms", "-o", page)
	<-done
	b, err := os.ReadFile(page)
	if r.code != 0 || err != nil || !strings.Contains(string(b), "mean per interval") {
		t.Errorf("report -o pg.html: exit %d, %v\n%s", r.code, err, r.stderr)
	}
}

func hasPrefixWithCount(seen map[string]float64, prefix string, min float64) bool {
	for ev, n := range seen {
		if strings.HasPrefix(ev, prefix) && n >= min {
			return true
		}
	}
	return false
}

// TestSourcesListsPrivileges: `latscope sources` says what to grant for
// every database.
func TestSourcesListsPrivileges(t *testing.T) {
	r := run(t, "", "sources")
	for _, want := range []string{"postgres:", "pg_read_all_stats", "mysql:", "GRANT SELECT ON performance_schema.*",
		"oracle:", "gv_$event_histogram", "mariadb:\n    the same as mysql:", "iotest:"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("latscope sources lacks %q (exit %d):\n%s", want, r.code, r.stdout)
		}
	}
}
