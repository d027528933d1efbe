package main

// End-to-end tests of the live database sources against real servers the
// tests start themselves (internal/dbtest).

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	_ "github.com/go-sql-driver/mysql"

	"github.com/latscope/latscope/internal/dbtest"
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
// through the binary, with the client-side probe.
func TestPostgresSourceEndToEnd(t *testing.T) {
	pg := dbtest.StartPostgres(t, dbtest.PostgresOptions{})
	pg.Pgbench(t, "-i", "-s", "1")
	done := make(chan struct{})
	go func() {
		defer close(done)
		pg.Pgbench(t, "-c", "4", "-T", "3")
	}()
	rep := reportJSON(t, pg.URI, "--probe", "select 1", "--duration", "2500ms", "--interval", "500ms")
	<-done
	seen := map[string]float64{}
	for _, s := range rep.Series {
		seen[s.Event] += s.Count
	}
	if seen["probe: select 1"] < 10 {
		t.Errorf("probe: %g round trips; series %v", seen["probe: select 1"], seen)
	}
	waits := 0.0
	for ev, n := range seen {
		if ev != "probe: select 1" {
			waits += n
		}
	}
	if waits < 50 {
		t.Errorf("%g sampled waits under pgbench; series %v", waits, seen)
	}
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
