package dbtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// PostgresBinDirs are where PostgreSQL's server binaries are looked for, in
// order ($LATSCOPE_PG_BIN first): Debian keeps them off PATH.
var postgresBinDirs = []string{"/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin"}

// PostgresOptions configures a test server.
type PostgresOptions struct {
	// Settings are passed as "-c key=value" (e.g. log_min_duration_statement=0).
	Settings map[string]string
	// Preload lists shared_preload_libraries (e.g. pg_stat_statements).
	Preload []string
}

// Postgres is a running test server.
type Postgres struct {
	// URI connects as the superuser postgres (trust authentication) to the
	// database postgres over TCP.
	URI string
	// Port is its loopback TCP port.
	Port int
	// DataDir is the cluster directory (csvlog/jsonlog files go to its
	// log_directory, "log" by default).
	DataDir string
	// StderrLog is the file receiving the server's stderr (the "stderr"
	// log destination when logging_collector is off).
	StderrLog string
	// BinDir holds the server's binaries (pgbench, psql, ...).
	BinDir string

	owner Owner
	args  []string // the server's command line, the same at every start
	proc  *Process // nil when stopped
}

// PostgresBinDir returns the directory of PostgreSQL's server binaries, or
// skips (fails under LATSCOPE_REQUIRE_INTEGRATION=1) when there is none.
func PostgresBinDir(t testing.TB) string {
	t.Helper()
	dirs := postgresBinDirs
	if d := os.Getenv("LATSCOPE_PG_BIN"); d != "" {
		dirs = append([]string{d}, dirs...)
	}
	for _, d := range dirs {
		if isExecutable(filepath.Join(d, "postgres")) && isExecutable(filepath.Join(d, "initdb")) {
			return d
		}
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		return filepath.Dir(p)
	}
	testenv.SkipOrFail(t, "PostgreSQL server binaries not found (looked in $LATSCOPE_PG_BIN, %s and PATH)", strings.Join(postgresBinDirs, ", "))
	return ""
}

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// StartPostgres creates a new cluster (initdb -A trust -U postgres) in a
// temporary directory owned by the server owner, starts it on a free
// loopback port with its stderr in a log file, waits until it accepts
// queries, and stops it (SIGINT: fast shutdown) when the test ends.
func StartPostgres(t testing.TB, opts PostgresOptions) *Postgres {
	t.Helper()
	bin := PostgresBinDir(t)
	owner := ServerOwner(t)
	base := owner.Dir(t, "postgres")
	data := filepath.Join(base, "data")
	initdb := owner.Command(filepath.Join(bin, "initdb"), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync", "-D", data)
	initdb.Env = append(os.Environ(), "LC_ALL=C", "HOME=/tmp")
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb -D %s: %v\n%s", data, err, out)
	}
	port := FreePort(t)
	args := []string{"-D", data, "-k", base, "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-c", "fsync=off"}
	if len(opts.Preload) > 0 {
		args = append(args, "-c", "shared_preload_libraries="+strings.Join(opts.Preload, ","))
	}
	keys := make([]string, 0, len(opts.Settings))
	for k := range opts.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-c", k+"="+opts.Settings[k])
	}
	pg := &Postgres{
		URI:       fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port),
		Port:      port,
		DataDir:   data,
		StderrLog: filepath.Join(base, "postgres.stderr.log"),
		BinDir:    bin,
		owner:     owner,
		args:      args,
	}
	t.Cleanup(func() { pg.Stop(t) })
	pg.Start(t)
	return pg
}

// Start starts the server (again, after Stop, on the same port and data)
// and waits until it accepts queries; its stderr is appended to StderrLog.
func (pg *Postgres) Start(t testing.TB) {
	t.Helper()
	logFile, err := os.OpenFile(pg.StderrLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close() // the child keeps its own descriptor
	srv := pg.owner.Command(filepath.Join(pg.BinDir, "postgres"), pg.args...)
	srv.Stdout, srv.Stderr = logFile, logFile
	proc, err := StartProcess(srv)
	if err != nil {
		t.Fatalf("starting postgres: %v", err)
	}
	pg.proc = proc
	if err := proc.WaitReady(30*time.Second, postgresReady(pg.URI)); err != nil {
		log, _ := os.ReadFile(pg.StderrLog)
		pg.Stop(t)
		t.Fatalf("postgres did not start: %v\nserver log:\n%s", err, log)
	}
}

// Stop shuts the server down (SIGINT: a fast shutdown) and waits; Start
// starts it again.
func (pg *Postgres) Stop(t testing.TB) {
	t.Helper()
	pg.proc.Stop(t, syscall.SIGINT, 30*time.Second, "postgres did not stop within 30 s of SIGINT (log "+pg.StderrLog+")")
	pg.proc = nil
}

// postgresReady says whether the server at uri answers a query (its port
// opens before it accepts connections).
func postgresReady(uri string) func(context.Context) error {
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, uri)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, "select 1")
		return err
	}
}

// Pgbench runs the server's pgbench with args against pg (as the current
// user: it is a client), failing the test on error.
func (pg *Postgres) Pgbench(t testing.TB, args ...string) string {
	t.Helper()
	full := append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(pg.Port), "-U", "postgres"}, args...)
	full = append(full, "postgres")
	cmd := exec.Command(filepath.Join(pg.BinDir, "pgbench"), full...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pgbench %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
