package httpsec

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/server/auth"
)

func TestListenPolicy(t *testing.T) {
	for _, tc := range []struct {
		cfg     ListenConfig
		err     string
		warning bool
	}{
		{cfg: ListenConfig{}},
		{cfg: ListenConfig{Addr: "127.0.0.1:9000"}},
		{cfg: ListenConfig{Addr: "127.8.9.10:9000"}},
		{cfg: ListenConfig{Addr: "[::1]:9000"}},
		{cfg: ListenConfig{Addr: "localhost:9000"}},
		{cfg: ListenConfig{Addr: "0.0.0.0:7879"}, err: "--tls-cert"},
		{cfg: ListenConfig{Addr: ":7879"}, err: "reachable from other machines"},
		{cfg: ListenConfig{Addr: "[::]:7879"}, err: "--insecure-listen"},
		{cfg: ListenConfig{Addr: "192.0.2.10:7879"}, err: "--tls-cert"},
		{cfg: ListenConfig{Addr: "db-host.example:7879"}, err: "--tls-cert"},
		{cfg: ListenConfig{Addr: "[::ffff:127.0.0.1]:7879"}},
		{cfg: ListenConfig{Addr: "0.0.0.0:7879", AllowInsecureRemote: true}, warning: true},
		{cfg: ListenConfig{Addr: "0.0.0.0:7879", TLSCert: "c.pem", TLSKey: "k.pem"}},
		{cfg: ListenConfig{Addr: "127.0.0.1:7879", TLSCert: "c.pem"}, err: "go together"},
		{cfg: ListenConfig{Addr: "7879"}, err: "listen address"},
	} {
		warning, err := tc.cfg.Check()
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%+v: err = %v; want one mentioning %q", tc.cfg, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%+v: %v", tc.cfg, err)
		case (warning != "") != tc.warning:
			t.Errorf("%+v: warning %q; want one: %v", tc.cfg, warning, tc.warning)
		}
	}
}

// writeCert makes a self-signed certificate for 127.0.0.1 in dir.
func writeCert(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "latscope test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestTLSServing(t *testing.T) {
	certFile, keyFile, pool := writeCert(t, t.TempDir())
	store, err := auth.OpenPath(t.Context(), filepath.Join(t.TempDir(), "a.db"), auth.Options{Argon2: fastArgon2})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.AddUser(t.Context(), auth.LocalActor(), "root", auth.Admin, adminPassword); err != nil {
		t.Fatal(err)
	}
	rt := NewRouter(store, Config{TLS: true})
	rt.RegisterAuthAPI()
	h, err := rt.Handler()
	if err != nil {
		t.Fatal(err)
	}
	ln, tlsConfig, err := Listen(ListenConfig{Addr: "127.0.0.1:0", TLSCert: certFile, TLSKey: keyFile}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(h, DefaultTimeouts(), tlsConfig, nil)
	go srv.Serve(ln)
	defer srv.Close()
	url := "https://" + ln.Addr().String()

	old := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MaxVersion: tls.VersionTLS11}}}
	if _, err := old.Get(url + "/healthz"); err == nil {
		t.Error("a TLS 1.1 client was served")
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	resp, err := c.Post(url+"/api/v1/login", "application/json", strings.NewReader(`{"user":"root","password":"`+adminPassword+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 || resp.ProtoMajor != 2 {
		t.Fatalf("login over TLS: %d %+v", resp.StatusCode, resp.TLS)
	}
	ck := resp.Cookies()[0]
	if ck.Name != "__Host-latscope_session" || !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" || ck.Domain != "" {
		t.Errorf("cookie under TLS: %+v", ck)
	}
	if hsts := resp.Header.Get("Strict-Transport-Security"); !strings.HasPrefix(hsts, "max-age=") {
		t.Errorf("no HSTS under TLS: %q", hsts)
	}
}

func TestListenRefusesAndWarns(t *testing.T) {
	if _, _, err := Listen(ListenConfig{Addr: "0.0.0.0:0"}, nil); err == nil {
		t.Fatal("plain HTTP on every interface was allowed")
	}
	logs := &syncBuffer{}
	ln, _, err := Listen(ListenConfig{Addr: "0.0.0.0:0", AllowInsecureRemote: true}, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if !strings.Contains(logs.String(), "WARNING: serving plain HTTP") {
		t.Errorf("no warning logged: %q", logs.String())
	}
	if _, err := TLSConfig("/nonexistent/cert.pem", "/nonexistent/key.pem"); err == nil || !strings.Contains(err.Error(), "cert.pem") {
		t.Errorf("missing certificate: %v", err)
	}
}

func TestPerRouteWriteTimeout(t *testing.T) {
	slow := func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(400 * time.Millisecond)
		writeJSON(w, http.StatusOK, map[string]string{"done": "yes"})
	}
	e := newEnv(t, func(rt *Router) {
		rt.Handle("GET", "/api/v1/slow", auth.Viewer, slow, WriteTimeout(100*time.Millisecond))
		rt.Handle("GET", "/api/v1/stream", auth.Viewer, slow, WriteTimeout(0))
	})
	c := e.session("view", viewerPassword)
	if status, body := c.do("GET", "/api/v1/stream", nil); status != http.StatusOK {
		t.Errorf("route without a write deadline: %d %s", status, body)
	}
	req, _ := http.NewRequest("GET", e.srv.URL+"/api/v1/slow", nil)
	resp, err := c.http.Do(req)
	if err == nil {
		body, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if rerr == nil && strings.Contains(string(body), "done") {
			t.Errorf("a response past its route's write deadline arrived: %s", body)
		}
	}
}

func TestRedactor(t *testing.T) {
	r := &Redactor{}
	r.Add("hunter2hunter2")
	r.Add("ab") // too short to redact safely: ignored
	for in, want := range map[string]string{
		"pw hunter2hunter2 here":                         "pw [REDACTED] here",
		"postgres://me:p%40ss@host/db":                   "postgres://me:[REDACTED]@host/db",
		"token lsat_" + strings.Repeat("x", 43) + " end": "token [REDACTED] end",
		"cookie lsss_" + strings.Repeat("-", 43):         "cookie [REDACTED]",
		"about tabs":                                     "about tabs",
		"https://host:7879/api/v1/me":                    "https://host:7879/api/v1/me",
		"oracle://scott:tiger@db:1521/ORCL?x=1 and more": "oracle://scott:[REDACTED]@db:1521/ORCL?x=1 and more",
	} {
		if got := r.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q; want %q", in, got, want)
		}
	}
	logs := &syncBuffer{}
	l := slog.New(r.Handler(slog.NewTextHandler(logs, nil))).With("db_password", "x", "uri", "mysql://a:hunter2hunter2@h/")
	l.WithGroup("g").Info("hunter2hunter2", slog.Group("inner", "Authorization", "Bearer abc", "note", "hunter2hunter2"), "err", io.ErrUnexpectedEOF)
	if out := logs.String(); strings.Contains(out, "hunter2") || strings.Contains(out, "Bearer abc") || !strings.Contains(out, "unexpected EOF") {
		t.Errorf("redacted log: %s", out)
	}
}
