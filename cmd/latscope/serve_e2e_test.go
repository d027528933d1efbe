package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/stream"
)

// restampedRecords returns the PyLatencyMap example's records with their
// times moved to the last minutes (the archive prunes data older than 7
// days when the server maintains it), keeping their spacing.
func restampedRecords(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(testenv.DataFile(t, "pylatencymap/example_latency_data.txt"))
	if err != nil {
		t.Fatal(err)
	}
	stamp := regexp.MustCompile(`timestamp, microsec, (\d+),([^\n]+)`)
	base := time.Now().Add(-2 * time.Minute).Truncate(time.Second)
	var first int64
	var out []string
	for _, rec := range strings.SplitAfter(string(data), "<end record>") {
		m := stamp.FindStringSubmatch(rec)
		if m == nil {
			continue
		}
		us, _ := strconv.ParseInt(m[1], 10, 64)
		if first == 0 {
			first = us
		}
		at := base.Add(time.Duration(us-first) * time.Microsecond)
		line := "timestamp, microsec, " + m[1] + "," + strings.ToUpper(at.Format("02-Jan-06 03.04.05.000000 PM -07:00"))
		out = append(out, strings.Replace(rec, m[0], line, 1))
	}
	return out
}

// server is a running `latscope serve` and its stderr.
type server struct {
	cmd  *exec.Cmd
	base string
	mu   sync.Mutex
	logs strings.Builder
	done chan struct{}
}

func (s *server) stderr() string { s.mu.Lock(); defer s.mu.Unlock(); return s.logs.String() }

// startServe starts the binary and waits for "serving on".
func startServe(t *testing.T, args ...string) *server {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), "LATSCOPE_E2E_DB_PASSWORD=Sekr1t-db-Passw0rd")
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, done: make(chan struct{})}
	ready := make(chan string, 1)
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			s.mu.Lock()
			s.logs.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if addr, ok := strings.CutPrefix(sc.Text(), "latscope: serving on "); ok {
				ready <- strings.Split(addr, ": ")[0]
			}
		}
		io.Copy(io.Discard, pipe)
	}()
	t.Cleanup(func() { cmd.Process.Kill(); <-s.done; cmd.Wait() })
	select {
	case s.base = <-ready:
	case <-time.After(10 * time.Second):
		t.Fatalf("latscope serve did not start:\n%s", s.stderr())
	}
	return s
}

// bootstrapPassword is the admin password a first start printed.
func bootstrapPassword(t *testing.T, srv *server) string {
	t.Helper()
	m := regexp.MustCompile(`created the user admin with the password\n\s+(\S+)`).FindStringSubmatch(srv.stderr())
	if m == nil {
		t.Fatalf("no bootstrap password on stderr:\n%s", srv.stderr())
	}
	return m[1]
}

// apiClient calls the API with a bearer token (or a session cookie).
type apiClient struct {
	t      *testing.T
	base   string
	token  string
	cookie *http.Cookie
	bodies *strings.Builder
}

func (c *apiClient) call(method, path, body string, headers ...string) (int, []byte) {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.cookie != nil {
		req.AddCookie(c.cookie)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	c.bodies.Write(b)
	if resp.StatusCode < 300 {
		for _, ck := range resp.Cookies() {
			c.cookie = ck
		}
	}
	return resp.StatusCode, b
}

func (c *apiClient) get(path string, v any) {
	c.t.Helper()
	status, b := c.call("GET", path, "")
	if status != http.StatusOK {
		c.t.Fatalf("GET %s: %d %s", path, status, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		c.t.Fatalf("GET %s: %v\n%s", path, err, b)
	}
}

type jobState struct {
	Name, State, Backoff string
	LastError            string `json:"last_error"`
	Intervals, Restarts  int
}

func (c *apiClient) jobs() map[string]jobState {
	var resp struct{ Jobs []jobState }
	c.get("/api/v1/jobs", &resp)
	out := map[string]jobState{}
	for _, j := range resp.Jobs {
		out[j.Name] = j
	}
	return out
}

// TestServeEndToEnd runs `latscope serve` as a user would: a followed file
// and a probe of a closed port as jobs, a database job whose password comes
// from the environment; login, a token, jobs, series, a histogram equal to
// `latscope report` of the archive, a restarting job's gap, users add and
// reset, and SIGTERM leaving the archive clean.
func TestServeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	records := restampedRecords(t)
	waits := filepath.Join(dir, "waits.txt")
	if err := os.WriteFile(waits, []byte(strings.Join(records[:6], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	closed := freePort(t)
	config := filepath.Join(dir, "latscope.yaml")
	yaml := "data: " + data + "\nlisten: " + freePort(t) + "\njobs:\n" +
		"  - name: waits\n    source: " + waits + "\n" +
		"  - name: down\n    source: nettest:" + closed + "\n    interval: 200ms\n" +
		"  - name: db\n    source: postgres://latscope@" + closed + "/app\n    password_env: LATSCOPE_E2E_DB_PASSWORD\n"
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, "--config", config)
	adminPassword := bootstrapPassword(t, srv)
	bodies := &strings.Builder{}
	anon := &apiClient{t: t, base: srv.base, bodies: bodies}
	if status, _ := anon.call("GET", "/api/v1/jobs", ""); status != http.StatusUnauthorized {
		t.Fatalf("jobs without credentials: %d", status)
	}
	session := &apiClient{t: t, base: srv.base, bodies: bodies}
	status, b := session.call("POST", "/api/v1/login", `{"user":"admin","password":"`+adminPassword+`"}`)
	if status != http.StatusOK {
		t.Fatalf("login: %d %s", status, b)
	}
	var me struct {
		CSRF string `json:"csrf_token"`
	}
	json.Unmarshal(b, &me)
	status, b = session.call("POST", "/api/v1/tokens", `{"name":"e2e","role":"viewer"}`, "X-CSRF-Token", me.CSRF)
	var tok struct{ Token string }
	if status != http.StatusCreated || json.Unmarshal(b, &tok) != nil || tok.Token == "" {
		t.Fatalf("token: %d %s", status, b)
	}
	api := &apiClient{t: t, base: srv.base, token: tok.Token, bodies: bodies}

	// The file grows while the server follows it.
	f, err := os.OpenFile(waits, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range records[6:10] {
		f.WriteString(rec)
	}
	f.Close()
	var jobs map[string]jobState
	deadline := time.Now().Add(10 * time.Second)
	for {
		jobs = api.jobs()
		if jobs["waits"].Intervals == 8 && jobs["down"].Restarts >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// 10 cumulative records make 9 deltas, and the last waits: the records
	// are split after "<end record>", so the file ends in a line without
	// its newline, which a follower holds as possibly half-written until
	// the line ends (the next record) or the run does.
	if w := jobs["waits"]; w.State != "running" || w.Intervals != 8 {
		t.Fatalf("file job %+v: want running with 8 intervals (10 records)", w)
	}
	if d := jobs["down"]; d.State != "restarting" || d.Restarts < 2 || d.Backoff == "" || !strings.Contains(d.LastError, "cannot connect") {
		t.Fatalf("failing job %+v: want restarting with its backoff and error", d)
	}
	// A database source retries by itself: its job shows the lost server.
	if d := jobs["db"]; d.State != "reconnecting" || d.Restarts != 0 || !strings.Contains(d.LastError, "connection failed") {
		t.Fatalf("database job without a server %+v: want reconnecting with its error", d)
	}

	var series struct {
		Series []struct {
			ID            int64
			Source, Event string
		}
	}
	api.get("/api/v1/series", &series)
	if len(series.Series) != 1 || series.Series[0].Source != "waits" {
		t.Fatalf("series %+v: want the file job's one series", series.Series)
	}
	var hist struct{ Histogram map[string]any }
	api.get("/api/v1/series/"+strconv.FormatInt(series.Series[0].ID, 10)+"/histogram", &hist)
	r := run(t, "", "report", data, "--format", "json")
	var rep struct{ Series []map[string]any }
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rep) != nil || len(rep.Series) != 1 {
		t.Fatalf("latscope report %s: %d\n%s%s", data, r.code, r.stdout, r.stderr)
	}
	for _, k := range []string{"count", "sum_us", "sum_exact", "mean_us", "p50_us", "p90_us", "p99_us", "buckets"} {
		if !reflect.DeepEqual(hist.Histogram[k], rep.Series[0][k]) {
			t.Errorf("histogram %s = %v; latscope report says %v", k, hist.Histogram[k], rep.Series[0][k])
		}
	}
	if hist.Histogram["count"].(float64) == 0 {
		t.Error("empty histogram")
	}
	// Prometheus' text exposition counts the same events.
	status, b = api.call("GET", "/metrics", "")
	count := regexp.MustCompile(`(?m)^latscope_wait_seconds_count\{[^}]*job="waits",source_kind="file"\} (\S+)$`).FindSubmatch(b)
	if status != http.StatusOK || count == nil {
		t.Fatalf("GET /metrics: %d\n%s", status, b)
	}
	if n, _ := strconv.ParseFloat(string(count[1]), 64); n != rep.Series[0]["count"].(float64) {
		t.Errorf("/metrics counts %s events, latscope report %v", count[1], rep.Series[0]["count"])
	}
	var ivs struct{ Intervals []map[string]any }
	api.get("/api/v1/series/"+strconv.FormatInt(series.Series[0].ID, 10)+"/intervals?resolution=raw&from=-1h", &ivs)
	if len(ivs.Intervals) != 8 {
		t.Errorf("%d intervals, want 8", len(ivs.Intervals))
	}
	if status, b := api.call("GET", "/api/v1/series/99/histogram", ""); status != http.StatusNotFound || !strings.Contains(string(b), `"error"`) {
		t.Errorf("unknown series: %d %s", status, b)
	}
	if status, _ := api.call("GET", "/api/v1/series/1/intervals?resolution=7m", ""); status != http.StatusBadRequest {
		t.Errorf("resolution of no tier: %d, want 400", status)
	}

	// A viewer added on the command line logs in; reset changes the password.
	add := run(t, "", "serve", "users", "add", "alice", "--role", "viewer", "--data", data)
	pw := regexp.MustCompile(`password\n\s+(\S+)`).FindStringSubmatch(add.stdout)
	if add.code != 0 || pw == nil {
		t.Fatalf("users add: %d %s %s", add.code, add.stdout, add.stderr)
	}
	alice := &apiClient{t: t, base: srv.base, bodies: bodies}
	if status, b := alice.call("POST", "/api/v1/login", `{"user":"alice","password":"`+pw[1]+`"}`); status != http.StatusOK {
		t.Fatalf("alice's login: %d %s", status, b)
	}
	reset := run(t, "", "serve", "users", "reset", "alice", "--data", data)
	if reset.code != 0 || !strings.Contains(reset.stdout, "new password of alice") {
		t.Fatalf("users reset: %d %s %s", reset.code, reset.stdout, reset.stderr)
	}
	if status, _ := (&apiClient{t: t, base: srv.base, bodies: bodies}).call("POST", "/api/v1/login", `{"user":"alice","password":"`+pw[1]+`"}`); status != http.StatusUnauthorized {
		t.Errorf("the old password still logs in: %d", status)
	}

	// SIGTERM: exit 0, the archive closed cleanly and intact, the
	// failing job's outage archived as gaps.
	srv.stop(t)
	a := openIntact(t, data)
	gaps := 0
	a.Read(context.Background(), archive.Query{Resolution: archive.Raw}, func(iv stream.Interval) error {
		if iv.Source == "down" && iv.Gap {
			gaps++
		}
		return nil
	})
	if gaps < 2 {
		t.Errorf("%d gap windows for the failing job, want one per restart", gaps)
	}
	// The database password appears nowhere; the token only in the
	// answer that created it, never in the log.
	if strings.Contains(srv.stderr(), "Sekr1t-db-Passw0rd") || strings.Contains(bodies.String(), "Sekr1t-db-Passw0rd") {
		t.Error("the database password appears in the server's log or the API's answers")
	}
	if strings.Contains(srv.stderr(), tok.Token) || strings.Count(bodies.String(), tok.Token) != 1 {
		t.Error("the API token appears in the log or in more than its creation's answer")
	}
	if strings.Count(srv.stderr(), adminPassword) != 1 {
		t.Errorf("the admin password is printed %d times, want once", strings.Count(srv.stderr(), adminPassword))
	}
}

// viewerToken logs in as the bootstrap admin and creates a viewer token;
// it stays valid across restarts (auth.db).
func viewerToken(t *testing.T, srv *server) string { return bootstrapToken(t, srv, "viewer") }

// bootstrapToken logs in as the bootstrap admin (with the password the
// first start printed) and creates a token of role.
func bootstrapToken(t *testing.T, srv *server, role string) string {
	t.Helper()
	session := &apiClient{t: t, base: srv.base, bodies: &strings.Builder{}}
	status, b := session.call("POST", "/api/v1/login", `{"user":"admin","password":"`+bootstrapPassword(t, srv)+`"}`)
	var me struct {
		CSRF string `json:"csrf_token"`
	}
	if status != http.StatusOK || json.Unmarshal(b, &me) != nil {
		t.Fatalf("login: %d %s", status, b)
	}
	status, b = session.call("POST", "/api/v1/tokens", `{"name":"`+role+`","role":"`+role+`"}`, "X-CSRF-Token", me.CSRF)
	var tok struct{ Token string }
	if status != http.StatusCreated || json.Unmarshal(b, &tok) != nil || tok.Token == "" {
		t.Fatalf("token: %d %s", status, b)
	}
	return tok.Token
}

// stop sends the server SIGTERM and wants it to exit 0.
func (s *server) stop(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	<-s.done
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v\n%s", err, s.stderr())
	}
}

// openIntact opens a stopped server's archive read-only and wants SQLite's
// integrity check to pass.
func openIntact(t *testing.T, data string) *archive.Archive {
	t.Helper()
	a, err := archive.Open(data, archive.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if err := a.IntegrityCheck(context.Background()); err != nil {
		t.Fatal(err)
	}
	return a
}
