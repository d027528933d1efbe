package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// migrations[i] brings the schema from version i to i+1 (PRAGMA
// user_version). Later versions append; a released step never changes.
var migrations = []string{
	// 1: sources, series, observation windows and series points.
	`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE sources (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE series (
	id INTEGER PRIMARY KEY,
	source_id INTEGER NOT NULL REFERENCES sources(id),
	kind INTEGER NOT NULL,          -- 0 histogram, 1 mean (count and sum)
	event TEXT NOT NULL,
	instance TEXT NOT NULL,
	key_source TEXT NOT NULL,
	labels TEXT NOT NULL DEFAULT '',
	UNIQUE (source_id, kind, event, instance, key_source));
CREATE TABLE windows (
	source_id INTEGER NOT NULL,
	res INTEGER NOT NULL,           -- 0 raw, else the tier's step in seconds
	start INTEGER NOT NULL,         -- Unix nanoseconds
	dur INTEGER NOT NULL,           -- nanoseconds observed
	flags INTEGER NOT NULL,         -- 1 gap, 2 relative
	zone_off INTEGER NOT NULL,      -- seconds east of UTC
	zone_name TEXT NOT NULL,
	PRIMARY KEY (source_id, res, start)) WITHOUT ROWID;
CREATE INDEX windows_by_time ON windows (res, start);
CREATE TABLE points (
	series_id INTEGER NOT NULL,
	res INTEGER NOT NULL,
	start INTEGER NOT NULL,
	data BLOB NOT NULL,             -- recording.AppendHistogram or AppendMean
	PRIMARY KEY (series_id, res, start)) WITHOUT ROWID;`,
	// 2: finished hours packed into blocks (block.go); the rows above keep
	// the open hour, so a crash still loses at most one interval. Existing
	// rows stay valid and are packed by the next write of their source.
	`CREATE TABLE window_blocks (
	source_id INTEGER NOT NULL,
	res INTEGER NOT NULL,
	start INTEGER NOT NULL,         -- the block's start: a multiple of its span
	data BLOB NOT NULL,             -- the windows in [start, start + span)
	PRIMARY KEY (source_id, res, start)) WITHOUT ROWID;
CREATE TABLE point_blocks (
	series_id INTEGER NOT NULL,
	res INTEGER NOT NULL,
	start INTEGER NOT NULL,
	data BLOB NOT NULL,             -- the series' points in [start, start + span)
	PRIMARY KEY (series_id, res, start)) WITHOUT ROWID;`,
	// 3: the blocks move to rowid tables with their key in a separate
	// index. In a WITHOUT ROWID table the blob is part of the key: a seek
	// read whole blocks (every overflow page) to compare keys, and
	// interior pages held copies of them. Now a seek walks the small
	// index and reads one block once.
	rowidBlocks("window_blocks", "source_id") + rowidBlocks("point_blocks", "series_id"),
}

// rowidBlocks is migration 3 of one block table: the same columns in a
// rowid table, the key a unique index, the rows copied in key order.
func rowidBlocks(table, id string) string {
	return fmt.Sprintf(`CREATE TABLE %[1]s_3 (
	%[2]s INTEGER NOT NULL,
	res INTEGER NOT NULL,
	start INTEGER NOT NULL,
	data BLOB NOT NULL);
CREATE UNIQUE INDEX %[1]s_key ON %[1]s_3 (%[2]s, res, start);
INSERT INTO %[1]s_3 SELECT %[2]s, res, start, data FROM %[1]s ORDER BY %[2]s, res, start;
DROP TABLE %[1]s;
ALTER TABLE %[1]s_3 RENAME TO %[1]s;
`, table, id)
}

// blockTables are the tables of migration 2, which a read-only archive of
// schema 1 lacks; it reads them as empty temporary tables instead.
const blockTables = `CREATE TEMP TABLE window_blocks (source_id INTEGER, res INTEGER, start INTEGER, data BLOB);
CREATE TEMP TABLE point_blocks (series_id INTEGER, res INTEGER, start INTEGER, data BLOB);`

// Keys of the meta table.
const (
	metaClean = "clean" // "no" while a writer has the archive open
	// metaDownsampled + step: the end (Unix ns) up to which that tier has
	// been built from the one below.
	metaDownsampled = "downsampled:"
)

func (a *Archive) schemaVersion(ctx context.Context) (int, error) {
	var v int
	err := a.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}

// migrate applies the missing migrations, each in its own transaction.
func (a *Archive) migrate(ctx context.Context) error {
	v, err := a.schemaVersion(ctx)
	if err != nil {
		return a.errorf("reading the schema version: %w", err)
	}
	if v > len(migrations) {
		return a.errorf("schema version %d is newer than this latscope writes (%d): upgrade latscope", v, len(migrations))
	}
	for ; v < len(migrations); v++ {
		err := a.inTx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1))
			return err
		})
		if err != nil {
			return a.errorf("migrating the schema to version %d: %w", v+1, err)
		}
	}
	return nil
}

// inTx runs f in a transaction, committed when f succeeds.
func (a *Archive) inTx(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := a.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (a *Archive) meta(ctx context.Context, key string) (string, error) {
	var v string
	err := a.db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = ?", key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

func (a *Archive) setMeta(ctx context.Context, key, value string) error {
	_, err := a.db.ExecContext(ctx, "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", key, value)
	return err
}
