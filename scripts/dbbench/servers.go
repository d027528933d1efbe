package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/go-sql-driver/mysql" // database/sql driver "mysql"

	"github.com/latscope/latscope/internal/testkit/dbtest"
)

// A server under load: what latscope samples, and the load's own rate.
type target struct {
	// uri is the SOURCE for latscope (may hold the test password: these
	// servers are throwaway, on loopback).
	uri string
	// extra are latscope flags the server needs (mysql: --setup).
	extra []string
	// startLoad starts the workload for about d and returns a function
	// that waits for it and returns its rate (queries or transactions
	// per second) and what the rate counts.
	startLoad func(ctx context.Context, d time.Duration) (wait func() (float64, string, error))
	// note describes the server's relevant settings for the table.
	note string
}

// tableRows is the MariaDB table's size: 2^17 rows of ~250 bytes, about
// 32 MB, four times the 8 MB buffer pool (as source/mysql's real-server
// test), so random reads mostly miss the pool and wait for file I/O.
const tableDoublings = 17

// startMariaDB starts MariaDB 10.11 with an 8 MB buffer pool and fills the
// table the load reads.
func startMariaDB(h *harnessT, sessions int, options []string) (*target, error) {
	var m *dbtest.MariaDB
	if err := h.Do(func() {
		settings := append([]string{"--innodb-buffer-pool-size=8M"}, options...)
		m = dbtest.StartMariaDB(h, dbtest.MariaDBOptions{Settings: settings})
	}); err != nil {
		return nil, err
	}
	// Interpolated parameters: each query is one statement with a digest,
	// as an application's would be.
	db, err := sql.Open("mysql", m.DSN("latscope")+"?interpolateParams=true")
	if err != nil {
		return nil, fmt.Errorf("mariadb: %w", err)
	}
	h.Cleanup(func() { db.Close() })
	if err := fillTable(db); err != nil {
		return nil, fmt.Errorf("mariadb: filling the table: %w", err)
	}
	// The sampler misses waits when more than this many happen between
	// two polls.
	var ring int64
	if err := db.QueryRow("SELECT @@performance_schema_events_waits_history_long_size").Scan(&ring); err != nil {
		return nil, fmt.Errorf("mariadb: %w", err)
	}
	return &target{
		uri:   m.URI(),
		extra: []string{"--setup"},
		note:  fmt.Sprintf("performance_schema_events_waits_history_long_size=%d", ring),
		startLoad: func(ctx context.Context, d time.Duration) func() (float64, string, error) {
			return readRandomRows(ctx, db, sessions, d)
		},
	}, nil
}

func fillTable(db *sql.DB) error {
	for _, q := range []string{
		"CREATE TABLE big (id INT PRIMARY KEY, pad CHAR(200) NOT NULL) ENGINE=InnoDB",
		"INSERT INTO big VALUES (1, REPEAT('x', 200))",
	} {
		if _, err := db.Exec(q); err != nil {
			return err
		}
	}
	for i := range tableDoublings {
		if _, err := db.Exec("INSERT INTO big SELECT id + ?, pad FROM big", 1<<i); err != nil {
			return err
		}
	}
	return nil
}

// readRandomRows runs n sessions reading random rows by primary key for
// d; the returned function waits and gives queries per second.
func readRandomRows(ctx context.Context, db *sql.DB, n int, d time.Duration) func() (float64, string, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	db.SetMaxOpenConns(n + 2)
	var queries atomic.Int64
	var wg sync.WaitGroup
	var firstErr error
	var once sync.Once
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 1))
			for ctx.Err() == nil {
				var pad string
				err := db.QueryRowContext(ctx, "SELECT pad FROM big WHERE id = ?", 1+r.IntN(1<<tableDoublings)).Scan(&pad)
				if err != nil && ctx.Err() == nil {
					once.Do(func() { firstErr = err })
					return
				}
				queries.Add(1)
			}
		}()
	}
	return func() (float64, string, error) {
		wg.Wait()
		cancel()
		return float64(queries.Load()) / time.Since(start).Seconds(), "queries/s", firstErr
	}
}

// startPostgres starts PostgreSQL 15 and initialises pgbench's tables
// (scale 1, as source/postgres's real-server tests).
func startPostgres(h *harnessT, sessions int) (*target, error) {
	var pg *dbtest.Postgres
	if err := h.Do(func() {
		pg = dbtest.StartPostgres(h, dbtest.PostgresOptions{})
		pg.Pgbench(h, "-i", "-s", "1", "-q")
	}); err != nil {
		return nil, err
	}
	return &target{
		uri: pg.URI,
		startLoad: func(ctx context.Context, d time.Duration) func() (float64, string, error) {
			return runPgbench(ctx, pg, sessions, d)
		},
	}, nil
}

var pgbenchTPS = regexp.MustCompile(`tps = ([0-9.]+)`)

// runPgbench runs pgbench -c n -T d (whole seconds) in the background.
func runPgbench(ctx context.Context, pg *dbtest.Postgres, n int, d time.Duration) func() (float64, string, error) {
	secs := max(1, int(d.Round(time.Second)/time.Second))
	cmd := exec.CommandContext(ctx, filepath.Join(pg.BinDir, "pgbench"), "-h", "127.0.0.1", "-p", strconv.Itoa(pg.Port),
		"-U", "postgres", "-c", strconv.Itoa(n), "-j", strconv.Itoa(n), "-T", strconv.Itoa(secs), "postgres")
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return func() (float64, string, error) { return 0, "", fmt.Errorf("pgbench: %w", err) }
	}
	return func() (float64, string, error) {
		if err := cmd.Wait(); err != nil {
			return 0, "", fmt.Errorf("pgbench: %w\n%s", err, out.String())
		}
		m := pgbenchTPS.FindStringSubmatch(out.String())
		if m == nil {
			return 0, "", fmt.Errorf("pgbench printed no tps:\n%s", out.String())
		}
		tps, _ := strconv.ParseFloat(m[1], 64)
		return tps, "transactions/s", nil
	}
}

// lockedBuffer collects a child's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

var _ io.Writer = (*lockedBuffer)(nil)
