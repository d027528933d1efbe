package web

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/httpsec"
)

// get serves one request through the site's handlers directly (the
// router's authentication is tested in server/httpsec, whose route
// enumeration includes these pages).
func get(t *testing.T, h http.HandlerFunc, target string, pathValues ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest("GET", target, nil)
	for i := 0; i+1 < len(pathValues); i += 2 {
		req.SetPathValue(pathValues[i], pathValues[i+1])
	}
	rec := httptest.NewRecorder()
	h(rec, req)
	return rec.Result()
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEveryPageLoadsItsScriptUnderTheStrictPolicy(t *testing.T) {
	s, err := newSite()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range Pages() {
		h, err := s.page(p)
		if err != nil {
			t.Fatal(err)
		}
		resp := get(t, h, strings.ReplaceAll(p.Path, "{$}", ""))
		page := body(t, resp)
		if csp := resp.Header.Get("Content-Security-Policy"); csp != pageCSP || strings.Contains(csp, "unsafe") {
			t.Errorf("%s: policy %q", p.Path, csp)
		}
		assets := []string{"app.css", "app.js", p.Script + ".js"}
		for _, lib := range p.Libs {
			assets = append(assets, lib+".js")
		}
		for _, asset := range assets {
			if !strings.Contains(page, `"`+s.assetURL(asset)+`"`) {
				t.Errorf("%s does not load %s", p.Path, s.assetURL(asset))
			}
		}
		if regexp.MustCompile(`<script>|<style>| on\w+=`).MatchString(page) {
			t.Errorf("%s has inline script or style, which its policy refuses", p.Path)
		}
	}
}

func TestLoginPagePolicyAllowsExactlyItsInlineCode(t *testing.T) {
	s, err := newSite()
	if err != nil {
		t.Fatal(err)
	}
	resp := get(t, s.login, "/login?next=/runs")
	page := body(t, resp)
	csp := resp.Header.Get("Content-Security-Policy")
	for _, tag := range []string{"script", "style"} {
		m := regexp.MustCompile(`(?s)<`+tag+`>(.*?)</`+tag+`>`).FindAllStringSubmatch(page, -1)
		if len(m) != 1 {
			t.Fatalf("%d inline %s elements; want 1", len(m), tag)
		}
		sum := sha256.Sum256([]byte(m[0][1]))
		if want := tag + "-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(csp, want) {
			t.Errorf("policy %q lacks %s", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("policy %q", csp)
	}
}

func TestAssets(t *testing.T) {
	s, err := newSite()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, version string
		status        int
		typ, cache    string
	}{
		{"app.js", s.versions["app.js"], 200, "text/javascript; charset=utf-8", "private, max-age=31536000, immutable"},
		{"app.css", "", 200, "text/css; charset=utf-8", ""},
		{"shell.html", "", 404, "", ""},
		{"login.js", "", 404, "", ""}, // inlined in the public page only
		{"nothing.js", "", 404, "", ""},
		{"..", "", 404, "", ""},
	} {
		resp := get(t, s.asset, "/ui/"+c.name+"?v="+c.version, "file", c.name)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d; want %d", c.name, resp.StatusCode, c.status)
			continue
		}
		if c.status == 200 && (resp.Header.Get("Content-Type") != c.typ || resp.Header.Get("Cache-Control") != c.cache) {
			t.Errorf("%s: type %q cache %q", c.name, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"))
		}
	}
}

func TestPagesRegisterOnTheRouter(t *testing.T) {
	rt := httpsec.NewRouter(nil, httpsec.Config{})
	if err := Register(rt); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Handler(); err != nil {
		t.Fatal(err)
	}
	pages := 0
	for _, ri := range rt.Routes() {
		switch {
		case ri.Public:
			if ri.Pattern() != "GET "+LoginPath {
				t.Errorf("public route %s", ri.Pattern())
			}
		case ri.LoginRedirect != "":
			pages++
			if ri.LoginRedirect != LoginPath || ri.MinRole < auth.Viewer {
				t.Errorf("page %s: redirect %q role %s", ri.Pattern(), ri.LoginRedirect, ri.MinRole)
			}
		}
	}
	if pages != len(Pages()) {
		t.Errorf("%d pages registered; want %d", pages, len(Pages()))
	}
}
