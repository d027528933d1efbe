package auth

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/latscope/latscope/internal/sqlitedb"
)

// Options tune a Store. The zero value of each field means its default.
type Options struct {
	Argon2      Argon2Params  // DefaultArgon2
	Limits      LoginLimits   // DefaultLoginLimits
	SessionIdle time.Duration // 30 min without a request ends a session
	SessionMax  time.Duration // 12 h after login ends it whatever happens
	MaxHashes   int           // argon2 hashes computed at once (each takes MemoryKiB): 2
	Now         func() time.Time
	Logger      *slog.Logger // where a failed audit write is reported: slog.Default()
}

func (o Options) withDefaults() Options {
	if o.Argon2 == (Argon2Params{}) {
		o.Argon2 = DefaultArgon2()
	}
	if o.Limits == (LoginLimits{}) {
		o.Limits = DefaultLoginLimits()
	}
	if o.SessionIdle <= 0 {
		o.SessionIdle = 30 * time.Minute
	}
	if o.SessionMax <= 0 {
		o.SessionMax = 12 * time.Hour
	}
	if o.MaxHashes <= 0 {
		o.MaxHashes = 2
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Store keeps users, tokens, sessions and the audit log in tables named
// auth_*, so it can share one SQLite file with the rest of the server.
type Store struct {
	db        *sql.DB
	ownsDB    bool
	opt       Options
	hashSlots chan struct{}
	userLimit *limiter
	addrLimit *limiter
	dummyHash string // verified against when a user does not exist, so timing does not tell
}

// OpenPath opens (creating if needed) the SQLite database at path in WAL
// mode and returns a Store on it; Close closes the database.
func OpenPath(ctx context.Context, path string, opt Options) (*Store, error) {
	db, err := sqlitedb.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open auth database %s: %w", path, err)
	}
	s, err := New(ctx, db, opt)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("auth database %s: %w", path, err)
	}
	s.ownsDB = true
	return s, nil
}

// New returns a Store on a database the caller opened (and closes), creating
// or upgrading the auth_* tables. The caller's connection string should set
// a busy timeout, as OpenPath does, since the store writes from concurrent
// requests; New switches the file to WAL.
func New(ctx context.Context, db *sql.DB, opt Options) (*Store, error) {
	opt = opt.withDefaults()
	s := &Store{
		db:        db,
		opt:       opt,
		hashSlots: make(chan struct{}, opt.MaxHashes),
		userLimit: newLimiter(opt.Limits.PerUser, opt.Limits.MaxKeys),
		addrLimit: newLimiter(opt.Limits.PerAddress, opt.Limits.MaxKeys),
	}
	if _, err := db.ExecContext(ctx, "PRAGMA journal_mode=WAL"); err != nil {
		return nil, fmt.Errorf("set WAL mode: %w", err)
	}
	if err := s.migrate(ctx); err != nil {
		return nil, err
	}
	var err error
	if s.dummyHash, err = HashPassword("latscope-no-such-user", opt.Argon2); err != nil {
		return nil, err
	}
	return s, nil
}

// Close closes the database if OpenPath opened it.
func (s *Store) Close() error {
	if s.ownsDB {
		return s.db.Close()
	}
	return nil
}

// SchemaVersion is the version of the auth_* tables this code writes.
const SchemaVersion = 1

var migrations = []string{
	// 1: the first schema. Times are Unix nanoseconds; 0 means "never".
	`CREATE TABLE auth_users (
		name TEXT PRIMARY KEY,
		role TEXT NOT NULL,
		password_hash TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL
	);
	CREATE TABLE auth_tokens (
		id TEXT PRIMARY KEY,
		hash BLOB NOT NULL UNIQUE,
		user_name TEXT NOT NULL,
		name TEXT NOT NULL,
		role TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		expires_at INTEGER NOT NULL,
		revoked_at INTEGER NOT NULL DEFAULT 0,
		last_used_at INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX auth_tokens_user ON auth_tokens(user_name);
	CREATE TABLE auth_sessions (
		hash BLOB PRIMARY KEY,
		user_name TEXT NOT NULL,
		csrf TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		last_seen_at INTEGER NOT NULL,
		expires_at INTEGER NOT NULL
	);
	CREATE INDEX auth_sessions_user ON auth_sessions(user_name);
	CREATE TABLE auth_audit (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		at INTEGER NOT NULL,
		actor TEXT NOT NULL,
		action TEXT NOT NULL,
		target TEXT NOT NULL,
		remote TEXT NOT NULL,
		ok INTEGER NOT NULL,
		detail TEXT NOT NULL
	);
	CREATE INDEX auth_audit_at ON auth_audit(at);`,
}

func (s *Store) migrate(ctx context.Context) error {
	return sqlitedb.Migrate(ctx, s.db, "auth", migrations)
}

func (s *Store) now() time.Time { return s.opt.Now() }

func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// hash runs an argon2 computation in one of the bounded slots, so a burst of
// logins cannot take MemoryKiB each without limit.
func (s *Store) hash(ctx context.Context, f func()) error {
	select {
	case s.hashSlots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.hashSlots }()
	f()
	return nil
}

// queryAll runs a query and scans every row with scan.
func queryAll[T any](ctx context.Context, db *sql.DB, what string, scan func(*sql.Rows) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var list []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		list = append(list, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return list, nil
}
