package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/internal/testkit/recordingtest"
	"github.com/latscope/latscope/stream"
)

// runEnv runs the binary with extra environment variables.
func runEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return runWith(t, "", env, args...)
}

// download GETs an API route with a bearer token.
func download(t *testing.T, url, token string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestCLIReadsAServer runs a real `latscope serve` filled from a real file
// and reads it as a SOURCE: `latscope report http://127.0.0.1:PORT
// --token-file F` prints what `latscope report DATADIR` prints, the report
// and export routes answer what report and convert write, the exported
// recording holds the archive's intervals, record, convert and heatmap -o
// work from the server, and a wrong token, an unknown series, a closed port and plain
// http to another host fail clearly, without the token in any output.
func TestCLIReadsAServer(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	waits := filepath.Join(dir, "waits.txt")
	if err := os.WriteFile(waits, []byte(strings.Join(restampedRecords(t)[:10], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, waits, "--data", data, "--listen", freePort(t))
	token := viewerToken(t, srv)
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	api := &apiClient{t: t, base: srv.base, token: token, bodies: &strings.Builder{}}
	for deadline := time.Now().Add(10 * time.Second); api.jobs()[waits].Intervals < 8; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the file job archived %d intervals, want 8", api.jobs()[waits].Intervals)
		}
	}
	var outputs strings.Builder // everything the CLI printed, searched for the token
	cli := func(env []string, args ...string) result {
		t.Helper()
		r := runEnv(t, env, args...)
		outputs.WriteString(r.stdout + r.stderr)
		return r
	}
	from := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	serverArgs := []string{"--token-file", tokenFile, "--from", from}

	for _, format := range []string{"json", "csv", "table"} {
		local := cli(nil, "report", data, "--from", from, "--format", format)
		remote := cli(nil, append([]string{"report", srv.base, "--format", format}, serverArgs...)...)
		if local.code != 0 || remote.code != 0 || !strings.Contains(local.stdout, "db file sequential read") {
			t.Fatalf("report --format %s: local exit %d %s, remote exit %d %s", format, local.code, local.stderr, remote.code, remote.stderr)
		}
		if remote.stdout != local.stdout {
			t.Errorf("report %s --format %s differs from report DATADIR:\n%s\n---\n%s", srv.base, format, remote.stdout, local.stdout)
		}
		resp, body := download(t, srv.base+"/api/v1/report?format="+format+"&from="+from, token)
		if resp.StatusCode != http.StatusOK || body != local.stdout {
			t.Errorf("GET /api/v1/report?format=%s: %d, differs from report DATADIR:\n%s", format, resp.StatusCode, body)
		}
	}
	if r := cli([]string{"LATSCOPE_TOKEN=" + token}, "report", srv.base, "--from", from, "--format", "json"); r.code != 0 || !strings.Contains(r.stdout, `"series"`) {
		t.Errorf("token from LATSCOPE_TOKEN: exit %d %s", r.code, r.stderr)
	}

	for format, to := range map[string]string{"jsonl": "jsonl", "lsr": "latscope", "csv": "csv"} {
		local := cli(nil, "convert", data, "--from", from, "--to", to)
		resp, body := download(t, srv.base+"/api/v1/export?format="+format+"&from="+from, token)
		if local.code != 0 || resp.StatusCode != http.StatusOK || body != local.stdout || body == "" {
			t.Errorf("GET /api/v1/export?format=%s: %d, differs from convert DATADIR --to %s (exit %d %s)", format, resp.StatusCode, to, local.code, local.stderr)
		}
		if format == "lsr" && resp.Header.Get("Content-Disposition") != "attachment; filename=latscope-export.lsr" {
			t.Errorf("export's Content-Disposition %q", resp.Header.Get("Content-Disposition"))
		}
	}
	if local, remote := cli(nil, "convert", data, "--to", "jsonl"), cli(nil, "convert", srv.base, "--to", "jsonl", "--token-file", tokenFile); remote.code != 0 || remote.stdout != local.stdout {
		t.Errorf("convert %s differs from convert DATADIR: exit %d %s", srv.base, remote.code, remote.stderr)
	}
	checkExportedRecording(t, srv.base, token, data)
	copied := filepath.Join(dir, "copy.lsr")
	if r := cli(nil, "record", srv.base, "--token-file", tokenFile, "-o", copied); r.code != 0 {
		t.Fatalf("record from the server: exit %d %s", r.code, r.stderr)
	}
	if local, copy := cli(nil, "report", data, "--format", "json"), cli(nil, "report", copied, "--format", "json"); copy.code != 0 || copy.stdout != local.stdout {
		t.Errorf("the recording copied from the server reports differently from DATADIR: exit %d %s", copy.code, copy.stderr)
	}

	html := filepath.Join(dir, "waits.html")
	if r := cli(nil, "heatmap", srv.base, "--token-file", tokenFile, "-o", html); r.code != 0 {
		t.Fatalf("heatmap -o from the server: exit %d %s", r.code, r.stderr)
	}
	if page, err := os.ReadFile(html); err != nil || !strings.Contains(string(page), "db file sequential read") {
		t.Errorf("heatmap -o %s from the server: %v", html, err)
	}

	wrong := filepath.Join(dir, "wrong")
	os.WriteFile(wrong, []byte("lsat_wrong-token-0123456789\n"), 0o600)
	open := filepath.Join(dir, "open")
	os.WriteFile(open, []byte(token), 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report", srv.base, "--token-file", wrong}, 1, srv.base + ": token refused (401 Unauthorized)"},
		{[]string{"report", srv.base, "--token-file", tokenFile, "--series", "no such event"}, 1, `404 Not Found: not found: no series of the archive matches "no such event"`},
		{[]string{"report", "http://" + freePort(t), "--token-file", tokenFile}, 1, "cannot reach the server"},
		{[]string{"report", "http://latscope.invalid:7879", "--token-file", tokenFile}, 1, "refusing to send the API token over plain http://"},
		{[]string{"report", srv.base}, 1, "no API token: give --token-file FILE or set LATSCOPE_TOKEN"},
		{[]string{"report", srv.base, "--token-file", open, "--format", "json"}, 0, "can be read by group or others (mode 0644)"},
	} {
		r := cli([]string{"LATSCOPE_TOKEN="}, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
	if strings.Contains(outputs.String(), token) || strings.Contains(srv.stderr(), token) {
		t.Error("the API token appears in the CLI's output or the server's log")
	}
}

// checkExportedRecording decodes GET /api/v1/export (a recording) and finds
// the archive's intervals in it.
func checkExportedRecording(t *testing.T, base, token, data string) {
	t.Helper()
	resp, body := download(t, base+"/api/v1/export", token)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("export: %d %s", resp.StatusCode, body)
	}
	got := recordingtest.Decode(t, []byte(body))
	a, err := archive.Open(data, archive.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var want []stream.Interval
	if err := a.Read(context.Background(), archive.Query{}, func(iv stream.Interval) error { want = append(want, iv); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(got) != 8 {
		t.Fatalf("the export holds %d intervals, the archive %d (want 8)", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Source != w.Source || !g.Start.Equal(w.Start) || g.Duration != w.Duration || len(g.Series) != len(w.Series) {
			t.Fatalf("interval %d: exported %v %v %v, archived %v %v %v", i, g.Source, g.Start, g.Duration, w.Source, w.Start, w.Duration)
		}
		for j := range g.Series {
			gs, ws := g.Series[j], w.Series[j]
			if gs.Key != ws.Key || gs.Hist.Count() != ws.Hist.Count() || gs.Hist.Sum != ws.Hist.Sum {
				t.Errorf("interval %d series %v: exported %v events (sum %v), archived %v (sum %v)", i, gs.Key, gs.Hist.Count(), gs.Hist.Sum, ws.Hist.Count(), ws.Hist.Sum)
			}
		}
	}
}
