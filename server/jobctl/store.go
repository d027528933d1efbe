package jobctl

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"time"

	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/config"

	_ "modernc.org/sqlite" // pure-Go SQLite driver "sqlite"
)

// Origins of a job: where it is defined.
const (
	OriginConfig = "config" // the configuration file or the command line
	OriginAPI    = "api"    // created through the API, kept in the store
)

// Store keeps, in a SQLite file of the data directory (DATA/jobs.db), the
// jobs created through the API and every job's pause, so both survive a
// restart. A job of the configuration has a row only while it is paused:
// the file stays the authority on what it is.
type Store struct {
	db *sql.DB
}

// schema is the store's only version so far (PRAGMA user_version 1).
const schema = `CREATE TABLE IF NOT EXISTS jobs (
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
PRAGMA user_version = 1;`

// OpenStore opens (creating if needed) the store at path.
func OpenStore(ctx context.Context, path string) (*Store, error) {
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("jobs database %s: %w", path, err)
	}
	var version int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		db.Close()
		return nil, fmt.Errorf("jobs database %s: %w", path, err)
	}
	if version > 1 {
		db.Close()
		return nil, fmt.Errorf("jobs database %s: schema version %d is newer than this latscope knows (1)", path, version)
	}
	if _, err := db.ExecContext(ctx, schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("jobs database %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// record is one row: a job created through the API (its definition), or
// a paused job of the configuration (its name alone).
type record struct {
	def    config.Job
	origin string
	paused bool
}

func (s *Store) load(ctx context.Context) ([]record, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, origin, source, interval, schedule, password_env, password_file, paused
		FROM jobs ORDER BY changed_at, name`)
	if err != nil {
		return nil, fmt.Errorf("reading jobs: %w", err)
	}
	defer rows.Close()
	var out []record
	for rows.Next() {
		var r record
		d := &r.def
		if err := rows.Scan(&d.Name, &r.origin, &d.Source, &d.Interval, &d.Schedule, &d.PasswordEnv, &d.PasswordFile, &r.paused); err != nil {
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
		password_file, paused, changed_by, changed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.Name, r.origin, d.Source, d.Interval, d.Schedule, d.PasswordEnv, d.PasswordFile, r.paused, by.User, at.UnixNano())
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
