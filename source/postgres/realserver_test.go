package postgres

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/dbtest"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// serverLogs are the three log files one real server wrote for the same
// statements (log_destination = stderr,csvlog,jsonlog with the collector).
type serverLogs struct {
	stderr, csv, json string
}

// Statements the real-server tests run before pgbench, simple protocol.
const (
	multiLineStatement = "select 'multi\nline' as a,\n\t42 as b"
	sleepStatement     = "select pg_sleep(0.02)"
)

// produceServerLogs starts a real PostgreSQL logging every statement with
// its duration to all three destinations, runs a multi-line statement, a
// 20 ms sleep, pgbench -i and short pgbench runs (prepared and simple
// protocols), and returns the log files once the server has stopped.
func produceServerLogs(t *testing.T) serverLogs {
	t.Helper()
	pg := dbtest.StartPostgres(t, dbtest.PostgresOptions{Settings: map[string]string{
		"log_min_duration_statement": "0",
		"logging_collector":          "on",
		"log_destination":            "stderr,csvlog,jsonlog",
		"log_directory":              "log",
		"log_filename":               "pg",
		"log_line_prefix":            "%m [%p] ",
		"log_timezone":               "UTC",
	}})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.URI)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{multiLineStatement, sleepStatement} {
		if _, err := conn.Exec(ctx, q, pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close(ctx)
	pg.Pgbench(t, "-i", "-s", "1", "-q")
	pg.Pgbench(t, "-c", "2", "-t", "50", "-M", "prepared")
	pg.Pgbench(t, "-c", "2", "-t", "50")
	dir := filepath.Join(pg.DataDir, "log")
	logs := serverLogs{stderr: filepath.Join(dir, "pg"), csv: filepath.Join(dir, "pg.csv"), json: filepath.Join(dir, "pg.json")}
	// Wait for the collector to write the last pgbench statement everywhere.
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range []string{logs.stderr, logs.csv, logs.json} {
		for countDurations(t, p) < countDurations(t, logs.stderr) || countDurations(t, p) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the collector did not catch up", p)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return logs
}

func countDurations(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "duration: ")
}

// timedStatement matches the stderr lines the format counts, independently
// of its parser.
var timedStatement = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC \[\d+\] LOG:  duration: ([0-9.]+) ms  (?:statement|execute [^:]+):`)

// timedStatementWithTime also captures the log time.
var timedStatementWithTime = regexp.MustCompile(`(?m)^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) UTC \[\d+\] LOG:  duration: ([0-9.]+) ms  (?:statement|execute [^:]+):`)

// expectedTotals counts and sums the timed statements of a stderr log.
func expectedTotals(t *testing.T, path string) (count int, sumUs float64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range timedStatement.FindAllStringSubmatch(string(b), -1) {
		ms, _ := strconv.ParseFloat(m[1], 64)
		count++
		sumUs += ms * 1000
	}
	return count, sumUs
}

// readLog opens path with the format and returns its intervals.
func readLog(t *testing.T, path string, opts source.Options) ([]stream.Interval, *input.Diagnostics) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	diag := input.NewDiagnostics(os.Stderr, 5)
	src, err := Open(source.Input{Name: filepath.Base(path), Reader: f, Diag: diag}, opts)
	if err != nil {
		t.Fatal(err)
	}
	var ivs []stream.Interval
	if err := src.Run(context.Background(), func(iv stream.Interval) error {
		ivs = append(ivs, iv)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ivs, diag
}

// seriesTotals sums each series' count and exact sum over intervals, and
// checks the intervals tile time without overlap.
func seriesTotals(t *testing.T, ivs []stream.Interval) map[string][2]float64 {
	t.Helper()
	tot := map[string][2]float64{}
	for i, iv := range ivs {
		if i > 0 && !iv.Start.Equal(ivs[i-1].End()) {
			t.Errorf("interval %d starts %s, previous ended %s", i, iv.Start, ivs[i-1].End())
		}
		for _, s := range iv.Series {
			if err := s.Hist.Validate(); err != nil {
				t.Errorf("%s: %v", s.Key, err)
			}
			if s.Hist.Unit != hist.Microsecond || !s.Hist.SumExact {
				t.Errorf("%s: unit %v exact %v", s.Key, s.Hist.Unit, s.Hist.SumExact)
			}
			v := tot[s.Key.Event]
			tot[s.Key.Event] = [2]float64{v[0] + s.Hist.Count(), v[1] + s.Hist.Sum}
		}
	}
	return tot
}

func TestRealServerLogsInAllThreeFormats(t *testing.T) {
	logs := produceServerLogs(t)
	wantCount, wantSum := expectedTotals(t, logs.stderr)
	// 4 + 2 pgbench runs × 2 clients × 50 transactions × 7 statements + -i's.
	if wantCount < 2+2*2*50*7 {
		t.Fatalf("only %d timed statements in the stderr log", wantCount)
	}
	var first map[string][2]float64
	for _, path := range []string{logs.stderr, logs.csv, logs.json} {
		t.Run(filepath.Ext(path), func(t *testing.T) {
			prefix := readPrefix(t, path, 64<<10)
			if v := Detect(prefix); v != input.Yes {
				t.Errorf("Detect = %v", v)
			}
			ivs, diag := readLog(t, path, source.Options{Interval: time.Second})
			if n := diag.Count(filepath.Base(path)); n != 0 {
				t.Errorf("%d malformed lines", n)
			}
			tot := seriesTotals(t, ivs)
			all := tot[AllStatements]
			if int(all[0]) != wantCount || math.Abs(all[1]-wantSum) > 1e-6*wantSum {
				t.Errorf("all statements: %v events, %v µs; want %d, %v", all[0], all[1], wantCount, wantSum)
			}
			for name, want := range map[string]float64{
				"UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?;": 200,
				"BEGIN;":                200,
				"END;":                  200,
				"select ? as a, ? as b": 1,
				"select pg_sleep(?)":    1,
			} {
				if got := tot[name][0]; got != want {
					t.Errorf("%q: %v events, want %v", name, got, want)
				}
			}
			if s := tot["select pg_sleep(?)"][1]; s < 20000 || s > 5e6 {
				t.Errorf("pg_sleep(0.02) took %v µs", s)
			}
			var perSeries float64
			for name, v := range tot {
				if name != AllStatements {
					perSeries += v[0]
				}
			}
			if perSeries != all[0] {
				t.Errorf("series hold %v events, all statements %v", perSeries, all[0])
			}
			if first == nil {
				first = tot
			} else if len(tot) != len(first) {
				t.Errorf("%d series, stderr log has %d", len(tot), len(first))
			} else {
				for name, v := range first {
					if tot[name][0] != v[0] || math.Abs(tot[name][1]-v[1]) > 1e-6*(1+v[1]) {
						t.Errorf("%q: %v here, %v in the stderr log", name, tot[name], v)
					}
				}
			}
		})
	}
}

func readPrefix(t *testing.T, path string, n int) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b[:min(n, len(b))]
}

// TestFollowsALiveServerLog follows the stderr log of a running server (no
// collector: the server's own stderr file) while statements run, and sees
// them in intervals emitted before the source is stopped.
func TestFollowsALiveServerLog(t *testing.T) {
	pg := dbtest.StartPostgres(t, dbtest.PostgresOptions{Settings: map[string]string{
		"log_min_duration_statement": "0",
		"log_line_prefix":            "%m [%p] ",
		"log_timezone":               "UTC",
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	diag := input.NewDiagnostics(os.Stderr, 5)
	op := &source.Opener{Formats: []source.Format{Format()}, Options: source.Options{Follow: true, Interval: 500 * time.Millisecond}, Diag: diag}
	src, err := op.Open(ctx, pg.StderrLog)
	if err != nil {
		t.Fatal(err)
	}
	ivs := make(chan stream.Interval, 1000)
	done := make(chan error, 1)
	go func() {
		done <- src.Run(ctx, func(iv stream.Interval) error { ivs <- iv; return nil })
	}()
	conn, err := pgx.Connect(ctx, pg.URI)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	const runs = 25
	for i := 0; i < runs; i++ {
		if _, err := conn.Exec(ctx, "select 123 as followed_"+strconv.Itoa(i%2), pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatal(err)
		}
	}
	// The statements' window closes one interval after it ends, on the
	// follower's timer: no more log lines are needed.
	seen := 0.0
	deadline := time.After(15 * time.Second)
	for seen < runs {
		select {
		case iv := <-ivs:
			for _, s := range iv.Series {
				if strings.HasPrefix(s.Key.Event, "select ? as followed_") {
					seen += s.Hist.Count()
				}
			}
		case <-deadline:
			t.Fatalf("saw %v of %d followed statements while following", seen, runs)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after cancel: %v", err)
	}
	if seen != runs {
		t.Errorf("saw %v followed statements, want %d", seen, runs)
	}
}
