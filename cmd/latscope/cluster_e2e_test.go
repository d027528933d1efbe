package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/internal/testkit/dbtest"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// clusterJSON mirrors the parts of the cluster JSON the tests read.
type clusterJSON struct {
	Method   string   `json:"method"`
	KReason  string   `json:"k_reason"`
	Features []string `json:"features"`
	K        int      `json:"k"`
	Inputs   []struct {
		Source     string `json:"source"`
		Kind       string `json:"kind"`
		Rows       int    `json:"rows"`
		Malformed  int    `json:"malformed"`
		Unexecuted int    `json:"unexecuted"`
	} `json:"inputs"`
	Clusters []struct {
		ID       int       `json:"id"`
		Members  []int     `json:"members"`
		Centroid []float64 `json:"centroid"`
	} `json:"clusters"`
	Members []struct {
		Key        string    `json:"key"`
		Text       string    `json:"text"`
		Executions int64     `json:"executions"`
		Demands    []float64 `json:"demands"`
		Cluster    int       `json:"cluster"`
	} `json:"members"`
	Points [][2]float64 `json:"points"`
}

func runClusterJSON(t *testing.T, args ...string) clusterJSON {
	t.Helper()
	r := run(t, "", append([]string{"cluster", "--format", "json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("cluster %v: exit %d: %s", args, r.code, r.stderr)
	}
	var c clusterJSON
	if err := json.Unmarshal([]byte(r.stdout), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClusterCommand(t *testing.T) {
	trace := testenv.DataFile(t, "trc10046/carymillsap-tracing-oracle_23.2/FREE_ora_39079.trc")
	if s := runClusterJSON(t, trace, "--suggest", "silhouette"); !strings.Contains(s.KReason, "the largest mean silhouette") || s.K < 2 {
		t.Errorf("--suggest silhouette: k=%d, %s", s.K, s.KReason)
	}
	c := runClusterJSON(t, trace, "--k", "3", "--linkage", "average")
	if len(c.Members) != 20 || c.K != 3 || len(c.Clusters) != 3 || len(c.Points) != 20 || c.Inputs[0].Unexecuted != 3 {
		t.Fatalf("clusters: %+v", c)
	}
	members := 0
	for _, cl := range c.Clusters {
		members += len(cl.Members)
		for _, m := range cl.Members {
			if c.Members[m].Cluster != cl.ID {
				t.Errorf("member %d in cluster %d says %d", m, cl.ID, c.Members[m].Cluster)
			}
		}
	}
	if members != 20 {
		t.Errorf("clusters hold %d members, want 20", members)
	}

	table := run(t, "", "cluster", trace)
	for _, want := range []string{"Workload clusters of 20 statements", "single linkage (minimum spanning tree)", "Centroids", "Totals", "Members", "33np90g7ha468"} {
		if !strings.Contains(table.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, table.stdout)
		}
	}
	csv := run(t, "", "cluster", trace, "--format", "csv")
	if lines := strings.Count(csv.stdout, "\n"); csv.code != 0 || !strings.HasPrefix(csv.stdout, "cluster,statement,source,kind,executions,cpu_ms,") || lines < 21 {
		t.Errorf("csv: exit %d, %d lines:\n%s", csv.code, lines, csv.stdout)
	}

	page := filepath.Join(t.TempDir(), "c.html")
	if h := run(t, "", "cluster", trace, "--linkage", "ward", "-o", page); h.code != 0 {
		t.Fatalf("-o html: exit %d: %s", h.code, h.stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Content-Security-Policy", `aria-label="dendrogram"`, `aria-label="principal components"`, `id="cluster-data"`, "Centroids", "Number of clusters"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(string(b), "http://") || strings.Contains(string(b), "https://") {
		t.Errorf("page refers to the network")
	}
}

func TestClusterCommandErrors(t *testing.T) {
	if h := run(t, "", "cluster", "--help"); h.code != 0 || !strings.Contains(h.stdout, "Examples:") {
		t.Errorf("cluster --help: exit %d, no examples", h.code)
	}
	for _, args := range [][]string{{"cluster"}, {"cluster", "-", "--format", "html"}, {"cluster", "-", "--linkage", "complete"},
		{"cluster", "-", "--scale", "sqrt"}, {"cluster", "-", "--k", "-1"}, {"cluster", "-", "--max-k", "1"}, {"cluster", "-", "--suggest", "elbow"}} {
		if r := run(t, "", args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, r.code, r.stderr)
		}
	}
	if r := run(t, "not a trace\n", "cluster", "-"); r.code != 1 || !strings.Contains(r.stderr, "not a 10046 trace, pg_stat_statements or performance_schema") {
		t.Errorf("cluster of text: exit %d, stderr %q", r.code, r.stderr)
	}
	missing := "queryid,calls,total_exec_time,shared_blks_read\n1,2,3,4\n"
	if r := run(t, missing, "cluster", "-"); r.code != 1 || !strings.Contains(r.stderr, "-:1: pg_stat_statements export without column shared_blks_hit") {
		t.Errorf("CSV without a column: exit %d, stderr %q", r.code, r.stderr)
	}
	bad := "queryid,calls,total_exec_time,shared_blks_hit,shared_blks_read\n1,2,3,4,5\n2,x,3,4,5\n3,2,3,4\n4,1,9,9,9\n"
	r := run(t, bad, "cluster", "-", "--format", "json")
	var c clusterJSON
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &c) != nil || len(c.Members) != 2 || c.Inputs[0].Malformed != 2 ||
		!strings.Contains(r.stderr, "-:3: ") || !strings.Contains(r.stderr, "-:4: ") {
		t.Errorf("CSV with bad rows: exit %d, %+v\n%s", r.code, c, r.stderr)
	}
}

// TestClusterPgStatStatements clusters a real PostgreSQL's statements
// after pgbench and a few heavier queries, live (postgres://) and from
// psql's CSV export of pg_stat_statements: the same statements, with the
// same demands.
func TestClusterPgStatStatements(t *testing.T) {
	pg := dbtest.StartPostgres(t, dbtest.PostgresOptions{Preload: []string{"pg_stat_statements"},
		Settings: map[string]string{"track_io_timing": "on", "shared_buffers": "1MB"}})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.URI)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Before the extension is created the error says what to do.
	if r := run(t, "", "cluster", pg.URI); r.code != 1 || !strings.Contains(r.stderr, "is the extension created") {
		t.Errorf("without the extension: exit %d: %s", r.code, r.stderr)
	}
	if _, err := conn.Exec(ctx, "create extension pg_stat_statements"); err != nil {
		t.Fatal(err)
	}
	pg.Pgbench(t, "-i", "-s", "2", "-q")
	pg.Pgbench(t, "-b", "tpcb-like", "-t", "200")
	pg.Pgbench(t, "-b", "select-only", "-t", "500")
	for range 3 {
		for _, q := range []string{"select count(*) from pgbench_accounts", "select aid from pgbench_accounts order by abalance, bid desc limit 5",
			"select sum(abalance) from pgbench_accounts a join pgbench_branches b using (bid)"} {
			if _, err := conn.Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	export := filepath.Join(t.TempDir(), "pgss.csv")
	psql := exec.Command(filepath.Join(pg.BinDir, "psql"), "-h", "127.0.0.1", "-p", strconv.Itoa(pg.Port), "-U", "postgres", "-X", "-q",
		"-c", `\copy (select * from pg_stat_statements) to '`+export+`' csv header`, "postgres")
	if out, err := psql.CombinedOutput(); err != nil {
		t.Fatalf("psql \\copy: %v\n%s", err, out)
	}
	fromCSV := runClusterJSON(t, export, "--linkage", "ward")
	live := runClusterJSON(t, pg.URI, "--linkage", "ward")
	if len(fromCSV.Members) < 15 || fromCSV.Inputs[0].Kind != "pg_stat_statements" || fromCSV.Inputs[0].Malformed != 0 || len(fromCSV.Clusters) < 2 {
		t.Fatalf("from the CSV export: %d statements, %d clusters, inputs %+v", len(fromCSV.Members), len(fromCSV.Clusters), fromCSV.Inputs)
	}
	for _, f := range []string{"exec_ms", "logical_reads", "physical_reads", "user_io_ms", "temp_blocks"} {
		if !strings.Contains(strings.Join(fromCSV.Features, ","), f) {
			t.Errorf("features %v lack %s", fromCSV.Features, f)
		}
	}
	liveByKey := map[string]int{}
	for i, m := range live.Members {
		liveByKey[m.Key] = i
	}
	for _, m := range fromCSV.Members {
		i, ok := liveByKey[m.Key]
		if !ok {
			t.Errorf("statement %s of the export is not in pg_stat_statements live", m.Key)
			continue
		}
		lm := live.Members[i]
		if lm.Executions != m.Executions {
			t.Errorf("statement %s: %d executions live, %d exported", m.Key, lm.Executions, m.Executions)
		}
		for j, f := range fromCSV.Features {
			if k := indexOfString(live.Features, f); k < 0 || lm.Demands[k] != m.Demands[j] {
				t.Errorf("statement %s: %s differs live (%v) and exported (%v)", m.Key, f, lm.Demands, m.Demands)
				break
			}
		}
	}
	t.Logf("%d statements exported, %d live; %s; %s", len(fromCSV.Members), len(live.Members), fromCSV.Method, fromCSV.KReason)
}

// TestClusterPerformanceSchemaDigests clusters a real MariaDB's statement
// digests, exported by the mariadb client in batch mode (tab-separated, as
// mysql -B writes them).
func TestClusterPerformanceSchemaDigests(t *testing.T) {
	m := dbtest.StartMariaDB(t, dbtest.MariaDBOptions{})
	client := func(sql string) string {
		cmd := exec.Command("mariadb", "--no-defaults", "--socket="+m.Socket, "--user=root", "-B", "-e", sql)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("mariadb -e %q: %v: %s", sql, err, stderr.String())
		}
		return string(out)
	}
	client("create database shop; use shop; create table t (id int primary key, v int, pad char(200)); " +
		"insert into t select seq, seq % 97, repeat('x', 200) from seq_1_to_20000")
	for i := range 30 {
		client(fmt.Sprintf("select v from shop.t where id = %d; select count(*) from shop.t where v = %d; "+
			"select * from shop.t order by pad, v desc limit %d; update shop.t set v = v + 1 where id = %d", i+1, i, i+1, i+1))
	}
	export := filepath.Join(t.TempDir(), "digests.tsv")
	if err := os.WriteFile(export, []byte(client("select * from performance_schema.events_statements_summary_by_digest")), 0o644); err != nil {
		t.Fatal(err)
	}
	c := runClusterJSON(t, export, "--linkage", "ward", "--scale", "log", "--k", "4")
	if len(c.Members) < 6 || c.Inputs[0].Kind != "performance_schema" || c.Inputs[0].Malformed != 0 || len(c.Clusters) < 2 {
		t.Fatalf("digests: %d statements, %d clusters, inputs %+v", len(c.Members), len(c.Clusters), c.Inputs)
	}
	for _, f := range []string{"exec_ms", "lock_ms", "rows_examined", "sort_rows"} {
		if indexOfString(c.Features, f) < 0 {
			t.Errorf("features %v lack %s", c.Features, f)
		}
	}
	// The point lookups and the counting scans differ by 20 000 rows
	// examined (the times vary from run to run; the rows do not).
	clusterOf := func(prefix string) int {
		for _, mem := range c.Members {
			if strings.HasPrefix(mem.Text, prefix) {
				return mem.Cluster
			}
		}
		t.Fatalf("no digest %q in %+v", prefix, c.Members)
		return 0
	}
	if lookup, scan := clusterOf("SELECT `v` FROM `shop`"), clusterOf("SELECT COUNT"); lookup == scan {
		t.Errorf("point lookups and counting scans in one cluster (%d):\n%s", lookup, run(t, "", "cluster", export, "--linkage", "ward", "--scale", "log", "--k", "4").stdout)
	}
	t.Logf("%d digests; %s; %s", len(c.Members), c.Method, c.KReason)
}

func indexOfString(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// TestClusterDocExample: every line docs/cluster.md shows of its examples
// is in the output of the command it shows.
func TestClusterDocExample(t *testing.T) {
	checkDocExamples(t, "cluster.md", 2)
}
