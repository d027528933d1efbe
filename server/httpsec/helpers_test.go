package httpsec

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/authtest"
	"github.com/latscope/latscope/internal/testkit/fakeclock"
	"github.com/latscope/latscope/server/auth"
)

var fastArgon2 = authtest.FastArgon2

// syncBuffer collects log output from the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// env is a server on loopback with the auth API, users of each role and
// every response body it gave kept for the secret scan.
type env struct {
	t        *testing.T
	store    *auth.Store
	router   *Router
	srv      *httptest.Server
	clock    *fakeclock.Clock
	log      *syncBuffer
	redactor *Redactor
	dbPath   string

	mu        sync.Mutex
	responses []string
}

const (
	adminPassword    = "admin-Pa55word-XYZ"
	operatorPassword = "operator-Pa55word-XYZ"
	viewerPassword   = "viewer-Pa55word-XYZ"
)

func newEnv(t *testing.T, extraRoutes func(*Router)) *env {
	t.Helper()
	c := fakeclock.New(time.Now())
	logs := &syncBuffer{}
	red := &Redactor{}
	logger := slog.New(red.Handler(slog.NewJSONHandler(logs, nil)))
	dbPath := filepath.Join(t.TempDir(), "latscope.db")
	store, err := auth.OpenPath(context.Background(), dbPath,
		auth.Options{Argon2: fastArgon2, Now: c.Now, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	for _, u := range []struct {
		name string
		role auth.Role
		pw   string
	}{{"root", auth.Admin, adminPassword}, {"op", auth.Operator, operatorPassword}, {"view", auth.Viewer, viewerPassword}} {
		if _, err := store.AddUser(context.Background(), auth.LocalActor(), u.name, u.role, u.pw); err != nil {
			t.Fatal(err)
		}
	}
	rt := NewRouter(store, Config{Logger: logger})
	rt.RegisterAuthAPI()
	if extraRoutes != nil {
		if ServeRoutes == nil {
			t.Fatal("latscope serve's routes are not registered (serve_routes_test.go sets ServeRoutes)")
		}
		ServeRoutes(t, rt)
		extraRoutes(rt)
	}
	h, err := rt.Handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Config = NewServer(h, DefaultTimeouts(), nil, logger)
	srv.Start()
	t.Cleanup(srv.Close)
	return &env{t: t, store: store, router: rt, srv: srv, clock: c, log: logs, redactor: red, dbPath: dbPath}
}

// client is one user agent: a cookie jar, maybe a bearer token, maybe a
// CSRF token it learned at login.
type client struct {
	e     *env
	http  *http.Client
	token string
	csrf  string
}

func (e *env) anonymous() *client {
	jar, _ := cookiejar.New(nil)
	return &client{e: e, http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

func (e *env) session(user, password string) *client {
	e.t.Helper()
	c := e.anonymous()
	status, body := c.do("POST", "/api/v1/login", map[string]string{"user": user, "password": password})
	if status != http.StatusOK {
		e.t.Fatalf("login %s: %d %s", user, status, body)
	}
	var resp struct {
		CSRF string `json:"csrf_token"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || resp.CSRF == "" {
		e.t.Fatalf("login %s: no csrf token in %s", user, body)
	}
	c.csrf = resp.CSRF
	return c
}

func (e *env) withToken(token string) *client {
	c := e.anonymous()
	c.token = token
	return c
}

// do sends a JSON request (body nil for none) and returns status and body.
func (c *client) do(method, path string, body any, headers ...string) (int, string) {
	c.e.t.Helper()
	resp := c.send(method, path, body, headers...)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	c.e.mu.Lock()
	c.e.responses = append(c.e.responses, method+" "+path+" "+string(b))
	c.e.mu.Unlock()
	return resp.StatusCode, string(b)
}

func (c *client) send(method, path string, body any, headers ...string) *http.Response {
	c.e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			c.e.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.e.srv.URL+path, rd)
	if err != nil {
		c.e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.csrf != "" {
		req.Header.Set(CSRFHeader, c.csrf)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.e.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// createToken makes a token through the API and returns its secret and id.
func (c *client) createToken(name, role, expiresIn string) (secret, id string) {
	c.e.t.Helper()
	status, body := c.do("POST", "/api/v1/tokens", map[string]string{"name": name, "role": role, "expires_in": expiresIn})
	if status != http.StatusCreated {
		c.e.t.Fatalf("create token: %d %s", status, body)
	}
	var tok struct {
		ID, Token string
	}
	if err := json.Unmarshal([]byte(body), &tok); err != nil {
		c.e.t.Fatal(err)
	}
	return tok.Token, tok.ID
}

// ServeRoutes registers latscope serve's data routes (server/api) with the
// data they read. Those packages import this one, so the external test file
// serve_routes_test.go sets it; the security tests then enumerate the real
// routes from the router with the auth API's.
var ServeRoutes func(t *testing.T, rt *Router)

// FleetSeriesID is a series of the fleet store ServeRoutes sets up.
var FleetSeriesID string

// concretePath fills a route's wildcards with a value valid for them
// (series 1 exists in ServeRoutes' archive, run 1 with its log in its
// runs).
func concretePath(pattern string) string {
	r := strings.NewReplacer("{$}", "", "/fleet/series/{id}", "/fleet/series/"+FleetSeriesID, "/ui/{file}", "/ui/app.js", "/series/{id}", "/series/1", "/runs/{id}", "/runs/1", "/outputs/{name}", "/outputs/log.txt",
		"{name}", "view", "{id}", "AAAAAAAAAAAA")
	return r.Replace(pattern)
}

// sampleBody is a well-formed body for any route, so that a refusal is
// about who asks, not what is sent.
func sampleBody(ri RouteInfo) any {
	if !ri.StateChanging() {
		return nil
	}
	switch ri.Path {
	case "/api/v1/users/{name}/role":
		return map[string]string{"role": "viewer"}
	case "/api/v1/tokens":
		return map[string]string{"name": "t", "role": "viewer"}
	case "/api/v1/users":
		return map[string]string{"name": "newbie", "role": "viewer"}
	}
	return map[string]string{}
}
