package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// apiJob is a job as GET /api/v1/jobs shows it.
type apiJob struct {
	Name, Source, Interval, Retention, Origin, State string
	Intervals                                        int
}

func (c *apiClient) job(name string) (apiJob, bool) {
	c.t.Helper()
	var resp struct{ Jobs []apiJob }
	c.get("/api/v1/jobs", &resp)
	for _, j := range resp.Jobs {
		if j.Name == name {
			return j, true
		}
	}
	return apiJob{}, false
}

// want calls the API and fails unless it answers status; it returns the body.
func (c *apiClient) want(status int, method, path, body string) string {
	c.t.Helper()
	got, b := c.call(method, path, body)
	if got != status {
		c.t.Fatalf("%s %s %s: %d %s; want %d", method, path, body, got, b, status)
	}
	return string(b)
}

// seriesOf is the id of the archive series of a job, 0 if none yet.
func (c *apiClient) seriesOf(job string) int64 {
	var resp struct {
		Series []struct {
			ID     int64
			Source string
		}
	}
	c.get("/api/v1/series", &resp)
	for _, s := range resp.Series {
		if s.Source == job {
			return s.ID
		}
	}
	return 0
}

// windows are a series' raw windows' lengths in seconds, oldest first.
func (c *apiClient) windows(id int64) []float64 {
	var resp struct{ Intervals []struct{ Seconds float64 } }
	c.get("/api/v1/series/"+strconv.FormatInt(id, 10)+"/intervals?resolution=raw&from=-1h", &resp)
	var out []float64
	for _, iv := range resp.Intervals {
		out = append(out, iv.Seconds)
	}
	return out
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// tokenFor returns a client with a token of role for user, whom admin
// adds first unless it is admin itself.
func tokenFor(t *testing.T, admin *apiClient, user, role string) *apiClient {
	t.Helper()
	if user != "admin" {
		admin.want(http.StatusCreated, "POST", "/api/v1/users", `{"name":"`+user+`","role":"`+role+`"}`)
	}
	var tok struct{ Token string }
	b := admin.want(http.StatusCreated, "POST", "/api/v1/tokens", `{"name":"e2e","role":"`+role+`","user":"`+user+`"}`)
	if err := json.Unmarshal([]byte(b), &tok); err != nil {
		t.Fatal(err)
	}
	return &apiClient{t: t, base: admin.base, token: tok.Token, bodies: admin.bodies}
}

// TestServeJobsThroughTheAPI changes jobs of a real `latscope serve`
// through its API: a job created by an admin records into the archive,
// a new interval gives windows of the new length, an operator pauses
// (no new windows) and resumes it, viewers and operators are refused
// what is not theirs, a password in a URI is refused without being
// echoed, the configuration's job cannot be deleted, a restart brings the
// API's jobs back (a paused one paused), and a deleted job stops while its
// series stays; every change is in the audit log with who and from where.
func TestServeJobsThroughTheAPI(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	netAddr, _ := startNetServer(t)
	config := filepath.Join(dir, "latscope.yaml")
	yaml := "data: " + data + "\nlisten: " + freePort(t) + "\njobs:\n  - name: down\n    source: nettest:" + freePort(t) + "\n    retention: 3d\n"
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, "--config", config)
	bodies := &strings.Builder{}
	session := &apiClient{t: t, base: srv.base, bodies: bodies}
	var login struct {
		CSRF string `json:"csrf_token"`
	}
	json.Unmarshal([]byte(session.want(http.StatusOK, "POST", "/api/v1/login", `{"user":"admin","password":"`+bootstrapPassword(t, srv)+`"}`)), &login)
	status, b := session.call("POST", "/api/v1/tokens", `{"name":"root","role":"admin"}`, "X-CSRF-Token", login.CSRF)
	var tok struct{ Token string }
	if status != http.StatusCreated || json.Unmarshal(b, &tok) != nil {
		t.Fatalf("admin token: %d %s", status, b)
	}
	admin := &apiClient{t: t, base: srv.base, token: tok.Token, bodies: bodies}
	operator := tokenFor(t, admin, "olga", "operator")
	viewer := tokenFor(t, admin, "vic", "viewer")

	net := `{"name":"net","source":"nettest:` + netAddr + `","interval":"200ms"}`
	viewer.want(http.StatusForbidden, "POST", "/api/v1/jobs", net)
	operator.want(http.StatusForbidden, "POST", "/api/v1/jobs", net)
	var created apiJob
	json.Unmarshal([]byte(admin.want(http.StatusCreated, "POST", "/api/v1/jobs", net)), &created)
	if created.Origin != "api" || created.Interval != "200ms" {
		t.Errorf("created %+v", created)
	}
	var id int64
	eventually(t, "the new job's series in the archive", func() bool { id = admin.seriesOf("net"); return id != 0 && len(admin.windows(id)) >= 3 })

	// A new interval: windows of the new length follow.
	admin.want(http.StatusOK, "PUT", "/api/v1/jobs/net", `{"source":"nettest:`+netAddr+`","interval":"500ms"}`)
	before := len(admin.windows(id))
	eventually(t, "windows of 500 ms", func() bool {
		w := admin.windows(id)
		return len(w) >= before+2 && w[len(w)-1] > 0.45 && w[len(w)-2] > 0.45
	})

	// The operator pauses and resumes; the viewer may not.
	viewer.want(http.StatusForbidden, "POST", "/api/v1/jobs/net/pause", "")
	operator.want(http.StatusForbidden, "DELETE", "/api/v1/jobs/net", "")
	var paused apiJob
	json.Unmarshal([]byte(operator.want(http.StatusOK, "POST", "/api/v1/jobs/net/pause", "")), &paused)
	if paused.State != "paused" {
		t.Errorf("after pause: %+v", paused)
	}
	n := len(admin.windows(id))
	time.Sleep(1200 * time.Millisecond)
	if later := len(admin.windows(id)); later != n {
		t.Errorf("a paused job wrote %d windows", later-n)
	}
	operator.want(http.StatusOK, "POST", "/api/v1/jobs/net/resume", "")
	eventually(t, "windows after resume", func() bool { return len(admin.windows(id)) >= n+2 })

	// Refused: a password in the URI (not echoed), an unknown scheme, a
	// relative path; the configuration's job cannot be deleted.
	for _, uri := range []string{"postgres://latscope:Sekr1t-uri-Passw0rd@127.0.0.1:1/app", "postgres://latscope:Sekr1t-uri-Passw0rd@127.0.0.1:badport/app"} {
		leak := admin.want(http.StatusBadRequest, "POST", "/api/v1/jobs", `{"name":"pg","source":"`+uri+`"}`)
		if strings.Contains(leak, "Sekr1t") || !strings.Contains(leak, "password_env") {
			t.Errorf("password in a URI: %s", leak)
		}
	}
	if b := admin.want(http.StatusBadRequest, "POST", "/api/v1/jobs", `{"name":"g","source":"gopher://db01/x"}`); !strings.Contains(b, `unknown scheme \"gopher\"`) {
		t.Errorf("unknown scheme: %s", b)
	}
	admin.want(http.StatusBadRequest, "POST", "/api/v1/jobs", `{"name":"rel","source":"logs/app.log"}`)
	if b := admin.want(http.StatusConflict, "DELETE", "/api/v1/jobs/down", ""); !strings.Contains(b, "edit the file") {
		t.Errorf("deleting the configuration's job: %s", b)
	}
	admin.want(http.StatusCreated, "POST", "/api/v1/jobs", `{"name":"pgenv","source":"postgres://latscope@`+freePort(t)+`/app","password_env":"LATSCOPE_E2E_DB_PASSWORD","retention":"12h","paused":true}`)

	// A restart brings the API's jobs back.
	srv.stop(t)
	logs := srv.stderr()
	srv = startServe(t, "--config", config)
	if !strings.Contains(srv.stderr(), "3 job(s)") {
		t.Errorf("restart: %s", srv.stderr())
	}
	for _, c := range []*apiClient{admin, operator, viewer} {
		c.base = srv.base
	}
	if j, ok := admin.job("pgenv"); !ok || j.State != "paused" || j.Origin != "api" || j.Retention != "12h" {
		t.Errorf("pgenv after restart: %+v %v, want paused with its retention 12h", j, ok)
	}
	if j, _ := admin.job("down"); j.Retention != "3d" || j.Origin != "config" {
		t.Errorf("the configuration's job: %+v, want its retention 3d", j)
	}
	n = len(admin.windows(id))
	eventually(t, "windows after the restart", func() bool { return len(admin.windows(id)) >= n+2 })
	if j, _ := admin.job("net"); j.Interval != "500ms" || j.State != "running" {
		t.Errorf("net after restart: %+v", j)
	}

	// Deleted: it stops, its series stays.
	admin.want(http.StatusNoContent, "DELETE", "/api/v1/jobs/net", "")
	if _, ok := admin.job("net"); ok {
		t.Error("a deleted job is still listed")
	}
	n = len(admin.windows(id))
	time.Sleep(700 * time.Millisecond)
	if later := len(admin.windows(id)); later != n || admin.seriesOf("net") != id || n == 0 {
		t.Errorf("after delete: %d windows then %d, series %d", n, later, admin.seriesOf("net"))
	}

	var audit struct {
		Events []struct{ Actor, Action, Target, Remote, Detail string }
	}
	admin.get("/api/v1/audit?limit=100", &audit)
	var got []string
	for _, e := range audit.Events {
		if strings.HasPrefix(e.Action, "job.") && e.Target == "net" {
			if e.Remote != "127.0.0.1" || !strings.Contains(e.Detail, "source=nettest:") {
				t.Errorf("audit event %+v: want the address and the source", e)
			}
			got = append([]string{e.Actor + " " + e.Action}, got...)
		}
	}
	want := "admin job.create, admin job.change, olga job.pause, olga job.resume, admin job.delete"
	if strings.Join(got, ", ") != want {
		t.Errorf("audit of net: %s; want %s", strings.Join(got, ", "), want)
	}
	logs += srv.stderr()
	for _, secret := range []string{"Sekr1t-uri-Passw0rd", "Sekr1t-db-Passw0rd"} {
		if strings.Contains(logs, secret) || strings.Contains(bodies.String(), secret) {
			t.Errorf("%s appears in the log or an answer", secret)
		}
	}
}
