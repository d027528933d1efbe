package remote

import (
	"bytes"
	"context"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/recording"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

const testToken = "lsat_test-token-0123456789"

var t0 = time.Date(2026, 11, 25, 3, 10, 0, 0, time.UTC)

func TestParseTarget(t *testing.T) {
	from, to := t0, t0.Add(time.Hour)
	for _, c := range []struct {
		spec string
		opts source.Options
		want string // the export URL
	}{
		{"http://127.0.0.1:7879", source.Options{}, "http://127.0.0.1:7879/api/v1/export?format=lsr"},
		{"HTTPS://host:7879/", source.Options{Series: "db01*"}, "https://host:7879/api/v1/export?format=lsr&series=db01%2A"},
		{"https://host/latscope/", source.Options{From: from, To: to},
			"https://host/latscope/api/v1/export?format=lsr&from=2026-11-25T03%3A10%3A00Z&to=2026-11-25T04%3A10%3A00Z"},
		{"https://host/api/v1/export?series=x&from=-1h&format=lsr", source.Options{To: to},
			"https://host/api/v1/export?format=lsr&from=-1h&series=x&to=2026-11-25T04%3A10%3A00Z"},
		{"https://[::1]:7879?resolution=1m", source.Options{}, "https://[::1]:7879/api/v1/export?format=lsr&resolution=1m"},
	} {
		got, err := ParseTarget(c.spec, c.opts)
		if err != nil || got.Export.String() != c.want {
			t.Errorf("ParseTarget(%q) = %v, %v; want %s", c.spec, got.Export, err, c.want)
		}
	}
	for spec, want := range map[string]string{
		"ftp://host":                     "want http:// or https://",
		"http://":                        "no host",
		"https://:7879":                  "no host",
		"https://admin:pw@host":          "no user or password",
		"https://host?token=x":           `unknown parameter "token"`,
		"https://host?series=a&series=b": `"series" given 2 times`,
		"https://host?format=jsonl":      "read as a recording",
		"https://host?series=a":          "series given both in the URL",
		"https://host/%zz":               "server URL",
	} {
		_, err := ParseTarget(spec, source.Options{Series: "b"})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseTarget(%q) = %v; want an error saying %q", spec, err, want)
		}
	}
}

func TestPlainHTTPOnlyToLoopback(t *testing.T) {
	for spec, ok := range map[string]bool{
		"http://127.0.0.1:7879": true, "http://localhost:7879": true, "http://[::1]:7879": true, "http://127.1.2.3": true,
		"https://db01.example:7879": true, "http://db01.example:7879": false, "http://10.0.0.1:7879": false, "http://[::ffff:192.0.2.1]": false,
	} {
		target, err := ParseTarget(spec, source.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := target.checkTransport(); (err == nil) != ok {
			t.Errorf("%s: %v; want allowed %v", spec, err, ok)
		}
	}
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:7879", "https://host/latscope/?series=db01*&from=-1h", "https://[::1]:1/api/v1/export?format=lsr",
		"http://u:p@h", "https://h?x=1", "http:opaque", "https://h/%2e%2e/", "HTTP://H:7879/a/b/?to=now&resolution=raw"} {
		f.Add(s, "db*")
	}
	f.Fuzz(func(t *testing.T, spec, series string) {
		got, err := ParseTarget(spec, source.Options{Series: series, From: t0})
		if err != nil {
			return
		}
		u := got.Export
		if (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil || !strings.HasSuffix(u.Path, ExportPath) {
			t.Fatalf("%q: export URL %s", spec, u)
		}
		q := u.Query()
		if q.Get("format") != "lsr" || q.Get("series") != series && series != "" || len(q["from"]) != 1 {
			t.Fatalf("%q: export query %s", spec, u.RawQuery)
		}
		if !strings.HasPrefix(u.String(), strings.TrimSuffix(got.Server, "/")) {
			t.Fatalf("%q: server %s is not the export's prefix %s", spec, got.Server, u)
		}
	})
}

// testRecording is a recording of two one-second windows.
func testRecording(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := recording.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		h := hist.NewExact(hist.Microsecond, 0)
		_ = h.Record(250)
		iv := stream.Interval{Source: "db01", Start: t0.Add(time.Duration(i) * time.Second), Duration: time.Second,
			Series: []stream.SeriesHist{{Key: stream.Key{Event: "log file sync"}, Hist: h}}}
		if err := w.Write(iv); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// testServer answers the export route like latscope serve: the recording
// for testToken, 401 otherwise; /cut sends half of it and drops the
// connection, /moved redirects, /big is 413.
func testServer(t *testing.T, rec []byte, tls bool) *httptest.Server {
	h := http.NewServeMux()
	h.HandleFunc("/api/v1/export", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"authentication required"}`))
			return
		}
		w.Write(rec)
	})
	h.HandleFunc("/cut/api/v1/export", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(rec)))
		w.Write(rec[:len(rec)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	})
	h.HandleFunc("/moved/api/v1/export", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://elsewhere.example/", http.StatusFound)
	})
	h.HandleFunc("/forbidden/api/v1/export", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"error":"this needs the viewer role"}`))
	})
	h.HandleFunc("/big/api/v1/export", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		w.Write([]byte(`{"error":"the selection holds more than 100000 windows"}`))
	})
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are the point
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

// read opens spec with the Opener as the driver does and reads it.
func read(t *testing.T, spec string, opts source.Options) ([]stream.Interval, string, error) {
	t.Helper()
	var msgs bytes.Buffer
	opts.Progress = &msgs
	op := &source.Opener{Stores: []source.Store{Store()}, Options: opts, Diag: input.NewDiagnostics(&msgs, 5)}
	src, err := op.Open(context.Background(), spec)
	if err != nil {
		return nil, msgs.String(), err
	}
	var got []stream.Interval
	err = src.Run(context.Background(), func(iv stream.Interval) error { got = append(got, iv); return nil })
	return got, msgs.String(), err
}

func writeFile(t *testing.T, name string, data []byte, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadsOverTLS(t *testing.T) {
	srv := testServer(t, testRecording(t), true)
	tokenFile := writeFile(t, "token", []byte(testToken+"\n"), 0o600)
	if _, _, err := read(t, srv.URL, source.Options{Server: source.ServerOptions{TokenFile: tokenFile}}); err == nil ||
		!strings.Contains(err.Error(), "certificate") || !strings.HasPrefix(err.Error(), srv.URL+": cannot reach the server") {
		t.Errorf("an unknown certificate: %v", err)
	}
	ca := writeFile(t, "ca.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644)
	got, msgs, err := read(t, srv.URL, source.Options{Server: source.ServerOptions{TokenFile: tokenFile, CAFile: ca}})
	if err != nil || len(got) != 2 || msgs != "" {
		t.Fatalf("with --ca-file: %d intervals, %v, %q", len(got), err, msgs)
	}
	got, msgs, err = read(t, srv.URL, source.Options{Server: source.ServerOptions{TokenFile: tokenFile, InsecureSkipVerify: true}})
	if err != nil || len(got) != 2 || !strings.Contains(msgs, "--insecure-skip-verify: the server's certificate is not checked") {
		t.Errorf("--insecure-skip-verify: %d intervals, %v, %q", len(got), err, msgs)
	}
	if _, _, err := read(t, srv.URL, source.Options{Server: source.ServerOptions{TokenFile: tokenFile, CAFile: tokenFile}}); err == nil ||
		!strings.Contains(err.Error(), "no PEM certificate") || strings.Contains(err.Error(), testToken) {
		t.Errorf("a --ca-file without a certificate: %v", err)
	}
}

func TestServerErrors(t *testing.T) {
	srv := testServer(t, testRecording(t), false)
	good := writeFile(t, "token", []byte(testToken), 0o600)
	wrong := writeFile(t, "wrong", []byte("lsat_wrong"), 0o600)
	for _, c := range []struct {
		spec, token, want string
	}{
		{srv.URL, wrong, srv.URL + ": token refused (401 Unauthorized)"},
		{srv.URL + "/cut", good, srv.URL + "/cut: the export was cut"},
		{srv.URL + "/moved", good, "302 Found to http://elsewhere.example/: the token is not sent on"},
		{srv.URL + "/big", good, srv.URL + "/big: 413 Request Entity Too Large: the selection holds more than 100000 windows"},
		{srv.URL + "/forbidden", good, srv.URL + "/forbidden: 403 Forbidden: this needs the viewer role"},
		{srv.URL + "/none", good, srv.URL + "/none: 404 Not Found: 404 page not found"},
	} {
		_, _, err := read(t, c.spec, source.Options{Server: source.ServerOptions{TokenFile: c.token}})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), testToken) {
			t.Errorf("%s: %v; want %q", c.spec, err, c.want)
		}
	}
	if got, _, err := read(t, srv.URL, source.Options{Server: source.ServerOptions{TokenFile: good}, Events: []string{"other"}}); err != nil || len(got) != 2 || len(got[0].Series) != 0 {
		t.Errorf("--event keeps the windows and drops other series: %v %v", got, err)
	}
	if _, _, err := read(t, srv.URL, source.Options{Follow: true}); err == nil || !strings.Contains(err.Error(), "--follow does not apply") {
		t.Errorf("--follow: %v", err)
	}
}

func TestReadToken(t *testing.T) {
	var warn bytes.Buffer
	if tok, err := readToken("", testToken, &warn); err != nil || tok != testToken {
		t.Errorf("from the environment: %q, %v", tok, err)
	}
	open := writeFile(t, "open", []byte(testToken+"\r\nignored\n"), 0o644)
	if tok, err := readToken(open, "other", &warn); err != nil || tok != testToken || !strings.Contains(warn.String(), "chmod 600") {
		t.Errorf("a 0644 file: %q, %v, warned %q", tok, err, warn.String())
	}
	for name, content := range map[string]string{"empty": "\n", "spaced": "lsat_a b", "control": "lsat_a\x01"} {
		_, err := readToken(writeFile(t, name, []byte(content), 0o600), "", &warn)
		if err == nil || strings.Contains(err.Error(), "lsat_a") {
			t.Errorf("%s token file: %v", name, err)
		}
	}
	if _, err := readToken("", "", &warn); err == nil || !strings.Contains(err.Error(), TokenEnv) {
		t.Errorf("no token: %v", err)
	}
	if _, err := readToken(filepath.Join(t.TempDir(), "missing"), "", &warn); err == nil || !strings.Contains(err.Error(), "--token-file") {
		t.Errorf("a missing token file: %v", err)
	}
}
