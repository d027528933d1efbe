package httpsec

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latscope/latscope/server/auth"
)

// FuzzCredentials sends arbitrary Authorization and Cookie headers to a
// guarded route: nothing but 401 may come back (no panic, no 500, and no
// way in without a credential the store issued).
func FuzzCredentials(f *testing.F) {
	store, err := auth.OpenPath(f.Context(), filepath.Join(f.TempDir(), "a.db"), auth.Options{Argon2: fastArgon2})
	if err != nil {
		f.Fatal(err)
	}
	defer store.Close()
	rt := NewRouter(store, Config{})
	rt.Handle("GET", "/api/v1/x", auth.Viewer, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, nil)
	})
	h, err := rt.Handler()
	if err != nil {
		f.Fatal(err)
	}
	tok := "lsat_" + strings.Repeat("A", 43)
	for _, seed := range [][2]string{
		{"", ""}, {"Bearer " + tok, ""}, {"bearer  " + tok + " ", ""}, {"Basic cm9vdDpwdw==", ""},
		{"", "latscope_session=lsss_" + strings.Repeat("B", 43)}, {"", "latscope_session=\"lsss_x\"; other=1"},
		{"Bearer", "latscope_session=;;;=="}, {"Bearer \x00\xff", "latscope_session=lsss_" + strings.Repeat("\xff", 43)},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, authorization, cookie string) {
		req := httptest.NewRequest("GET", "/api/v1/x", nil)
		req.Header.Set("Authorization", authorization)
		req.Header.Set("Cookie", cookie)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusUnauthorized {
			t.Fatalf("Authorization %q, Cookie %q: %d %s", authorization, cookie, w.Code, w.Body)
		}
	})
}

// FuzzDecodeBody feeds arbitrary bodies to the request decoder: it returns
// a value or a bad-request error, never panics.
func FuzzDecodeBody(f *testing.F) {
	for _, seed := range []string{`{"name":"ci","role":"viewer","expires_in":"720h"}`, `{"role":"root"}`, `{}`, `[]`, `{"name":1}`, `{"a":1} {}`, "\xff"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest("POST", "/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Body = http.MaxBytesReader(httptest.NewRecorder(), req.Body, 1024)
		var v createTokenRequest
		err := decodeBody(req, &v)
		var bad *badRequestError
		var tooLarge *http.MaxBytesError
		if err != nil && !errors.As(err, &bad) && !errors.As(err, &tooLarge) {
			t.Fatalf("decodeBody(%q): unexpected error kind %T %v", body, err, err)
		}
		if err == nil && v.Role != auth.NoRole && !v.Role.Valid() {
			t.Fatalf("decodeBody(%q) gave role %v", body, v.Role)
		}
	})
}
