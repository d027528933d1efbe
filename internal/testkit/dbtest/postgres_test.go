package dbtest

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestStartPostgresAppliesSettingsAndPreload(t *testing.T) {
	pg := StartPostgres(t, PostgresOptions{
		Settings: map[string]string{"log_min_duration_statement": "0", "application_name": "dbtest"},
		Preload:  []string{"pg_stat_statements"},
	})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.URI)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var lmds, preload string
	if err := conn.QueryRow(ctx, "select current_setting('log_min_duration_statement'), current_setting('shared_preload_libraries')").Scan(&lmds, &preload); err != nil {
		t.Fatal(err)
	}
	if lmds != "0" || preload != "pg_stat_statements" {
		t.Errorf("log_min_duration_statement %q, shared_preload_libraries %q", lmds, preload)
	}
	if _, err := conn.Exec(ctx, "create extension pg_stat_statements"); err != nil {
		t.Errorf("pg_stat_statements not usable: %v", err)
	}
	if _, err := conn.Exec(ctx, "select 42 as logged_marker"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	log, err := os.ReadFile(pg.StderrLog)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "statement: select 42 as logged_marker") {
		t.Errorf("the stderr log lacks the logged statement:\n%s", log)
	}
	out := pg.Pgbench(t, "-i", "-s", "1", "-q")
	if !strings.Contains(out, "done") {
		t.Errorf("pgbench -i output: %s", out)
	}
	pg.Stop(t)
	if c, err := pgx.Connect(ctx, pg.URI); err == nil {
		c.Close(ctx)
		t.Errorf("server still answers after Stop")
	}
	pg.Start(t)
	c, err := pgx.Connect(ctx, pg.URI)
	if err != nil {
		t.Fatalf("after restart on port %d: %v", pg.Port, err)
	}
	c.Close(ctx)
}
