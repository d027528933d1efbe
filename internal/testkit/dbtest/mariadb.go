package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// MariaDBOptions configures a test MariaDB server.
type MariaDBOptions struct {
	// Settings are extra mariadbd options ("--innodb-buffer-pool-size=8M").
	Settings []string
}

// MariaDB is a running test server.
type MariaDB struct {
	// Addr is "127.0.0.1:port".
	Addr string
	// User and Password are the test account: SELECT and UPDATE on
	// performance_schema, all privileges on the database "latscope".
	User, Password string
	// Socket is the server's unix socket (root connects through it).
	Socket string

	owner Owner
	// base are the options every start passes, settings the extra ones.
	base, settings []string
	log            string
	proc           *Process // nil when stopped
}

// URI returns "mysql://user:password@addr/" for the test account.
func (m *MariaDB) URI() string {
	return fmt.Sprintf("mysql://%s:%s@%s/", m.User, m.Password, m.Addr)
}

// DSN returns a go-sql-driver DSN for the test account and database db.
func (m *MariaDB) DSN(db string) string {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = m.User, m.Password, "tcp", m.Addr, db
	return c.FormatDSN()
}

// RootDSN returns a DSN for root over the unix socket.
func (m *MariaDB) RootDSN() string {
	c := mysql.NewConfig()
	c.User, c.Net, c.Addr = "root", "unix", m.Socket
	return c.FormatDSN()
}

// StartMariaDB installs a new data directory and starts mariadbd on a free
// loopback port with performance_schema=ON; it is shut down when the test
// ends. A missing MariaDB skips the test (fails under
// LATSCOPE_REQUIRE_INTEGRATION=1).
func StartMariaDB(t testing.TB, opts MariaDBOptions) *MariaDB {
	t.Helper()
	for _, bin := range []string{"mariadbd", "mariadb-install-db"} {
		if _, err := exec.LookPath(bin); err != nil {
			testenv.SkipOrFail(t, "%s not installed (apt-get install mariadb-server)", bin)
		}
	}
	owner := ServerOwner(t)
	dir := owner.Dir(t, "mariadb")
	data := filepath.Join(dir, "data")
	install := owner.Command("mariadb-install-db", "--no-defaults", "--datadir="+data,
		"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	port := FreePort(t)
	m := &MariaDB{
		Addr:     "127.0.0.1:" + strconv.Itoa(port),
		User:     "latscope",
		Password: "latscope-test-pw",
		Socket:   filepath.Join(dir, "mariadb.sock"),
		owner:    owner,
		log:      filepath.Join(dir, "error.log"),
	}
	m.settings = opts.Settings
	m.base = []string{"--no-defaults", "--datadir=" + data, "--socket=" + m.Socket,
		"--port=" + strconv.Itoa(port), "--bind-address=127.0.0.1", "--skip-name-resolve",
		"--performance_schema=ON", "--innodb-buffer-pool-size=8M", "--log-error=" + m.log,
		"--pid-file=" + filepath.Join(dir, "mariadb.pid")}
	t.Cleanup(func() { m.Stop(t) })
	m.Start(t)
	m.createUser(t)
	return m
}

// Start starts the server (again, after Stop) and waits for its port.
func (m *MariaDB) Start(t testing.TB) {
	t.Helper()
	proc, err := StartProcess(m.owner.Command("mariadbd", append(slices.Clone(m.base), m.settings...)...))
	if err != nil {
		t.Fatalf("starting mariadbd: %v", err)
	}
	m.proc = proc
	// The socket first: it is this server's alone, while the free port
	// may have been taken by another process since FreePort (then this
	// server exits, and a port check alone would find the other one).
	err = WaitForDial("unix", m.Socket, 60*time.Second)
	if err == nil {
		err = WaitForPort(m.Addr, 10*time.Second)
	}
	if err == nil {
		err = proc.WaitReady(60*time.Second, m.rootPing)
	}
	if err != nil {
		log, _ := os.ReadFile(m.log)
		m.Stop(t)
		t.Fatalf("mariadbd: %v\n%s", err, log)
	}
}

// rootPing says whether root's ping succeeds. mariadbd listens before its
// start-up ends, and a SIGTERM that comes in between (a test that stops
// the server it has just started) is lost: the server then ran on until
// Stop's 60 s limit killed it.
func (m *MariaDB) rootPing(ctx context.Context) error {
	db, err := sql.Open("mysql", m.RootDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	return db.PingContext(ctx)
}

// Restart stops the server and starts it again with new extra options in
// place of MariaDBOptions.Settings (startup-only variables such as
// --performance-schema-events-waits-history-long-size=100).
func (m *MariaDB) Restart(t testing.TB, settings ...string) {
	t.Helper()
	m.Stop(t)
	m.settings = settings
	m.Start(t)
}

// Slap runs mariadb-slap as the server's root user (over the socket) with
// args until it finishes or ctx ends; an error other than ctx ending it
// fails the test. A missing mariadb-slap skips the test (fails under
// LATSCOPE_REQUIRE_INTEGRATION=1).
func (m *MariaDB) Slap(ctx context.Context, t testing.TB, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("mariadb-slap"); err != nil {
		testenv.SkipOrFail(t, "mariadb-slap not installed (apt-get install mariadb-client)")
	}
	cmd := exec.CommandContext(ctx, "mariadb-slap", append([]string{"--no-defaults", "--socket=" + m.Socket, "--user=root"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil && ctx.Err() == nil {
		t.Errorf("mariadb-slap %v: %v\n%s", args, err, out)
	}
}

// Stop shuts the server down (SIGTERM: a clean shutdown) and waits.
func (m *MariaDB) Stop(t testing.TB) {
	t.Helper()
	m.proc.Stop(t, syscall.SIGTERM, 60*time.Second, "mariadbd did not stop within 60 s; killed")
	m.proc = nil
}

func (m *MariaDB) createUser(t testing.TB) {
	t.Helper()
	db, err := sql.Open("mysql", m.RootDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, stmt := range []string{
		"CREATE USER '" + m.User + "'@'%' IDENTIFIED BY '" + m.Password + "'",
		"GRANT SELECT, UPDATE ON performance_schema.* TO '" + m.User + "'@'%'",
		"CREATE DATABASE latscope",
		"GRANT ALL ON latscope.* TO '" + m.User + "'@'%'",
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("mariadb %q: %v", stmt, err)
		}
	}
}
