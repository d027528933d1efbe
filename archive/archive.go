// Package archive is latscope's embedded archive: the stream of latency
// intervals kept in a SQLite database (through the pure-Go driver
// modernc.org/sqlite, so the binary stays static) in a data directory.
// Series are indexed by source and key, intervals by (series, resolution,
// start); each histogram and mean is stored in the recording codec's
// standalone value encoding. Old data is downsampled into coarser tiers
// (histograms merged exactly) and dropped by age and by size.
// docs/archive.md describes the layout and the rules.
package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// DBName is the database file inside a data directory.
const DBName = "latscope.db"

// sqliteMagic starts every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// Tier is one resolution of the archive: intervals merged into windows of
// Step (0: raw, as the source emitted them), kept for Keep (0: forever).
type Tier struct {
	Step time.Duration
	Keep time.Duration
}

// DefaultTiers keeps raw intervals 7 days and 1-minute windows 90 days.
func DefaultTiers() []Tier {
	return []Tier{{Step: 0, Keep: 7 * 24 * time.Hour}, {Step: time.Minute, Keep: 90 * 24 * time.Hour}}
}

// Options configure an archive; zero values take the defaults.
type Options struct {
	// Tiers are the resolutions, finest (raw, Step 0) first, each step a
	// multiple of the one before. Nil: DefaultTiers.
	Tiers []Tier
	// MaxBytes caps the database's used size: Maintain drops the oldest
	// hour of data until it fits (0: no cap).
	MaxBytes int64
	// ReadOnly opens an existing archive for queries only.
	ReadOnly bool
	// SourceKeep shortens the retention of some sources (by name):
	// Maintain drops their data of every tier older than this, even when
	// the tier keeps longer (latscope serve's per-job retention).
	// SetSourceKeep changes it while the archive is open.
	SourceKeep map[string]time.Duration
}

// Archive is an open archive. Its methods are safe for concurrent use; one
// process at a time should write (SQLite serialises writers, and the clean
// close marker assumes a single writer).
type Archive struct {
	db *sql.DB
	// rdb is the read paths' pool: in a writer, read-only connections of
	// their own, so that API reads run beside the writer's transactions
	// (WAL readers see what is committed) instead of queueing for its one
	// connection; in a read-only archive, db itself.
	rdb  *sql.DB
	dir  string // for messages: the data directory or the file given
	path string // the database file
	opts Options
	mu   sync.Mutex // guards the caches and serialises writes
	ids  idCache
	// packedBelow is, per source, a start from which on it has no raw
	// blocks (pack.go): writes after it need not look for one.
	packedBelow map[int64]int64
	// rowsFrom is, per source, a start before which it has no raw rows:
	// all packed (packFinished).
	rowsFrom map[int64]int64
	// packing is, per source, its finished hour being packed (pack.go).
	packing map[int64]packCursor
	// packBudget and packPerWritten bound the points a write packs
	// (batchWriter.budget; tests lower them).
	packBudget, packPerWritten int
	// reads runs the read paths' queries on rdb, prepared once.
	reads *preparedReads
	// group gathers concurrent Writes into one transaction (group.go).
	group groupCommit
	// ckpt checkpoints the WAL beside a writer; lock is the writer's hold
	// on the data directory. Nil when read-only.
	ckpt *checkpointer
	lock *os.File
}

// DBPath returns the database file of an archive path: the file itself,
// or DBName inside a directory. ok is false when path is neither an
// existing archive file nor a directory holding one.
func DBPath(path string) (db string, ok bool) {
	st, err := os.Stat(path)
	if err != nil {
		return "", false
	}
	if st.IsDir() {
		path = filepath.Join(path, DBName)
	}
	return path, isSQLite(path)
}

// isSQLite reports whether the file starts with SQLite's magic.
func isSQLite(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, len(sqliteMagic))
	n, _ := f.Read(b)
	return n == len(b) && string(b) == sqliteMagic
}

// Open opens the archive at path: a data directory (created with its
// database when missing, unless ReadOnly) or a database file. When the last
// writer did not close the archive cleanly, Open runs SQLite's integrity
// check first and refuses a damaged archive.
func Open(path string, opts Options) (*Archive, error) {
	if opts.Tiers == nil {
		opts.Tiers = DefaultTiers()
	}
	opts.SourceKeep = maps.Clone(opts.SourceKeep) // SetSourceKeep changes the archive's own
	if err := CheckTiers(opts.Tiers); err != nil {
		return nil, fmt.Errorf("archive %s: %w", path, err)
	}
	file, err := dbFile(path, opts.ReadOnly)
	if err != nil {
		return nil, err
	}
	var lock *os.File
	if !opts.ReadOnly {
		if lock, err = lockWriter(path, file); err != nil {
			return nil, err
		}
	}
	a, err := open(path, file, lock, opts)
	if err != nil && lock != nil {
		lock.Close()
	}
	return a, err
}

func open(path, file string, lock *os.File, opts Options) (*Archive, error) {
	role := writerConn
	if opts.ReadOnly {
		role = readOnlyConn
	}
	db, err := sql.Open("sqlite", dsn(file, role))
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", path, err)
	}
	// One connection: SQLite serialises writers anyway, and a single
	// connection keeps its page cache (bounded by cache_size) the only one.
	db.SetMaxOpenConns(1)
	a := &Archive{db: db, rdb: db, dir: path, path: file, opts: opts, ids: newIDCache(), packedBelow: map[int64]int64{}, rowsFrom: map[int64]int64{}, packing: map[int64]packCursor{}, packBudget: packBudget, packPerWritten: packPerWritten, lock: lock}
	if err := a.init(context.Background()); err != nil {
		db.Close()
		return nil, err
	}
	if !opts.ReadOnly {
		// After init: the readers find the schema migrated.
		if a.rdb, err = openReadPool(file); err != nil {
			db.Close()
			return nil, a.errorf("%w", err)
		}
		if a.ckpt, err = startCheckpointer(file, db); err != nil {
			a.rdb.Close()
			db.Close()
			return nil, a.errorf("%w", err)
		}
	}
	a.reads = &preparedReads{db: a.rdb}
	return a, nil
}

// readPoolConns bounds a writer's read connections: API reads beside the
// writer, each connection with its own page cache (cache_size).
const readPoolConns = 4

// openReadPool opens a writer's read connections (query_only: a read path
// can never write). One stays open between reads, for a minute: a server
// reads now and then, for days, and each connection's memory counts.
func openReadPool(file string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn(file, readPoolConn))
	if err != nil {
		return nil, fmt.Errorf("opening the read connections: %w", err)
	}
	db.SetMaxOpenConns(readPoolConns)
	db.SetMaxIdleConns(1)
	db.SetConnMaxIdleTime(time.Minute)
	return db, nil
}

// dbFile resolves path to the database file, creating the data directory
// for a writer.
func dbFile(path string, readOnly bool) (string, error) {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		file := filepath.Join(path, DBName)
		if _, err := os.Stat(file); readOnly && err != nil {
			return "", fmt.Errorf("archive %s: no %s in the directory", path, DBName)
		}
		return file, nil
	case err == nil:
		if !isSQLite(path) && st.Size() > 0 {
			return "", fmt.Errorf("archive %s: not a SQLite database", path)
		}
		return path, nil
	case errors.Is(err, os.ErrNotExist) && !readOnly:
		if err := os.MkdirAll(path, 0o750); err != nil {
			return "", fmt.Errorf("archive %s: creating the data directory: %w", path, err)
		}
		return filepath.Join(path, DBName), nil
	}
	return "", fmt.Errorf("archive %s: %w", path, err)
}

// connRole is what a connection is for: its pragmas differ.
type connRole int

const (
	writerConn   connRole = iota // a writer's (and its checkpointer's)
	readOnlyConn                 // a read-only archive's
	readPoolConn                 // a writer's read pool's
)

// dsn turns a file name into the driver's URI with the pragmas every
// connection needs: WAL (readers never block the writer, a crash loses at
// most the transaction being written), synchronous NORMAL (WAL's safe
// setting: no fsync per commit), a busy timeout for concurrent readers and
// a bounded page cache. A read-only archive also maps the file into memory
// (up to readerMmap): SQLite then reads the blocks' overflow pages from the
// map instead of with one pread each. A writer, which runs for days, does
// not: the pages it touched would count in its RSS. Its read pool is
// query_only, with a small cache: a reader's cache is dropped anyway
// whenever the writer committed since its last read.
func dsn(file string, role connRole) string {
	q := url.Values{}
	cache := "cache_size(-8000)"
	if role == readPoolConn {
		cache = "cache_size(-500)"
	}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(NORMAL)", "busy_timeout(10000)", cache, "foreign_keys(ON)"} {
		q.Add("_pragma", p)
	}
	switch role {
	case readOnlyConn:
		q.Add("_pragma", fmt.Sprintf("mmap_size(%d)", readerMmap))
	case readPoolConn:
		q.Add("_pragma", "query_only(1)")
	default:
		q.Add("_pragma", "wal_autocheckpoint(0)") // the checkpointer's job
		q.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", walRestartFrames*4096))
	}
	return "file:" + (&url.URL{Path: file}).EscapedPath() + "?" + q.Encode()
}

// readerMmap bounds the memory map of a read-only archive (1 GiB of
// address space; only the pages read are resident, and they are the
// kernel's file cache).
const readerMmap = 1 << 30

// CheckTiers reports tiers an archive refuses (counted from 1): the raw tier (step 0)
// first, each other step whole seconds and a multiple of the one before,
// no negative retention.
func CheckTiers(tiers []Tier) error {
	if len(tiers) == 0 || tiers[0].Step != 0 {
		return errors.New("the first tier must be the raw one (step 0)")
	}
	for i := 1; i < len(tiers); i++ {
		prev, t := tiers[i-1].Step, tiers[i].Step
		if t < time.Second || t%time.Second != 0 || t <= prev || (prev > 0 && t%prev != 0) {
			return fmt.Errorf("tier %d: step %s must be whole seconds, above and a multiple of the previous tier's %s", i+1, t, prev)
		}
	}
	for i, t := range tiers {
		if t.Keep < 0 {
			return fmt.Errorf("tier %d: negative retention %s", i+1, t.Keep)
		}
	}
	return nil
}

// init migrates the schema, checks integrity after an unclean close and
// marks the archive open for writing.
func (a *Archive) init(ctx context.Context) error {
	if a.opts.ReadOnly {
		v, err := a.schemaVersion(ctx)
		if err != nil {
			return a.errorf("reading the schema version: %w", err)
		}
		if v == 0 || !a.hasTable(ctx, "windows") {
			return a.errorf("not a latscope archive (a SQLite database without its tables)")
		}
		if v > len(migrations) {
			return a.errorf("schema version %d is newer than this latscope reads (%d): upgrade latscope", v, len(migrations))
		}
		if v < 2 {
			// Read-only cannot migrate: schema 1 has no blocks, which
			// reads the same as empty block tables.
			if _, err := a.db.ExecContext(ctx, blockTables); err != nil {
				return a.errorf("reading schema %d: %w", v, err)
			}
		}
		return nil
	}
	if err := a.migrate(ctx); err != nil {
		return err
	}
	clean, err := a.meta(ctx, metaClean)
	if err != nil {
		return a.errorf("reading the clean-close marker: %w", err)
	}
	if clean == "no" {
		if err := a.IntegrityCheck(ctx); err != nil {
			return err
		}
	}
	if err := a.setMeta(ctx, metaClean, "no"); err != nil {
		return a.errorf("marking the archive open: %w", err)
	}
	return nil
}

// hasTable reports whether the database has a table of that name.
func (a *Archive) hasTable(ctx context.Context, name string) bool {
	var n int
	err := a.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", name).Scan(&n)
	return err == nil && n == 1
}

// IntegrityCheck runs PRAGMA integrity_check and returns its findings as an
// error.
func (a *Archive) IntegrityCheck(ctx context.Context) error {
	var problems []string
	err := eachRow(ctx, a.db, func(rows *sql.Rows) error {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		if s != "ok" {
			problems = append(problems, s)
		}
		return nil
	}, "PRAGMA integrity_check")
	if err != nil {
		return a.errorf("integrity check: %w", err)
	}
	if len(problems) > 0 {
		return a.errorf("integrity check failed: %v", problems)
	}
	return nil
}

// Close marks a writer's archive cleanly closed, checkpoints the WAL into
// the database and closes it.
func (a *Archive) Close() error {
	var err error
	a.reads.close()
	if a.rdb != a.db {
		// First: a reader's snapshot would keep the checkpoint below
		// from truncating the WAL.
		if cerr := a.rdb.Close(); cerr != nil {
			err = a.errorf("closing the read connections: %w", cerr)
		}
	}
	if a.ckpt != nil {
		a.ckpt.stop()
		a.ckpt = nil
	}
	if !a.opts.ReadOnly {
		ctx := context.Background()
		if merr := a.setMeta(ctx, metaClean, "yes"); err == nil {
			err = merr
		}
		if _, cerr := a.db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err == nil && cerr != nil {
			err = a.errorf("checkpoint: %w", cerr)
		}
	}
	if cerr := a.db.Close(); err == nil && cerr != nil {
		err = a.errorf("closing: %w", cerr)
	}
	if a.lock != nil {
		a.lock.Close() // releases the writer's lock
		a.lock = nil
	}
	return err
}

// SetSourceKeep sets how long a source's data is kept (Options.SourceKeep)
// from the next Maintain on; 0 removes the source's own retention, leaving
// its data to the tiers'. latscope serve calls it when a job created through
// the API is created or changed.
func (a *Archive) SetSourceKeep(name string, keep time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if keep <= 0 {
		delete(a.opts.SourceKeep, name)
		return
	}
	if a.opts.SourceKeep == nil {
		a.opts.SourceKeep = map[string]time.Duration{}
	}
	a.opts.SourceKeep[name] = keep
}

// Path returns the database file.
func (a *Archive) Path() string { return a.path }

// errorf wraps an error with the archive's path, so that a full disk or a
// permission problem names the directory to look at.
func (a *Archive) errorf(format string, args ...any) error {
	return fmt.Errorf("archive %s: "+format, append([]any{a.dir}, args...)...)
}
