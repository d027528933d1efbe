package jobctl

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/latscope/latscope/internal/sqlitedb"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/config"
)

// Origins of a job: where it is defined.
const (
	OriginConfig = "config" // the configuration file or the command line
	OriginAPI    = "api"    // created through the API, kept in the store
	// originDeleted keeps the retention of a job deleted through the API
	// (its data stays in the archive) until a job of its name takes over.
	originDeleted = "deleted"
)

// Store keeps, in a SQLite file of the data directory (DATA/jobs.db), the
// jobs created through the API and every job's pause, so both survive a
// restart. A job of the configuration has a row only while it is paused:
// the file stays the authority on what it is.
type Store struct {
	db *sql.DB
}

// migrations are the store's schema versions, counted in jobs_schema
// (internal/sqlitedb). Version 1 was counted in PRAGMA user_version: its
// CREATE TABLE IF NOT EXISTS leaves such a file as it is, and each later
// version also sets user_version, so that a latscope that reads only that
// refuses a newer file instead of dropping what it does not know.
var migrations = []string{
	`CREATE TABLE IF NOT EXISTS jobs (
	name TEXT PRIMARY KEY,
	origin TEXT NOT NULL,
	source TEXT NOT NULL DEFAULT '',
	interval TEXT NOT NULL DEFAULT '',
	schedule TEXT NOT NULL DEFAULT '',
	password_env TEXT NOT NULL DEFAULT '',
	password_file TEXT NOT NULL DEFAULT '',
	paused INTEGER NOT NULL DEFAULT 0,
	changed_by TEXT NOT NULL DEFAULT '',
	changed_at INTEGER NOT NULL DEFAULT 0
	);
	PRAGMA user_version = 1`,
	`ALTER TABLE jobs ADD COLUMN retention TEXT NOT NULL DEFAULT '';
	PRAGMA user_version = 2`,
}

// OpenStore opens (creating if needed) the store at path and brings its
// schema up to date.
func OpenStore(ctx context.Context, path string) (*Store, error) {
	db, err := sqlitedb.OpenMigrated(ctx, path, "jobs", migrations)
	if err != nil {
		return nil, err
	}
	return &Store{db: db}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// record is one row: a job created through the API (its definition), a
// paused job of the configuration (its name alone), or the retention of a
// deleted job (its name and retention).
type record struct {
	def    config.Job
	origin string
	paused bool
}

func (s *Store) load(ctx context.Context) ([]record, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, origin, source, interval, schedule, password_env, password_file, retention,
		paused FROM jobs ORDER BY changed_at, name`)
	if err != nil {
		return nil, fmt.Errorf("reading jobs: %w", err)
	}
	defer rows.Close()
	var out []record
	for rows.Next() {
		var r record
		d := &r.def
		if err := rows.Scan(&d.Name, &r.origin, &d.Source, &d.Interval, &d.Schedule, &d.PasswordEnv, &d.PasswordFile, &d.Retention, &r.paused); err != nil {
			return nil, fmt.Errorf("reading jobs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading jobs: %w", err)
	}
	return out, nil
}

// put writes a record whole, replacing the row of its name.
func (s *Store) put(ctx context.Context, r record, by auth.Actor, at time.Time) error {
	d := r.def
	_, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO jobs(name, origin, source, interval, schedule, password_env,
		password_file, retention, paused, changed_by, changed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.Name, r.origin, d.Source, d.Interval, d.Schedule, d.PasswordEnv, d.PasswordFile, d.Retention, r.paused, by.User, at.UnixNano())
	if err != nil {
		return fmt.Errorf("storing job %q: %w", d.Name, err)
	}
	return nil
}

func (s *Store) delete(ctx context.Context, name string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM jobs WHERE name = ?`, name); err != nil {
		return fmt.Errorf("deleting job %q: %w", name, err)
	}
	return nil
}
