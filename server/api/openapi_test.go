package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/audit/correlate"
	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/authtest"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/server/api"
	"github.com/latscope/latscope/server/auditwatch"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/config"
	"github.com/latscope/latscope/server/httpsec"
	"github.com/latscope/latscope/server/jobctl"
	"github.com/latscope/latscope/server/jobs"
	"github.com/latscope/latscope/server/runs"
	"github.com/latscope/latscope/sink"
	csvsink "github.com/latscope/latscope/sink/csv"
	"github.com/latscope/latscope/sink/jsonl"
	lsrsink "github.com/latscope/latscope/sink/lsr"
	"github.com/latscope/latscope/sink/promnative"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/audittimeline"
)

// openAPIFile is the API's contract, published in docs/.
const openAPIFile = "../../docs/openapi.yaml"

func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile(openAPIFile)
	if err != nil {
		t.Fatalf("%s: %v", openAPIFile, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("%s is not valid OpenAPI: %v", openAPIFile, err)
	}
	return doc
}

// serveRouter builds latscope serve's router as the server does
// (api.RegisterServe), over an archive holding one histogram series and
// one mean series, with the admin "root".
func serveRouter(t *testing.T) *httpsec.Router {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	store, err := auth.OpenPath(ctx, filepath.Join(dir, "auth.db"),
		auth.Options{Argon2: authtest.FastArgon2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if _, err := store.AddUser(ctx, auth.LocalActor(), "root", auth.Admin, rootPassword); err != nil {
		t.Fatal(err)
	}
	a, err := archive.Open(filepath.Join(dir, "data"), archive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	start := time.Now().Add(-time.Minute).Truncate(time.Second)
	series := promnative.NewMapper(promnative.Options{Host: "db01"})
	for i := range 3 {
		h := hist.NewExact(hist.Microsecond, 0)
		for _, v := range []float64{180, 250, 900 * float64(i+1)} {
			_ = h.Record(v)
		}
		iv := stream.Interval{Source: "db01", Start: start.Add(time.Duration(i) * time.Second), Duration: time.Second,
			Series: []stream.SeriesHist{{Key: stream.Key{Event: "log file sync"}, Hist: h}},
			Means:  []stream.SeriesMean{{Key: stream.Key{Event: "db file scattered read"}, Count: 40, Sum: 12000, Unit: hist.Microsecond}}}
		if err := a.Write(ctx, iv); err != nil {
			t.Fatal(err)
		}
		series.Add("db01", iv)
	}
	last := start.Add(2 * time.Second)
	status := func() []jobs.Status {
		return []jobs.Status{{Name: "db01", Source: "postgres://latscope@db01/app", Interval: "1s", Retention: "3d",
			State: jobs.Running, Since: &start, LastInterval: &last, Intervals: 3},
			{Name: "db02", Source: "mysql://latscope@db02:3306/", Interval: "1s",
				State: jobs.Reconnecting, Since: &last, LastError: "connection refused", Intervals: 1}}
	}
	rt := httpsec.NewRouter(store, httpsec.Config{})
	api.RegisterServe(rt, api.Data{Archive: a, Jobs: status, Sinks: []sink.Format{lsrsink.Format(), jsonl.Format(), csvsink.Format()}, JobControl: jobControl(t, store, dir), Runs: fakeRuns(t, dir),
		Metrics: series, AuditWatches: auditWatches(t, dir), AuditTimeline: auditTimeline})
	return rt
}

// auditWatches is one audit watch, "orcl", holding the chains of the
// synthetic scenario (testdata/audit/correlate-synthetic) as the server
// reads them back from its data directory; it is not run.
func auditWatches(t *testing.T, dir string) *auditwatch.Set {
	t.Helper()
	scenario := filepath.Dir(testenv.DataFile(t, "audit/correlate-synthetic/audit.log"))
	files, _ := filepath.Glob(filepath.Join(scenario, "*"))
	m, err := correlate.Load(t.Context(), slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, ".md") }),
		input.NewDiagnostics(io.Discard, 0), correlate.Options{Year: 2026})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, c := range m.Chains(correlate.Filter{}) {
		line, _ := json.Marshal(c)
		b.Write(append(line, '\n'))
	}
	if err := os.MkdirAll(filepath.Join(dir, "auditwatch"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "auditwatch", "orcl.jsonl"), b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := auditwatch.Open(auditwatch.Options{Data: dir}, []auditwatch.Watch{{Name: "orcl", Files: []string{scenario}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(set.Close)
	return set
}

func auditTimeline(w io.Writer, title string, chains []correlate.Chain) error {
	return audittimeline.Write(w, audittimeline.Report{Title: title, Chains: chains})
}

// jobControl is a job manager over a runner that is not started: changes
// are checked, kept and audited, and no source opens.
func jobControl(t *testing.T, store *auth.Store, dir string) *jobctl.Manager {
	t.Helper()
	build := func(cj config.Job) (jobs.Job, error) {
		return jobs.Job{Name: cj.Name, Source: jobctl.RedactSource(cj.Source), Interval: cj.Every, Schedule: cj.Plan,
			Open: func(context.Context, source.Link) (source.Source, error) {
				return nil, errors.New("not run in this test")
			}}, nil
	}
	runner, err := jobs.NewRunner(nil, nil, jobs.DefaultBackoff(), nil)
	if err != nil {
		t.Fatal(err)
	}
	js, err := jobctl.OpenStore(t.Context(), filepath.Join(dir, "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { js.Close() })
	configured, _ := build(config.Job{Name: "cfg", Source: "iotest:/var/tmp", Every: time.Second})
	quick, _ := build(config.Job{Name: "/var/log/app.log", Source: "/var/log/app.log", Every: time.Second}) // named after its SOURCE
	m, err := jobctl.New(t.Context(), runner, js, []jobs.Job{configured, quick}, jobctl.Options{Build: build, Audit: store})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// fakeRuns is a runs executor whose "latscope" is a shell script: an
// iotest sleeps (until cancelled), anything else writes a line and ends.
// The runs themselves are tested with the real binary in cmd/latscope.
func fakeRuns(t *testing.T, dir string) *runs.Executor {
	t.Helper()
	bin := filepath.Join(dir, "latscope")
	script := "#!/bin/sh\ncase \"$1\" in iotest) exec sleep 30;; esac\necho \"fake latscope $1\" >&2\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ex, err := runs.Open(context.Background(), runs.Options{Data: filepath.Join(dir, "data"), Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	return ex
}

const rootPassword = "root-Pa55word-XYZ"

// TestOpenAPIMatchesRouter checks docs/openapi.yaml against the router: the
// same routes both ways, each with its least role and the security the
// router enforces (none only for httpsec.PublicRoutes; a session's CSRF
// header on state-changing methods).
func TestOpenAPIMatchesRouter(t *testing.T) {
	doc := loadOpenAPI(t)
	routes := serveRouter(t).Routes()
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	for _, ri := range routes {
		if !documented[ri.Pattern()] {
			t.Errorf("route %s is not in %s", ri.Pattern(), openAPIFile)
			continue
		}
		delete(documented, ri.Pattern())
		op := doc.Paths.Value(ri.Path).GetOperation(ri.Method)
		if got, want := fmt.Sprint(op.Extensions["x-latscope-role"]), wantRole(ri); got != want {
			t.Errorf("%s: x-latscope-role %s, the router requires %s", ri.Pattern(), got, want)
		}
		if got, want := securityOf(doc, op), wantSecurity(ri); got != want {
			t.Errorf("%s: security %s, the router enforces %s", ri.Pattern(), got, want)
		}
	}
	for pattern := range documented {
		t.Errorf("%s documents %s, which the router does not have", openAPIFile, pattern)
	}
}

func wantRole(ri httpsec.RouteInfo) string {
	if ri.Public {
		return "public"
	}
	return ri.MinRole.String()
}

// wantSecurity is the credentials a route accepts, as securityOf writes
// them: alternatives separated by " | ", schemes of one alternative by "+".
func wantSecurity(ri httpsec.RouteInfo) string {
	switch {
	case ri.Public:
		return "none"
	case ri.StateChanging():
		return "bearerAuth | csrfHeader+sessionCookie"
	}
	return "bearerAuth | sessionCookie"
}

func securityOf(doc *openapi3.T, op *openapi3.Operation) string {
	reqs := doc.Security
	if op.Security != nil {
		reqs = *op.Security
	}
	var alts []string
	for _, req := range reqs {
		var schemes []string
		for name := range req {
			schemes = append(schemes, name)
		}
		slices.Sort(schemes)
		alts = append(alts, strings.Join(schemes, "+"))
	}
	if len(alts) == 0 {
		return "none"
	}
	slices.Sort(alts)
	return strings.Join(alts, " | ")
}

// TestOpenAPIResponses calls every route of a real server, as an admin
// session and as a stranger, and validates each answer (status, and body
// against the schema) with docs/openapi.yaml.
func TestOpenAPIResponses(t *testing.T) {
	doc := loadOpenAPI(t)
	rt := serveRouter(t)
	h, err := rt.Handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := &apiClient{t: t, doc: doc, base: srv.URL, called: map[string]bool{}}
	jar, _ := cookiejar.New(nil)
	c.http = &http.Client{Jar: jar}

	c.call("GET", "/healthz", "/healthz", nil, http.StatusOK)
	c.call("GET", "/api/v1/jobs", "/api/v1/jobs", nil, http.StatusUnauthorized)
	c.call("POST", "/api/v1/login", "/api/v1/login", map[string]string{"user": "root", "password": "wrong"}, http.StatusUnauthorized)
	login := c.call("POST", "/api/v1/login", "/api/v1/login", map[string]string{"user": "root", "password": rootPassword}, http.StatusOK)
	c.csrf = login["csrf_token"].(string)
	c.call("GET", "/api/v1/me", "/api/v1/me", nil, http.StatusOK)
	tok := c.call("POST", "/api/v1/tokens", "/api/v1/tokens", map[string]string{"name": "grafana", "role": "viewer", "expires_in": "720h"}, http.StatusCreated)
	c.call("GET", "/api/v1/tokens?all=true", "/api/v1/tokens", nil, http.StatusOK)
	c.call("POST", "/api/v1/users", "/api/v1/users", map[string]string{"name": "alice", "role": "operator"}, http.StatusCreated)
	c.call("POST", "/api/v1/users", "/api/v1/users", map[string]string{"name": "alice", "role": "operator"}, http.StatusConflict)
	c.call("POST", "/api/v1/users/alice/password", "/api/v1/users/{name}/password", map[string]string{}, http.StatusOK)
	c.call("PUT", "/api/v1/users/alice/role", "/api/v1/users/{name}/role", map[string]string{"role": "viewer"}, http.StatusNoContent)
	c.call("GET", "/api/v1/users", "/api/v1/users", nil, http.StatusOK)
	c.call("GET", "/api/v1/audit?limit=5", "/api/v1/audit", nil, http.StatusOK)
	c.call("GET", "/api/v1/jobs", "/api/v1/jobs", nil, http.StatusOK)
	series := c.call("GET", "/api/v1/series", "/api/v1/series", nil, http.StatusOK)
	kinds := map[string]bool{}
	for _, s := range series["series"].([]any) {
		id, kind := fmt.Sprint(s.(map[string]any)["id"]), s.(map[string]any)["kind"].(string)
		kinds[kind] = true
		summary := c.call("GET", "/api/v1/series/"+id+"/histogram?from=-1h&to=now", "/api/v1/series/{id}/histogram", nil, http.StatusOK)
		if summary[kind] == nil { // "histogram" or "mean"
			t.Errorf("series %s of kind %s: no %q summary in %v", id, kind, kind, summary)
		}
		c.call("GET", "/api/v1/series/"+id+"/intervals?resolution=raw", "/api/v1/series/{id}/intervals", nil, http.StatusOK)
		c.call("GET", "/api/v1/series/"+id+"/heatmap?columns=10&rows_per_octave=4", "/api/v1/series/{id}/heatmap", nil, http.StatusOK)
	}
	if !kinds["histogram"] || !kinds["mean"] {
		t.Errorf("series of kinds %v; want a histogram and a mean series validated", kinds)
	}
	c.call("GET", "/api/v1/live?series=%5B", "/api/v1/live", nil, http.StatusBadRequest)
	c.call("GET", "/api/v1/live", "/api/v1/live", nil, http.StatusServiceUnavailable) // no hub behind this router
	c.call("GET", "/metrics", "/metrics", nil, http.StatusOK)
	c.call("GET", "/api/v1/series/99/histogram", "/api/v1/series/{id}/histogram", nil, http.StatusNotFound)
	// No fleet store behind this router: the list says so, a series is
	// not found (cmd/latscope's fleet test validates the answers of a
	// real Prometheus).
	c.call("GET", "/api/v1/fleet/series", "/api/v1/fleet/series", nil, http.StatusOK)
	c.call("GET", "/api/v1/fleet/series/7/heatmap", "/api/v1/fleet/series/{id}/heatmap", nil, http.StatusNotFound)
	c.call("GET", "/api/v1/fleet/series/7/histogram", "/api/v1/fleet/series/{id}/histogram", nil, http.StatusNotFound)
	c.call("GET", "/api/v1/series/1/intervals?resolution=7m", "/api/v1/series/{id}/intervals", nil, http.StatusBadRequest)
	c.call("GET", "/api/v1/series/1/heatmap?columns=0", "/api/v1/series/{id}/heatmap", nil, http.StatusBadRequest)
	for _, format := range []string{"table", "json", "csv", "html"} {
		c.call("GET", "/api/v1/report?series=log*&from=-1h&format="+format, "/api/v1/report", nil, http.StatusOK)
	}
	c.call("GET", "/api/v1/report?format=pdf", "/api/v1/report", nil, http.StatusBadRequest)
	c.call("GET", "/api/v1/report?series=nothing", "/api/v1/report", nil, http.StatusNotFound)
	for _, format := range []string{"lsr", "jsonl", "csv"} {
		c.call("GET", "/api/v1/export?format="+format, "/api/v1/export", nil, http.StatusOK)
	}
	c.call("GET", "/api/v1/export?series=[", "/api/v1/export", nil, http.StatusBadRequest)
	c.call("GET", "/api/v1/export?series=nothing", "/api/v1/export", nil, http.StatusNotFound)
	probe := map[string]any{"name": "probe1", "source": "iotest:/var/tmp", "schedule": "30s every 15m", "retention": "36h", "paused": true}
	if st := c.call("POST", "/api/v1/jobs", "/api/v1/jobs", probe, http.StatusCreated); st["retention"] != "1d12h" {
		t.Errorf("created with retention 36h: %v, want retention 1d12h", st)
	}
	c.call("POST", "/api/v1/jobs", "/api/v1/jobs", probe, http.StatusConflict)
	c.call("POST", "/api/v1/jobs", "/api/v1/jobs", map[string]string{"name": "pw", "source": "postgres://u:secret@db/app"}, http.StatusBadRequest)
	c.call("PUT", "/api/v1/jobs/probe1", "/api/v1/jobs/{name}", map[string]string{"source": "iotest:/var/tmp", "interval": "2s", "retention": "7d"}, http.StatusOK)
	c.call("PUT", "/api/v1/jobs/probe1", "/api/v1/jobs/{name}", map[string]string{"source": "iotest:/var/tmp", "retention": "1y"}, http.StatusBadRequest)
	c.call("PUT", "/api/v1/jobs/cfg", "/api/v1/jobs/{name}", map[string]string{"source": "iotest:/tmp"}, http.StatusConflict)
	c.call("POST", "/api/v1/jobs/probe1/resume", "/api/v1/jobs/{name}/resume", nil, http.StatusOK)
	c.call("POST", "/api/v1/jobs/cfg/pause", "/api/v1/jobs/{name}/pause", nil, http.StatusOK)
	c.call("POST", "/api/v1/jobs/nojob/pause", "/api/v1/jobs/{name}/pause", nil, http.StatusNotFound)
	if st := c.call("POST", "/api/v1/jobs/%2Fvar%2Flog%2Fapp.log/resume", "/api/v1/jobs/{name}/resume", nil, http.StatusOK); st["name"] != "/var/log/app.log" {
		t.Errorf("a job named after a path, escaped: %v", st)
	}
	c.call("POST", "/api/v1/jobs/a%00b/pause", "/api/v1/jobs/{name}/pause", nil, http.StatusBadRequest)
	c.call("DELETE", "/api/v1/jobs/cfg", "/api/v1/jobs/{name}", nil, http.StatusConflict)
	c.call("DELETE", "/api/v1/jobs/probe1", "/api/v1/jobs/{name}", nil, http.StatusNoContent)
	callRuns(t, c)
	if w := c.call("GET", "/api/v1/audit-watches", "/api/v1/audit-watches", nil, http.StatusOK); len(w["watches"].([]any)) != 1 {
		t.Errorf("audit watches: %v", w)
	}
	if ch := c.call("GET", "/api/v1/audit-watches/orcl/chains?since=2026-11-20T10:06:01Z", "/api/v1/audit-watches/{name}/chains", nil, http.StatusOK); len(ch["chains"].([]any)) == 0 {
		t.Errorf("audit watch chains: %v", ch)
	}
	c.call("GET", "/api/v1/audit-watches/orcl/chains?format=jsonl", "/api/v1/audit-watches/{name}/chains", nil, http.StatusOK)
	c.call("GET", "/api/v1/audit-watches/orcl/chains?since=yesterday", "/api/v1/audit-watches/{name}/chains", nil, http.StatusBadRequest)
	c.call("GET", "/api/v1/audit-watches/nope/chains", "/api/v1/audit-watches/{name}/chains", nil, http.StatusNotFound)
	c.call("GET", "/api/v1/audit-watches/orcl/timeline", "/api/v1/audit-watches/{name}/timeline", nil, http.StatusOK)
	c.call("GET", "/api/v1/audit-watches/nope/timeline", "/api/v1/audit-watches/{name}/timeline", nil, http.StatusNotFound)
	c.call("DELETE", "/api/v1/tokens/"+tok["id"].(string), "/api/v1/tokens/{id}", nil, http.StatusNoContent)
	c.call("DELETE", "/api/v1/users/alice", "/api/v1/users/{name}", nil, http.StatusNoContent)
	c.call("POST", "/api/v1/logout", "/api/v1/logout", nil, http.StatusNoContent)

	for _, ri := range rt.Routes() {
		if !c.called[ri.Pattern()] {
			t.Errorf("route %s was not called: add it above", ri.Pattern())
		}
	}
}

// callRuns starts a report (which ends at once) and an iotest (which runs
// until cancelled), and calls every runs route.
func callRuns(t *testing.T, c *apiClient) {
	t.Helper()
	c.call("POST", "/api/v1/runs", "/api/v1/runs", map[string]any{"kind": "report", "params": map[string]string{"from": "-1h"}}, http.StatusCreated)
	c.call("POST", "/api/v1/runs", "/api/v1/runs", map[string]any{"kind": "report", "params": map[string]string{"form": "-1h"}}, http.StatusBadRequest)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r := c.call("GET", "/api/v1/runs/1", "/api/v1/runs/{id}", nil, http.StatusOK)
		if r["state"] == "succeeded" || time.Now().After(deadline) {
			break
		}
	}
	run := c.call("GET", "/api/v1/runs/1", "/api/v1/runs/{id}", nil, http.StatusOK)
	if run["state"] != "succeeded" {
		t.Fatalf("report run %v", run)
	}
	c.call("GET", "/api/v1/runs/1/log?offset=0", "/api/v1/runs/{id}/log", nil, http.StatusOK)
	c.call("GET", "/api/v1/runs/options", "/api/v1/runs/options", nil, http.StatusOK)
	c.call("GET", "/api/v1/runs/1/flame", "/api/v1/runs/{id}/flame", nil, http.StatusNotFound) // a report run: no stacks
	c.call("GET", "/api/v1/runs/1/flame?base=x", "/api/v1/runs/{id}/flame", nil, http.StatusBadRequest)
	c.call("GET", "/api/v1/runs/1/events", "/api/v1/runs/{id}/events", nil, http.StatusOK) // ended: its log and final state
	c.call("GET", "/api/v1/runs/1/events?offset=-1", "/api/v1/runs/{id}/events", nil, http.StatusBadRequest)
	c.call("GET", "/api/v1/runs/99/events", "/api/v1/runs/{id}/events", nil, http.StatusNotFound)
	c.call("GET", "/api/v1/runs/1/outputs/log.txt", "/api/v1/runs/{id}/outputs/{name}", nil, http.StatusOK)
	c.call("GET", "/api/v1/runs/1/outputs/..%2fauth.db", "/api/v1/runs/{id}/outputs/{name}", nil, http.StatusNotFound)
	data := run["commands"].([]any)[0].([]any)[2].(string) // latscope report DATA ...
	scratch := filepath.Join(data, "runs", "scratch")
	c.call("POST", "/api/v1/runs", "/api/v1/runs", map[string]any{"kind": "iotest", "params": map[string]string{"dir": scratch}}, http.StatusCreated)
	c.call("GET", "/api/v1/runs?limit=1", "/api/v1/runs", nil, http.StatusOK)
	c.call("POST", "/api/v1/runs/2/cancel", "/api/v1/runs/{id}/cancel", nil, http.StatusOK)
	c.call("POST", "/api/v1/runs/1/cancel", "/api/v1/runs/{id}/cancel", nil, http.StatusBadRequest)
	c.call("GET", "/api/v1/runs/99", "/api/v1/runs/{id}", nil, http.StatusNotFound)
}

// apiClient is a browser session that checks every answer with the
// OpenAPI document.
type apiClient struct {
	t      *testing.T
	doc    *openapi3.T
	base   string
	http   *http.Client
	csrf   string
	called map[string]bool
}

// call sends method url (with a JSON body unless nil), wants status, and
// validates the answer against the operation of the documented path; it
// returns the decoded JSON object, if any.
func (c *apiClient) call(method, url, path string, body any, status int) map[string]any {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.base+url, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.csrf != "" {
		req.Header.Set(httpsec.CSRFHeader, c.csrf)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, url, err)
	}
	if resp.StatusCode != status {
		c.t.Fatalf("%s %s: status %d (want %d): %s", method, url, resp.StatusCode, status, data)
	}
	c.called[method+" "+path] = true
	got, err := c.validate(method, path, resp, data)
	if err != nil {
		c.t.Errorf("%s %s: %d %s\n  does not match %s: %v", method, url, resp.StatusCode, data, openAPIFile, err)
	}
	return got
}

func (c *apiClient) validate(method, path string, resp *http.Response, data []byte) (map[string]any, error) {
	item := c.doc.Paths.Value(path)
	if item == nil || item.GetOperation(method) == nil {
		return nil, fmt.Errorf("no operation %s %s", method, path)
	}
	ref := item.GetOperation(method).Responses.Status(resp.StatusCode)
	if ref == nil || ref.Value == nil {
		return nil, fmt.Errorf("status %d is not documented", resp.StatusCode)
	}
	mediaType := "application/json"
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		mediaType, _, _ = mime.ParseMediaType(ct)
	}
	media := ref.Value.Content.Get(mediaType)
	if media == nil {
		if len(data) > 0 {
			return nil, fmt.Errorf("a %s body where none is documented", mediaType)
		}
		return nil, nil
	}
	if mediaType != "application/json" {
		return nil, nil // a run's output file: its documented type is the check
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	if err := media.Schema.Value.VisitJSON(v); err != nil {
		return nil, err
	}
	obj, _ := v.(map[string]any)
	return obj, nil
}
