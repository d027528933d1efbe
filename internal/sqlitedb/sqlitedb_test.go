package sqlitedb

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	db, err := Open(filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v1 := []string{`CREATE TABLE t_a (x INTEGER)`}
	v2 := append(v1, `ALTER TABLE t_a ADD COLUMN y TEXT NOT NULL DEFAULT ''`)
	for _, steps := range [][]string{v1, v1, v2, v2} {
		if err := Migrate(ctx, db, "t", steps); err != nil {
			t.Fatalf("migrate to %d: %v", len(steps), err)
		}
	}
	if _, err := db.Exec(`INSERT INTO t_a(x, y) VALUES (1, 'v2')`); err != nil {
		t.Fatalf("version 2's column: %v", err)
	}
	if err := Migrate(ctx, db, "t", v1); err == nil || !strings.Contains(err.Error(), "t schema version 2 is newer than this latscope knows (1)") {
		t.Errorf("an older latscope on a newer database: %v", err)
	}
	// A failing step leaves the database as it was.
	bad := append(v2, `CREATE TABLE t_b (z)`, `NOT SQL`)
	if err := Migrate(ctx, db, "t", bad); err == nil || !strings.Contains(err.Error(), "migration to version 4") {
		t.Fatalf("bad step: %v", err)
	}
	var n int
	db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 't_b'`).Scan(&n)
	var version int
	db.QueryRow(`SELECT version FROM t_schema`).Scan(&version)
	if n != 0 || version != 2 {
		t.Errorf("after a failed migration: table t_b %d, version %d; want none, 2", n, version)
	}
	var mode string
	db.QueryRow(`PRAGMA journal_mode`).Scan(&mode)
	if mode != "wal" {
		t.Errorf("journal mode %q", mode)
	}
}

// OpenMigrated opens and migrates in one; its errors name the database.
func TestOpenMigrated(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := OpenMigrated(ctx, path, "t", []string{`CREATE TABLE t_a (x INTEGER)`})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := OpenMigrated(ctx, path, "t", nil); err == nil || !strings.Contains(err.Error(), "t database "+path+": t schema version 1 is newer") {
		t.Errorf("a newer database: %v", err)
	}
}
