package runs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/latscope/latscope/internal/sqlitedb"
)

// DBName is the runs' database inside the data directory. A file of its
// own, like auth.db, so that the archive's size cap and integrity check
// stay the archive's.
const DBName = "runs.db"

// store keeps runs in SQLite: one row per run, its outputs as files.
type store struct{ db *sql.DB }

// schema is the versioned schema; times are Unix nanoseconds, 0 "never".
var schema = []string{
	// 1: the first schema.
	`CREATE TABLE runs (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		kind TEXT NOT NULL,
		params TEXT NOT NULL,
		commands TEXT NOT NULL,
		user_name TEXT NOT NULL,
		remote TEXT NOT NULL,
		state TEXT NOT NULL,
		exit_code INTEGER,
		error TEXT NOT NULL DEFAULT '',
		cancelled_by TEXT NOT NULL DEFAULT '',
		created_at INTEGER NOT NULL,
		started_at INTEGER NOT NULL DEFAULT 0,
		ended_at INTEGER NOT NULL DEFAULT 0,
		last_line TEXT NOT NULL DEFAULT '',
		log_bytes INTEGER NOT NULL DEFAULT 0,
		outputs TEXT NOT NULL DEFAULT '[]'
	);
	CREATE INDEX runs_state ON runs(state);
	CREATE INDEX runs_ended ON runs(ended_at);`,
}

func openStore(ctx context.Context, path string) (*store, error) {
	db, err := sqlitedb.OpenMigrated(ctx, path, "runs", schema)
	if err != nil {
		return nil, err
	}
	return &store{db: db}, nil
}

func (s *store) close() error { return s.db.Close() }

// insert stores a new queued run and returns its id.
func (s *store) insert(ctx context.Context, r Run) (int64, error) {
	cmds, _ := json.Marshal(r.Commands)
	res, err := s.db.ExecContext(ctx, `INSERT INTO runs(kind, params, commands, user_name, remote, state, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, r.Kind, string(r.Params), string(cmds), r.User, r.Remote, r.State, nanos(r.CreatedAt))
	if err != nil {
		return 0, fmt.Errorf("store run: %w", err)
	}
	return res.LastInsertId()
}

// setCommands records the argv, which names the run's directory and so
// is known only once the run has its id.
func (s *store) setCommands(ctx context.Context, id int64, cmds [][]string) error {
	b, _ := json.Marshal(cmds)
	_, err := s.db.ExecContext(ctx, `UPDATE runs SET commands = ? WHERE id = ?`, string(b), id)
	return wrap("store run commands", err)
}

func (s *store) setStarted(ctx context.Context, id int64, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE runs SET state = ?, started_at = ? WHERE id = ?`, Running, nanos(at), id)
	return wrap("store run start", err)
}

// setEnded stores a run's end: its final state, exit code, error, last
// progress line and outputs.
func (s *store) setEnded(ctx context.Context, r Run) error {
	outs, _ := json.Marshal(r.Outputs)
	var exit any
	if r.ExitCode != nil {
		exit = *r.ExitCode
	}
	_, err := s.db.ExecContext(ctx, `UPDATE runs SET state = ?, exit_code = ?, error = ?, cancelled_by = ?, ended_at = ?,
		last_line = ?, log_bytes = ?, outputs = ? WHERE id = ?`, r.State, exit, r.Error, r.CancelledBy, nanos(deref(r.EndedAt)),
		r.Progress.Line, r.Progress.LogBytes, string(outs), r.ID)
	return wrap("store run end", err)
}

// failOrphans marks the runs a crashed server left queued or running as
// failed, and returns their ids.
func (s *store) failOrphans(ctx context.Context, now time.Time) ([]int64, error) {
	ids, err := queryIDs(ctx, s.db, `SELECT id FROM runs WHERE state IN (?, ?)`, Queued, Running)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	_, err = s.db.ExecContext(ctx, `UPDATE runs SET state = ?, error = ?, ended_at = ? WHERE state IN (?, ?)`,
		Failed, ServerStopped, nanos(now), Queued, Running)
	return ids, wrap("mark orphaned runs", err)
}

// prune deletes the runs that ended before cutoff and returns their ids.
func (s *store) prune(ctx context.Context, cutoff time.Time) ([]int64, error) {
	ids, err := queryIDs(ctx, s.db, `SELECT id FROM runs WHERE ended_at > 0 AND ended_at < ?`, nanos(cutoff))
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	_, err = s.db.ExecContext(ctx, `DELETE FROM runs WHERE ended_at > 0 AND ended_at < ?`, nanos(cutoff))
	return ids, wrap("prune runs", err)
}

const runColumns = `id, kind, params, commands, user_name, remote, state, exit_code, error, cancelled_by,
	created_at, started_at, ended_at, last_line, log_bytes, outputs`

func (s *store) get(ctx context.Context, id int64) (Run, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id)
	if err != nil {
		return Run{}, fmt.Errorf("read run %d: %w", id, err)
	}
	list, err := scanRuns(rows)
	if err != nil {
		return Run{}, fmt.Errorf("read run %d: %w", id, err)
	}
	if len(list) == 0 {
		return Run{}, errNotFound(id)
	}
	return list[0], nil
}

// list returns up to limit runs older than before (0: from the newest),
// newest first.
func (s *store) list(ctx context.Context, before int64, limit int) ([]Run, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+runColumns+` FROM runs WHERE ? = 0 OR id < ? ORDER BY id DESC LIMIT ?`,
		before, before, limit)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	list, err := scanRuns(rows)
	return list, wrap("list runs", err)
}

func scanRuns(rows *sql.Rows) ([]Run, error) {
	defer rows.Close()
	var list []Run
	for rows.Next() {
		var r Run
		var params, cmds, outs string
		var exit sql.NullInt64
		var created, started, ended int64
		if err := rows.Scan(&r.ID, &r.Kind, &params, &cmds, &r.User, &r.Remote, &r.State, &exit, &r.Error, &r.CancelledBy,
			&created, &started, &ended, &r.Progress.Line, &r.Progress.LogBytes, &outs); err != nil {
			return nil, err
		}
		r.Params = json.RawMessage(params)
		if err := errors.Join(json.Unmarshal([]byte(cmds), &r.Commands), json.Unmarshal([]byte(outs), &r.Outputs)); err != nil {
			return nil, fmt.Errorf("run %d: %w", r.ID, err)
		}
		if exit.Valid {
			code := int(exit.Int64)
			r.ExitCode = &code
		}
		r.CreatedAt, r.StartedAt, r.EndedAt = fromNanos(created), optionalTime(started), optionalTime(ended)
		if r.State == Succeeded {
			r.Progress.Percent = percent(100)
		}
		list = append(list, r)
	}
	return list, rows.Err()
}

func queryIDs(ctx context.Context, db *sql.DB, query string, args ...any) ([]int64, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("runs: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("runs: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func wrap(what string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

func optionalTime(n int64) *time.Time {
	if n == 0 {
		return nil
	}
	t := fromNanos(n)
	return &t
}

func deref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

func percent(v float64) *float64 { return &v }
