package main

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/browsertest"
)

// webServer is a `latscope serve` recording the PyLatencyMap example
// (restamped to now) from a followed file, with three users of the three
// roles whose passwords the browser types.
type webServer struct {
	*server
	admin *apiClient // a bearer token of the admin
	file  string     // the followed file; append records to feed the job
	rest  []string   // records not yet written
}

const (
	webAdminPassword    = "admin-Web-Passw0rd-1"
	webOperatorPassword = "otto-Web-Passw0rd-2"
	webViewerPassword   = "vera-Web-Passw0rd-3"
)

func startWebServer(t *testing.T, initial int) *webServer {
	t.Helper()
	dir := t.TempDir()
	records := restampedRecords(t)
	file := filepath.Join(dir, "waits.txt")
	if err := os.WriteFile(file, []byte(strings.Join(records[:initial], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, "--data", filepath.Join(dir, "data"), "--listen", freePort(t), file)
	admin := &apiClient{t: t, base: srv.base, token: bootstrapToken(t, srv, "admin"), bodies: &strings.Builder{}}
	admin.want(http.StatusOK, "POST", "/api/v1/users/admin/password", `{"password":"`+webAdminPassword+`"}`)
	admin.want(http.StatusCreated, "POST", "/api/v1/users", `{"name":"otto","role":"operator","password":"`+webOperatorPassword+`"}`)
	admin.want(http.StatusCreated, "POST", "/api/v1/users", `{"name":"vera","role":"viewer","password":"`+webViewerPassword+`"}`)
	eventually(t, "the job's first series", func() bool { return admin.seriesOf(file) > 0 })
	return &webServer{server: srv, admin: admin, file: file, rest: records[initial:]}
}

// TestWebLoginRolesAndPages logs in as each role in a real Chromium: the
// pages each role may open load without a JavaScript error or a failed
// request and are screenshotted; a viewer sees no run or admin controls
// and the server refuses them when forced; logging out ends the session.
func TestWebLoginRolesAndPages(t *testing.T) {
	ws := startWebServer(t, 20)
	b := browsertest.New(t)

	// A stranger lands on the login page, which takes them on to where
	// they were going once logged in; a wrong password says so.
	b.Navigate(ws.base + "/admin/audit?before=5")
	if loc := b.Location(); loc != ws.base+"/login?next=%2Fadmin%2Faudit%3Fbefore%3D5" {
		t.Fatalf("a stranger at /admin/audit was sent to %s", loc)
	}
	b.Screenshot("login")
	b.Expect("/api/v1/login", http.StatusUnauthorized)
	b.SubmitLogin("admin", "wrong-password")
	b.WaitFor("the login error", `document.getElementById("error").textContent.indexOf("wrong user name or password") >= 0`, 10*time.Second)
	b.SubmitLogin("admin", webAdminPassword)
	b.WaitFor("the audit page", `document.body.getAttribute("data-ready") === "1"`, 10*time.Second)
	if loc := b.Location(); loc != ws.base+"/admin/audit?before=5" {
		t.Fatalf("after login: %s; want the page asked for", loc)
	}

	// Every page an admin may open, ready and not blank.
	for _, page := range []struct{ path, name string }{{"/", "dashboard"}, {"/tokens", "tokens"}, {"/admin/users", "users"}, {"/admin/audit", "audit"}} {
		b.Open(ws.base + page.path)
		b.Screenshot("admin-" + page.name)
	}
	b.Open(ws.base + "/")
	if got := browsertest.Eval[string](b, `document.querySelector("#jobs tbody td").textContent`); got != ws.file {
		t.Errorf("dashboard's first job %q; want %s", got, ws.file)
	}
	if n := browsertest.Eval[int](b, `document.querySelectorAll("#series tbody tr").length`); n == 0 {
		t.Error("dashboard lists no series")
	}
	// The data covers the hour's last minutes: p50 and p99 steps there,
	// the earlier columns grey (nobody observed them).
	spark := browsertest.Eval[[]int](b, `["path.p50", "path.p99", "rect.gap"].map(function (s) { return document.querySelectorAll("#series svg.spark " + s).length; })`)
	if spark[0] != 1 || spark[1] != 1 || spark[2] < 50 {
		t.Errorf("sparkline: %d p50, %d p99 lines, %d gap columns; want 1, 1 and most of 60", spark[0], spark[1], spark[2])
	}
	if nav := navLinks(b); !slices.Equal(nav, []string{"Dashboard", "History", "Compare", "Runs", "New run", "DB audit", "Tokens", "Users", "Audit log"}) {
		t.Errorf("admin's navigation %v", nav)
	}
	logout(t, b, ws)

	// A viewer: no run or admin controls, and the server refuses them.
	b.Login(ws.base, "vera", webViewerPassword)
	if nav := navLinks(b); !slices.Equal(nav, []string{"Dashboard", "History", "Compare", "Runs", "DB audit", "Tokens"}) {
		t.Errorf("viewer's navigation %v", nav)
	}
	b.Open(ws.base + "/tokens")
	if n := browsertest.Eval[int](b, `document.querySelectorAll("#new-token, button.danger").length`); n != 0 {
		t.Errorf("a viewer sees %d token controls", n)
	}
	b.Screenshot("viewer-tokens")
	for _, forced := range []struct{ method, path, body string }{
		{"POST", "/api/v1/runs", `{"kind":"report","params":{}}`},
		{"POST", "/api/v1/users", `{"name":"mallory","role":"admin"}`},
		{"POST", "/api/v1/tokens", `{"name":"x","role":"viewer"}`},
		{"POST", "/api/v1/jobs/x/pause", ``},
		{"GET", "/api/v1/audit", ``},
		{"GET", "/admin/users", ``},
		{"GET", "/runs/new", ``},
	} {
		b.Expect(forced.path, http.StatusForbidden)
		js := `LS.fetch(` + strconv.Quote(forced.path) + `, {method: ` + strconv.Quote(forced.method) + `, body: ` + orUndefined(forced.body) + `}).then(function () { return 200; }, function (e) { return e.status; })`
		if status := browsertest.Eval[int](b, js); status != http.StatusForbidden {
			t.Errorf("a viewer's %s %s from the page: %d; want 403", forced.method, forced.path, status)
		}
	}
	b.Navigate(ws.base + "/admin/users")
	if got := browsertest.Eval[string](b, `document.body.innerText`); !strings.Contains(got, "this needs the admin role") {
		t.Errorf("a viewer at /admin/users sees %q", got)
	}
	b.Screenshot("viewer-forbidden")
	b.Open(ws.base + "/")
	logout(t, b, ws)

	// An operator may start runs but not administer.
	b.Login(ws.base, "otto", webOperatorPassword)
	if nav := navLinks(b); !slices.Equal(nav, []string{"Dashboard", "History", "Compare", "Runs", "New run", "DB audit", "Tokens"}) {
		t.Errorf("operator's navigation %v", nav)
	}
	logout(t, b, ws)
}

func orUndefined(body string) string {
	if body == "" {
		return "undefined"
	}
	return body
}

// navLinks are the labels of the page's main navigation.
func navLinks(b *browsertest.Browser) []string {
	return browsertest.Eval[[]string](b, `Array.from(document.querySelectorAll("#nav a")).map(function (a) { return a.textContent; })`)
}

// logout clicks "Log out" and checks that the session is over: the login
// page shows, and a page sends the browser back to it.
func logout(t *testing.T, b *browsertest.Browser, ws *webServer) {
	t.Helper()
	b.Click("#logout")
	b.WaitFor("the login page", `location.pathname === "/login" && !!document.getElementById("user")`, 10*time.Second)
	b.Navigate(ws.base + "/tokens")
	if loc := b.Location(); !strings.HasPrefix(loc, ws.base+"/login?next=") {
		t.Errorf("after logging out, /tokens showed %s", loc)
	}
}
