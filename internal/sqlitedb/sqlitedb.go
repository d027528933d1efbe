// Package sqlitedb opens latscope serve's small SQLite databases (users in
// auth.db, runs in runs.db, jobs in jobs.db) one way, and brings their
// versioned schemas up to date. The archive keeps its own: it checks
// integrity on open, caps its size and is read by other processes
// read-only.
package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"

	_ "modernc.org/sqlite" // pure-Go SQLite driver "sqlite": the binary stays static
)

// Open opens, creating it if needed, the database at path in WAL mode,
// with a busy timeout (requests write concurrently) and transactions that
// take the write lock at once (no deadlock between two readers upgrading).
func Open(path string) (*sql.DB, error) {
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	return sql.Open("sqlite", dsn)
}

// OpenMigrated opens the database NAME at path (Open) and brings its
// schema to the last of steps (Migrate); errors name the database.
func OpenMigrated(ctx context.Context, path, name string, steps []string) (*sql.DB, error) {
	db, err := Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s database %s: %w", name, path, err)
	}
	if err := Migrate(ctx, db, name, steps); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s database %s: %w", name, path, err)
	}
	return db, nil
}

// Migrate applies the steps a database lacks, in one transaction. The
// table NAME_schema holds how many steps were applied; a database with
// more steps than this latscope knows is refused.
func Migrate(ctx context.Context, db *sql.DB, name string, steps []string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s schema: %w", name, err)
	}
	defer tx.Rollback()
	table := name + "_schema"
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("%s schema table: %w", name, err)
	}
	var version int
	err = tx.QueryRowContext(ctx, `SELECT version FROM `+table).Scan(&version)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+table+`(version) VALUES (0)`); err != nil {
			return fmt.Errorf("%s schema version: %w", name, err)
		}
	case err != nil:
		return fmt.Errorf("%s schema version: %w", name, err)
	}
	if version > len(steps) {
		return fmt.Errorf("%s schema version %d is newer than this latscope knows (%d)", name, version, len(steps))
	}
	for v := version; v < len(steps); v++ {
		if _, err := tx.ExecContext(ctx, steps[v]); err != nil {
			return fmt.Errorf("%s schema migration to version %d: %w", name, v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET version = ?`, len(steps)); err != nil {
		return fmt.Errorf("%s schema version: %w", name, err)
	}
	return tx.Commit()
}
