// Package web is latscope serve's browser view: the login page, the
// dashboard, live and historical heat maps, runs, flame graphs and the
// admin pages. It is a set of static files built into the binary
// (go:embed) that read the data API (server/api) from the browser; the
// server only fills in which page's script a URL loads.
//
// Every page is a plain URL whose query holds the view's state, so that
// a link reproduces what its sender saw. Pages need a session like the
// API; without one they redirect to the login page. Scripts and styles
// come from this server only, under a Content-Security-Policy that allows
// nothing inline and nothing from elsewhere.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/httpsec"
)

//go:embed assets
var assets embed.FS

// LoginPath is the browser's login page.
const LoginPath = "/login"

// pageCSP allows scripts, styles and requests to this origin only, frames
// of this origin (a run's stored HTML report), and images drawn in the
// page (canvas exports, data URLs).
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// Page is one page of the view: its URL, the least role that may open it,
// the script that builds it (assets/NAME.js) and the shared scripts it
// loads before (Libs: assets/LIB.js).
type Page struct {
	Path   string
	Role   auth.Role
	Script string
	Title  string
	Libs   []string
}

// Pages lists every page, in the order of the navigation.
func Pages() []Page {
	maps := []string{"heatmap"} // the canvas heat-map renderer
	return []Page{
		{Path: "/{$}", Role: auth.Viewer, Script: "dashboard", Title: "Dashboard"},
		{Path: "/live", Role: auth.Viewer, Script: "live", Title: "Live", Libs: maps},
		{Path: "/history", Role: auth.Viewer, Script: "history", Title: "History", Libs: maps},
		{Path: "/compare", Role: auth.Viewer, Script: "compare", Title: "Compare", Libs: maps},
		{Path: "/runs", Role: auth.Viewer, Script: "runs", Title: "Runs"},
		{Path: "/runs/new", Role: auth.Operator, Script: "runform", Title: "New run"},
		{Path: "/runs/{id}", Role: auth.Viewer, Script: "run", Title: "Run"},
		{Path: "/flame", Role: auth.Viewer, Script: "flame", Title: "Flame graph"},
		{Path: "/audit-watches", Role: auth.Viewer, Script: "auditwatch", Title: "Database audit watches"},
		{Path: "/tokens", Role: auth.Viewer, Script: "tokens", Title: "Tokens"},
		{Path: "/admin/users", Role: auth.Admin, Script: "users", Title: "Users"},
		{Path: "/admin/audit", Role: auth.Admin, Script: "audit", Title: "Audit log"},
	}
}

// Register adds the login page, the pages and their assets to the router.
func Register(rt *httpsec.Router) error {
	site, err := newSite()
	if err != nil {
		return err
	}
	rt.Public("GET", LoginPath, site.login)
	for _, p := range Pages() {
		h, err := site.page(p)
		if err != nil {
			return err
		}
		rt.Handle("GET", p.Path, p.Role, h, httpsec.RedirectToLogin(LoginPath))
	}
	rt.Handle("GET", "/ui/{file}", auth.Viewer, site.asset)
	return nil
}

// site holds the parsed shell and the assets' versions.
type site struct {
	files     fs.FS
	shell     *template.Template
	versions  map[string]string // asset name → content hash, for cache busting
	loginPage []byte
	loginCSP  string
}

func newSite() (*site, error) {
	files, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	s := &site{files: files, versions: map[string]string{}}
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		b, err := fs.ReadFile(files, e.Name())
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		s.versions[e.Name()] = base64.RawURLEncoding.EncodeToString(sum[:9])
	}
	if s.shell, err = template.ParseFS(files, "shell.html"); err != nil {
		return nil, fmt.Errorf("web shell: %w", err)
	}
	return s, s.buildLogin()
}

// buildLogin inlines the login page's style and script, allowed by their
// hashes: the page is public, so it loads nothing that needs a session.
func (s *site) buildLogin() error {
	page, err := fs.ReadFile(s.files, "login.html")
	if err != nil {
		return err
	}
	css, err := fs.ReadFile(s.files, "login.css")
	if err != nil {
		return err
	}
	js, err := fs.ReadFile(s.files, "login.js")
	if err != nil {
		return err
	}
	page = bytes.Replace(page, []byte("/*LOGIN_CSS*/"), css, 1)
	page = bytes.Replace(page, []byte("/*LOGIN_JS*/"), js, 1)
	s.loginPage = page
	s.loginCSP = "default-src 'none'; script-src '" + hashOf(js) + "'; style-src '" + hashOf(css) + "'; " +
		"img-src data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
	return nil
}

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

func (s *site) login(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", s.loginCSP)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(s.loginPage)
}

// shellData is what the shell template fills in.
type shellData struct {
	Title, Script    string
	CSS, App, PageJS string
	Libs             []string // URLs of the page's shared scripts
}

func (s *site) page(p Page) (http.HandlerFunc, error) {
	if _, ok := s.versions[p.Script+".js"]; !ok {
		return nil, fmt.Errorf("web page %s: no script assets/%s.js", p.Path, p.Script)
	}
	data := shellData{Title: p.Title, Script: p.Script,
		CSS: s.assetURL("app.css"), App: s.assetURL("app.js"), PageJS: s.assetURL(p.Script + ".js")}
	for _, lib := range p.Libs {
		if _, ok := s.versions[lib+".js"]; !ok {
			return nil, fmt.Errorf("web page %s: no shared script assets/%s.js", p.Path, lib)
		}
		data.Libs = append(data.Libs, s.assetURL(lib+".js"))
	}
	var buf bytes.Buffer
	err := s.shell.Execute(&buf, data)
	if err != nil {
		return nil, fmt.Errorf("web page %s: %w", p.Path, err)
	}
	body := buf.Bytes()
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", pageCSP)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(body)
	}, nil
}

// assetURL names an asset with its content's hash, so that browsers may
// keep it as long as they like and still never run a stale script.
func (s *site) assetURL(name string) string { return "/ui/" + name + "?v=" + s.versions[name] }

func (s *site) asset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	typ := mime.TypeByExtension(path.Ext(name))
	if _, ok := s.versions[name]; !ok || name == "shell.html" || strings.HasPrefix(name, "login.") || typ == "" {
		http.NotFound(w, r)
		return
	}
	b, err := fs.ReadFile(s.files, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", typ)
	if r.URL.Query().Get("v") == s.versions[name] {
		w.Header().Set("Cache-Control", "private, max-age=31536000, immutable")
	}
	w.Write(b)
}
