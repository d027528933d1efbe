package httpsec

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/server/auth"
)

// extraRoutes adds latscope serve's data, job-change and runs routes
// (ServeRoutes, registered by serve_routes_test.go) and stands for the
// routes not built yet (an event stream), so the rules are shown to hold
// for every route beyond the auth API.
func extraRoutes(rt *Router) {
	ok := func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"ok": "yes"})
	}
	rt.Handle("PATCH", "/api/v1/runs/{id}", auth.Operator, ok)
}

func TestPublicRoutesAreExactlyTheListedOnes(t *testing.T) {
	e := newEnv(t, extraRoutes)
	var public []string
	for _, ri := range e.router.Routes() {
		if ri.Public {
			public = append(public, ri.Pattern())
		}
	}
	slices.Sort(public)
	want := PublicRoutes()
	slices.Sort(want)
	if !slices.Equal(public, want) {
		t.Fatalf("public routes = %v; want %v", public, want)
	}
}

func TestEveryRouteRefusesStrangers(t *testing.T) {
	e := newEnv(t, extraRoutes)
	routes := e.router.Routes()
	if len(routes) < 15 {
		t.Fatalf("only %d routes enumerated", len(routes))
	}
	for _, want := range []string{"GET /api/v1/jobs", "GET /api/v1/series", "GET /api/v1/series/{id}/histogram", "GET /api/v1/series/{id}/intervals",
		"POST /api/v1/jobs", "PUT /api/v1/jobs/{name}", "DELETE /api/v1/jobs/{name}", "POST /api/v1/jobs/{name}/pause", "POST /api/v1/jobs/{name}/resume",
		"GET /api/v1/audit-watches", "GET /api/v1/audit-watches/{name}/chains", "GET /api/v1/audit-watches/{name}/timeline", "GET /audit-watches"} {
		if !slices.ContainsFunc(routes, func(ri RouteInfo) bool { return ri.Pattern() == want }) {
			t.Errorf("serve's route %s is not enumerated", want)
		}
	}
	bogus := []*client{e.anonymous(), e.withToken("lsat_" + strings.Repeat("A", 43)), e.withToken("nonsense")}
	cookie := e.anonymous()
	for _, ri := range routes {
		if ri.Public {
			continue
		}
		path := concretePath(ri.Path)
		if ri.LoginRedirect != "" {
			checkLoginRedirect(t, e, ri, path)
			continue
		}
		for i, c := range bogus {
			status, body := c.do(ri.Method, path, sampleBody(ri))
			if status != http.StatusUnauthorized {
				t.Errorf("%s %s with credential %d: %d %s; want 401", ri.Method, path, i, status, body)
			}
		}
		status, _ := cookie.do(ri.Method, path, sampleBody(ri), "Cookie", "latscope_session=lsss_"+strings.Repeat("B", 43))
		if status != http.StatusUnauthorized {
			t.Errorf("%s %s with an unknown session cookie: %d; want 401", ri.Method, path, status)
		}
	}
	// Paths no route names, and methods a route does not take, need a credential too.
	for _, probe := range [][2]string{{"GET", "/nowhere"}, {"GET", "/api/v2/anything"}, {"DELETE", "/api/v1/me"}, {"PUT", "/healthz"}, {"GET", "/api/v1/login"}} {
		if status, body := e.anonymous().do(probe[0], probe[1], nil); status != http.StatusUnauthorized {
			t.Errorf("%s %s: %d %s; want 401", probe[0], probe[1], status, body)
		}
	}
	if status, _ := e.session("view", viewerPassword).do("GET", "/api/v2/anything", nil); status != http.StatusNotFound {
		t.Errorf("unknown route for a user: %d; want 404", status)
	}
}

// checkLoginRedirect wants a browser page to send every stranger (no
// credential, a bogus token, an unknown session) to the login page with
// the page as next, and to show nothing of its own.
func checkLoginRedirect(t *testing.T, e *env, ri RouteInfo, path string) {
	t.Helper()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i, header := range [][2]string{{}, {"Authorization", "Bearer lsat_" + strings.Repeat("A", 43)}, {"Authorization", "Bearer nonsense"},
		{"Cookie", "latscope_session=lsss_" + strings.Repeat("B", 43)}} {
		req, _ := http.NewRequest(ri.Method, e.srv.URL+path+"?x=1", nil)
		if header[0] != "" {
			req.Header.Set(header[0], header[1])
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := ri.LoginRedirect + "?next=" + url.QueryEscape(path+"?x=1")
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != want || len(body) > 200 {
			t.Errorf("page %s with credential %d: %d Location %q, %d bytes; want 303 to %s and no content", path, i, resp.StatusCode, resp.Header.Get("Location"), len(body), want)
		}
	}
}

func TestARouteCannotBeAddedWithoutARole(t *testing.T) {
	for name, register := range map[string]func(*Router){
		"no role":             func(rt *Router) { rt.Handle("GET", "/api/v1/x", auth.NoRole, nil) },
		"unlisted public":     func(rt *Router) { rt.Public("GET", "/api/v1/x", nil) },
		"listed path, method": func(rt *Router) { rt.Public("GET", "/api/v1/login", nil) },
		"duplicate":           func(rt *Router) { rt.Handle("GET", "/api/v1/me", auth.Admin, nil) },
		"no method":           func(rt *Router) { rt.Handle("", "/api/v1/y", auth.Admin, func(http.ResponseWriter, *http.Request) {}) },
		"no handler":          func(rt *Router) { rt.Handle("GET", "/api/v1/y", auth.Admin, nil) },
	} {
		rt := NewRouter(nil, Config{})
		rt.RegisterAuthAPI()
		register(rt)
		if _, err := rt.Handler(); err == nil {
			t.Errorf("%s: Handler() accepted the router", name)
		}
	}
}

func TestViewerCanChangeNothing(t *testing.T) {
	e := newEnv(t, extraRoutes)
	session := e.session("view", viewerPassword)
	secret, _ := e.session("root", adminPassword).createTokenFor(t, "view")
	viewerToken := e.withToken(secret)
	checked := 0
	for _, ri := range e.router.Routes() {
		if ri.Public || ri.Path == "/api/v1/logout" {
			continue // logging out is a viewer's own business
		}
		path := concretePath(ri.Path)
		for via, c := range map[string]*client{"session": session, "token": viewerToken} {
			status, body := c.do(ri.Method, path, sampleBody(ri))
			switch {
			case ri.StateChanging() && status != http.StatusForbidden:
				t.Errorf("viewer (%s) %s %s: %d %s; want 403", via, ri.Method, path, status, body)
			case !ri.StateChanging() && ri.MinRole > auth.Viewer && status != http.StatusForbidden:
				t.Errorf("viewer (%s) read admin route %s %s: %d", via, ri.Method, path, status)
			case !ri.StateChanging() && ri.MinRole == auth.Viewer && status != http.StatusOK:
				t.Errorf("viewer (%s) %s %s: %d %s; want 200", via, ri.Method, path, status, body)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Fatalf("only %d checks", checked)
	}
}

func TestCSRF(t *testing.T) {
	e := newEnv(t, nil)
	c := e.session("op", operatorPassword)
	good := c.csrf
	body := map[string]string{"name": "ci", "role": "viewer"}
	for name, csrf := range map[string]string{"missing": "", "wrong": strings.Repeat("x", len(good)), "truncated": good[:len(good)-1], "longer": good + "x"} {
		c.csrf = csrf
		if status, resp := c.do("POST", "/api/v1/tokens", body); status != http.StatusForbidden || !strings.Contains(resp, CSRFHeader) {
			t.Errorf("%s CSRF token: %d %s; want 403", name, status, resp)
		}
	}
	c.csrf = good
	secret, _ := c.createToken("ci", "viewer", "")
	// A token-authenticated call has no cookie to ride on: no CSRF token needed.
	if status, resp := e.withToken(secret).do("GET", "/api/v1/me", nil); status != http.StatusOK {
		t.Errorf("token GET: %d %s", status, resp)
	}
	opToken, _ := c.createToken("ci2", "operator", "")
	if status, resp := e.withToken(opToken).do("POST", "/api/v1/tokens", map[string]string{"name": "ci3", "role": "viewer"}); status != http.StatusCreated {
		t.Errorf("token POST without CSRF: %d %s", status, resp)
	}
	// Another session's CSRF token does not fit this one.
	other := e.session("op", operatorPassword)
	c.csrf = other.csrf
	if status, _ := c.do("POST", "/api/v1/tokens", body); status != http.StatusForbidden {
		t.Errorf("another session's CSRF token: %d; want 403", status)
	}
	// A form post (not JSON) is refused even with the token.
	c.csrf = good
	if status, _ := c.do("POST", "/api/v1/tokens", []byte("name=x&role=viewer"), "Content-Type", "application/x-www-form-urlencoded"); status != http.StatusUnsupportedMediaType {
		t.Errorf("form body: %d; want 415", status)
	}
}

func TestExpiredAndRevokedTokensAreRefusedAtOnce(t *testing.T) {
	e := newEnv(t, nil)
	op := e.session("op", operatorPassword)
	short, _ := op.createToken("short", "viewer", "10m")
	revoked, revokedID := op.createToken("revoked", "operator", "")
	for _, s := range []string{short, revoked} {
		if status, _ := e.withToken(s).do("GET", "/api/v1/me", nil); status != http.StatusOK {
			t.Fatalf("fresh token refused: %d", status)
		}
	}
	e.clock.Add(10 * time.Minute)
	if status, _ := e.withToken(short).do("GET", "/api/v1/me", nil); status != http.StatusUnauthorized {
		t.Errorf("expired token: %d; want 401", status)
	}
	if status, body := op.do("DELETE", "/api/v1/tokens/"+revokedID, nil); status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", status, body)
	}
	if status, _ := e.withToken(revoked).do("GET", "/api/v1/me", nil); status != http.StatusUnauthorized {
		t.Errorf("revoked token: %d; want 401", status)
	}
	// A token cannot outrank its owner, nor be made for someone else by a non-admin.
	if status, _ := op.do("POST", "/api/v1/tokens", map[string]string{"name": "x", "role": "admin"}); status != http.StatusBadRequest {
		t.Errorf("operator made an admin token: %d", status)
	}
	if status, _ := op.do("POST", "/api/v1/tokens", map[string]string{"name": "x", "role": "viewer", "user": "view"}); status != http.StatusForbidden {
		t.Errorf("operator made a token for another user: %d", status)
	}
	// Removing a user ends their tokens too.
	viewTok, _ := e.session("root", adminPassword).createTokenFor(t, "view")
	if status, _ := e.session("root", adminPassword).do("DELETE", "/api/v1/users/view", nil); status != http.StatusNoContent {
		t.Fatalf("remove user: %d", status)
	}
	if status, _ := e.withToken(viewTok).do("GET", "/api/v1/me", nil); status != http.StatusUnauthorized {
		t.Errorf("token of a removed user: %d; want 401", status)
	}
}

func (c *client) createTokenFor(t *testing.T, user string) (string, string) {
	t.Helper()
	status, body := c.do("POST", "/api/v1/tokens", map[string]string{"name": "for-" + user, "role": "viewer", "user": user})
	if status != http.StatusCreated {
		t.Fatalf("create token for %s: %d %s", user, status, body)
	}
	var tok struct{ ID, Token string }
	json.Unmarshal([]byte(body), &tok)
	return tok.Token, tok.ID
}

func TestSessionCookieAndFixation(t *testing.T) {
	e := newEnv(t, nil)
	// An attacker's own valid session, planted in the victim's browser.
	attacker := e.session("view", viewerPassword)
	planted := attacker.http.Jar.Cookies(mustURL(t, e.srv.URL))[0].Value
	victim := e.anonymous()
	resp := victim.send("POST", "/api/v1/login", map[string]string{"user": "root", "password": adminPassword},
		"Cookie", "latscope_session="+planted)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("login set %d cookies", len(cookies))
	}
	c := cookies[0]
	if c.Value == planted || !strings.HasPrefix(c.Value, auth.SessionPrefix) {
		t.Errorf("login adopted the planted session id")
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure {
		t.Errorf("cookie attributes: %+v (want HttpOnly, SameSite=Strict, Path=/, not Secure without TLS)", c)
	}
	if status, _ := attacker.do("GET", "/api/v1/me", nil); status != http.StatusUnauthorized {
		t.Errorf("the planted session still works after the victim's login: %d", status)
	}
	// A planted, never-issued id is not adopted either.
	resp = e.anonymous().send("POST", "/api/v1/login", map[string]string{"user": "root", "password": adminPassword},
		"Cookie", "latscope_session=lsss_"+strings.Repeat("C", 43))
	resp.Body.Close()
	if v := resp.Cookies()[0].Value; v == "lsss_"+strings.Repeat("C", 43) {
		t.Error("login adopted a client-chosen session id")
	}
	// Logout ends the session server-side.
	admin := e.session("root", adminPassword)
	if status, _ := admin.do("POST", "/api/v1/logout", nil); status != http.StatusNoContent {
		t.Fatalf("logout: %d", status)
	}
	if status, _ := admin.do("GET", "/api/v1/me", nil); status != http.StatusUnauthorized {
		t.Errorf("session alive after logout: %d", status)
	}
	// Idle expiry over HTTP.
	v := e.session("view", viewerPassword)
	e.clock.Add(31 * time.Minute)
	if status, _ := v.do("GET", "/api/v1/me", nil); status != http.StatusUnauthorized {
		t.Errorf("idle session: %d; want 401", status)
	}
}

func TestPathTraversalInNames(t *testing.T) {
	e := newEnv(t, nil)
	admin := e.session("root", adminPassword)
	for _, p := range []string{
		"/api/v1/users/..%2F..%2Fetc%2Fpasswd", "/api/v1/users/%2e%2e", "/api/v1/users/.hidden",
		"/api/v1/users/a%00b", "/api/v1/users/a%5Cb", "/api/v1/users/VIEW", "/api/v1/users/%2e%2e%2froot",
	} {
		status, body := admin.do("DELETE", p, nil)
		if status != http.StatusBadRequest {
			t.Errorf("DELETE %s: %d %s; want 400", p, status, body)
		}
		status, _ = admin.do("PUT", p+"/role", map[string]string{"role": "admin"})
		if status != http.StatusBadRequest {
			t.Errorf("PUT %s/role: %d; want 400", p, status)
		}
	}
	for _, p := range []string{"/api/v1/tokens/..%2F..%2Fx", "/api/v1/tokens/%2e%2e", "/api/v1/tokens/AAAA%2FAAAAAAA"} {
		if status, body := admin.do("DELETE", p, nil); status != http.StatusBadRequest {
			t.Errorf("DELETE %s: %d %s; want 400", p, status, body)
		}
	}
	// Unencoded dot segments never reach a handler: the mux redirects to the clean path.
	if status, _ := admin.do("DELETE", "/api/v1/users/../users/view", nil); status == http.StatusNoContent {
		t.Error("a dot-segment path deleted a user")
	}
	if status, body := admin.do("POST", "/api/v1/users", map[string]string{"name": "../root", "role": "admin"}); status != http.StatusBadRequest {
		t.Errorf("user named ../root: %d %s", status, body)
	}
	users, _ := e.store.Users(t.Context())
	if len(users) != 3 {
		t.Errorf("users changed: %+v", users)
	}
}

func TestOversizedBodies(t *testing.T) {
	e := newEnv(t, nil)
	big := []byte(`{"user":"root","password":"` + strings.Repeat("a", DefaultMaxBody) + `"}`)
	if status, body := e.anonymous().do("POST", "/api/v1/login", big); status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized login: %d %s; want 413", status, body)
	}
	admin := e.session("root", adminPassword)
	big = []byte(`{"name":"x","role":"viewer","password":"` + strings.Repeat("a", 10*DefaultMaxBody) + `"}`)
	if status, body := admin.do("POST", "/api/v1/users", big); status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized user: %d %s; want 413", status, body)
	}
	if status, _ := admin.do("POST", "/api/v1/users", []byte(`{"name":"x","role":"viewer"} {}`)); status != http.StatusBadRequest {
		t.Errorf("trailing JSON: %d; want 400", status)
	}
	if status, _ := admin.do("POST", "/api/v1/users", []byte(`{"name":"x","role":"viewer","is_admin":true}`)); status != http.StatusBadRequest {
		t.Errorf("unknown field: %d; want 400", status)
	}
}

func TestSlowClientsAreCut(t *testing.T) {
	e := newEnv(t, nil)
	h, _ := e.router.Handler()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(h, Timeouts{ReadHeader: 300 * time.Millisecond, Read: 600 * time.Millisecond, Idle: time.Second}, nil, nil)
	go srv.Serve(ln)
	defer srv.Close()

	dribble := func(first string, each string, n int) (time.Duration, bool) {
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		if _, err := conn.Write([]byte(first)); err != nil {
			return time.Since(start), true
		}
		for i := 0; i < n; i++ {
			time.Sleep(100 * time.Millisecond)
			if _, err := conn.Write([]byte(each)); err != nil {
				return time.Since(start), true
			}
		}
		// Still open? The server must close it (a read sees EOF or a reset) soon.
		conn.SetReadDeadline(time.Now().Add(3 * time.Second))
		buf := make([]byte, 4096)
		for {
			if _, err := conn.Read(buf); err != nil {
				var ne net.Error
				timedOut := errorsAs(err, &ne) && ne.Timeout()
				return time.Since(start), !timedOut
			}
		}
	}
	// Headers one byte every 100 ms for 5 s: cut after 300 ms.
	took, cut := dribble("GET /healthz HTTP/1.1\r\nHost: x\r\n", "X", 50)
	if !cut || took > 4*time.Second {
		t.Errorf("slow headers: cut=%v after %s; want cut well before 5 s", cut, took)
	}
	// A body dribbled past the read timeout.
	took, cut = dribble("POST /api/v1/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", " ", 50)
	if !cut || took > 4*time.Second {
		t.Errorf("slow body: cut=%v after %s; want cut well before 5 s", cut, took)
	}
}

func TestLoginRateLimitOverHTTP(t *testing.T) {
	e := newEnv(t, nil)
	c := e.anonymous()
	for i := 0; i < 5; i++ {
		if status, _ := c.do("POST", "/api/v1/login", map[string]string{"user": "root", "password": "wrong password " + string(rune('a'+i))}); status != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d", i+1, status)
		}
	}
	resp := c.send("POST", "/api/v1/login", map[string]string{"user": "root", "password": adminPassword})
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("6th attempt: %d, Retry-After %q; want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	e.clock.Add(31 * time.Second)
	status, body := e.session("root", adminPassword).do("GET", "/api/v1/audit?limit=50", nil)
	if status != http.StatusOK {
		t.Fatalf("audit: %d", status)
	}
	for _, want := range []string{`"action":"login.fail"`, `"action":"login.limited"`, `"action":"login"`, `"remote":"127.0.0.1"`} {
		if !strings.Contains(body, want) {
			t.Errorf("audit log lacks %s", want)
		}
	}
}

// TestNoSecretInAnyResponseOrLogLine runs a whole administration scenario
// and greps every response body and log line for the passwords, tokens and
// session ids used, and for a database password given to the redactor.
func TestNoSecretInAnyResponseOrLogLine(t *testing.T) {
	e := newEnv(t, extraRoutes)
	const dbPassword = "db-s3cret-from-file"
	e.redactor.Add(dbPassword)
	logger := e.router.cfg.Logger
	logger.Info("job started", "source", "postgres://latscope:"+dbPassword+"@db1:5432/app")
	logger.Info("job config", "password", dbPassword, "dsn", "mysql://u:"+dbPassword+"@tcp(db2)/x")
	logger.Error("connect failed: password authentication failed for " + dbPassword)

	admin := e.session("root", adminPassword)
	opSession := e.session("op", operatorPassword)
	// The CSRF tokens are not among the secrets: the page must read them
	// (login, me), and alone they open nothing.
	secrets := []string{adminPassword, operatorPassword, viewerPassword, dbPassword}
	for _, c := range []*client{admin, opSession} {
		for _, ck := range c.http.Jar.Cookies(mustURL(t, e.srv.URL)) {
			secrets = append(secrets, ck.Value)
		}
	}
	tokenSecret, tokenID := opSession.createToken("ci", "operator", "")
	secrets = append(secrets, tokenSecret)
	createResponse := len(e.responses) - 1

	tokenClient := e.withToken(tokenSecret)
	const newPassword = "brand-new-Pa55word"
	steps := []struct {
		c            *client
		method, path string
		body         any
	}{
		{tokenClient, "GET", "/api/v1/me", nil},
		{tokenClient, "GET", "/api/v1/tokens", nil},
		{tokenClient, "POST", "/api/v1/runs", map[string]string{}},
		{admin, "GET", "/api/v1/tokens?all=true", nil},
		{admin, "GET", "/api/v1/users", nil},
		{admin, "POST", "/api/v1/users", map[string]string{"name": "newbie", "role": "viewer", "password": newPassword}},
		{admin, "POST", "/api/v1/users/newbie/password", map[string]string{"password": newPassword + "2"}},
		{admin, "PUT", "/api/v1/users/newbie/role", map[string]string{"role": "operator"}},
		{e.anonymous(), "POST", "/api/v1/login", map[string]string{"user": "newbie", "password": newPassword}},
		{e.anonymous(), "POST", "/api/v1/login", map[string]string{"user": "newbie", "password": newPassword + "2"}},
		{e.anonymous(), "POST", "/api/v1/login", map[string]string{"user": "nobody", "password": adminPassword}},
		{e.withToken(tokenSecret + "x"), "GET", "/api/v1/me", nil},
		{admin, "DELETE", "/api/v1/tokens/" + tokenID, nil},
		{tokenClient, "GET", "/api/v1/me", nil},
		{admin, "DELETE", "/api/v1/users/newbie", nil},
		{admin, "GET", "/api/v1/audit", nil},
		{admin, "POST", "/api/v1/logout", nil},
	}
	secrets = append(secrets, newPassword, newPassword+"2")
	for _, s := range steps {
		s.c.do(s.method, s.path, s.body)
	}
	if n := strings.Count(e.responses[createResponse], tokenSecret); n != 1 {
		t.Errorf("the token's creation response shows it %d times; want once", n)
	}
	logs := e.log.String()
	t.Logf("log sample:\n%s", logs[:min(len(logs), 1500)])
	if strings.Count(logs, "\n") < len(steps) {
		t.Fatalf("only %d log lines", strings.Count(logs, "\n"))
	}
	for i, resp := range e.responses {
		for _, s := range secrets {
			if i != createResponse && strings.Contains(resp, s) {
				t.Errorf("response %q contains secret %q", resp, s)
			}
		}
	}
	for _, line := range strings.Split(logs, "\n") {
		for _, s := range secrets {
			if strings.Contains(line, s) {
				t.Errorf("log line %q contains secret %q", line, s)
			}
		}
	}
	// The database and its write-ahead log hold hashes only.
	var stored []byte
	for _, f := range []string{e.dbPath, e.dbPath + "-wal"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, data...)
		for _, s := range secrets {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s contains secret %q", filepath.Base(f), s)
			}
		}
	}
	if !bytes.Contains(stored, []byte("$argon2id$")) || !bytes.Contains(stored, []byte("token.create")) {
		t.Error("the database files read hold no hashes or audit lines: the scan above proves nothing")
	}
}

func TestHealthAndSecurityHeaders(t *testing.T) {
	e := newEnv(t, nil)
	resp := e.anonymous().send("GET", "/healthz", nil)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %d", resp.StatusCode)
	}
	for h, want := range map[string]string{"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store",
		"X-Frame-Options": "DENY", "Content-Type": "application/json; charset=utf-8"} {
		if got := resp.Header.Get(h); got != want {
			t.Errorf("%s = %q; want %q", h, got, want)
		}
	}
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	if strings.TrimSpace(b.String()) != `{"status":"ok"}` {
		t.Errorf("healthz body %q", b.String())
	}
}
