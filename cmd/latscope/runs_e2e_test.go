package main

// End-to-end tests of latscope serve's on-demand runs: real iotest,
// nettest, report and flame runs started through the API of a real
// server, compared with what the CLI gives for the same parameters.

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// runJSON mirrors the parts of a run the tests read.
type runJSON struct {
	ID          int64
	Kind, State string
	ExitCode    *int `json:"exit_code"`
	Error       string
	CancelledBy string `json:"cancelled_by"`
	Progress    struct {
		Percent *float64
		Line    string
	}
	Commands [][]string
	Outputs  []struct {
		Name        string
		Size        int64
		ContentType string `json:"content_type"`
	}
}

// runsEnv is a running server with a followed file as its job, and
// clients: an admin session, an operator token and a viewer token.
type runsEnv struct {
	srv                   *server
	config, data, scratch string
	admin, op, viewer     *apiClient
	adminCSRF             string
}

// startRunsServe starts latscope serve with runsYAML as its runs section
// and the PyLatencyMap example's first 10 records as a followed file.
func startRunsServe(t *testing.T, runsYAML func(scratch string) string) *runsEnv {
	t.Helper()
	dir := t.TempDir()
	e := &runsEnv{data: filepath.Join(dir, "data"), scratch: filepath.Join(dir, "scratch"), config: filepath.Join(dir, "latscope.yaml")}
	if err := os.Mkdir(e.scratch, 0o700); err != nil {
		t.Fatal(err)
	}
	waits := filepath.Join(dir, "waits.txt")
	if err := os.WriteFile(waits, []byte(strings.Join(restampedRecords(t)[:10], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	yaml := "data: " + e.data + "\nlisten: " + freePort(t) + "\njobs:\n  - name: waits\n    source: " + waits + "\n" + runsYAML(e.scratch)
	if err := os.WriteFile(e.config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	e.srv = startServe(t, "--config", e.config)
	bodies := &strings.Builder{}
	e.admin = &apiClient{t: t, base: e.srv.base, bodies: bodies}
	status, b := e.admin.call("POST", "/api/v1/login", `{"user":"admin","password":"`+bootstrapPassword(t, e.srv)+`"}`)
	var me struct {
		CSRF string `json:"csrf_token"`
	}
	if status != http.StatusOK || json.Unmarshal(b, &me) != nil {
		t.Fatalf("login: %d %s", status, b)
	}
	e.adminCSRF = me.CSRF
	e.op = &apiClient{t: t, base: e.srv.base, bodies: bodies, token: e.token(t, "operator", "")}
	if status, b := e.admin.call("POST", "/api/v1/users", `{"name":"alice","role":"viewer"}`, "X-CSRF-Token", e.adminCSRF); status != http.StatusCreated {
		t.Fatalf("add viewer: %d %s", status, b)
	}
	e.viewer = &apiClient{t: t, base: e.srv.base, bodies: bodies, token: e.token(t, "viewer", "alice")}
	return e
}

func (e *runsEnv) token(t *testing.T, role, user string) string {
	t.Helper()
	body := `{"name":"` + role + `","role":"` + role + `"`
	if user != "" {
		body += `,"user":"` + user + `"`
	}
	status, b := e.admin.call("POST", "/api/v1/tokens", body+"}", "X-CSRF-Token", e.adminCSRF)
	var tok struct{ Token string }
	if status != http.StatusCreated || json.Unmarshal(b, &tok) != nil {
		t.Fatalf("token: %d %s", status, b)
	}
	return tok.Token
}

// startRun posts a run and returns it (status 201 expected).
func (c *apiClient) startRun(kind string, params any) runJSON {
	c.t.Helper()
	p, _ := json.Marshal(params)
	status, b := c.call("POST", "/api/v1/runs", `{"kind":"`+kind+`","params":`+string(p)+`}`)
	var r runJSON
	if status != http.StatusCreated || json.Unmarshal(b, &r) != nil {
		c.t.Fatalf("start %s run: %d %s", kind, status, b)
	}
	return r
}

func (c *apiClient) run(id int64) runJSON {
	c.t.Helper()
	var r runJSON
	c.get("/api/v1/runs/"+strconv.FormatInt(id, 10), &r)
	return r
}

// waitRun polls a run until it is in state want (failing on another
// final state), calling each on every answer.
func (c *apiClient) waitRun(id int64, want string, timeout time.Duration, each func(runJSON)) runJSON {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		r := c.run(id)
		if each != nil {
			each(r)
		}
		final := r.State == "succeeded" || r.State == "failed" || r.State == "cancelled"
		if r.State == want {
			return r
		}
		if final || time.Now().After(deadline) {
			status, log := c.call("GET", "/api/v1/runs/"+strconv.FormatInt(id, 10)+"/log", "")
			c.t.Fatalf("run %d is %s, want %s: %+v\nlog (%d): %s", id, r.State, want, r, status, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// output downloads one of a run's outputs and returns it with its
// response headers.
func (c *apiClient) output(id int64, name string) ([]byte, http.Header) {
	c.t.Helper()
	req, _ := http.NewRequest("GET", c.base+"/api/v1/runs/"+strconv.FormatInt(id, 10)+"/outputs/"+name, nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("output %s of run %d: %d %s", name, id, resp.StatusCode, b)
	}
	return b, resp.Header
}

// childrenOf lists the processes whose command line names a run's
// directory: the run's children and anything they started.
func childrenOf(data string, id int64) []string {
	mark := filepath.Join(data, "runs", strconv.FormatInt(id, 10)) + "/"
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var out []string
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), mark) {
			stat, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
			if !strings.Contains(string(stat), ") Z ") {
				out = append(out, strings.ReplaceAll(string(b), "\x00", " "))
			}
		}
	}
	return out
}

// childrenRunning waits for a run's child to be running.
func childrenRunning(t *testing.T, data string, id int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); len(childrenOf(data, id)) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("run %d has no process", id)
		}
	}
}

// noChildrenLeft waits a little for a run's processes to end.
func noChildrenLeft(t *testing.T, data string, id int64) {
	t.Helper()
	var left []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if left = childrenOf(data, id); len(left) == 0 {
			return
		}
	}
	t.Errorf("processes of run %d left: %q", id, left)
}

func decodeJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
}

// TestServeRunsMeasureAsTheCLI: an iotest, a nettest and a report run
// through the API give what the CLI gives for the same parameters, with
// their progress, log and outputs.
func TestServeRunsMeasureAsTheCLI(t *testing.T) {
	netAddr, _ := startNetServer(t)
	e := startRunsServe(t, func(scratch string) string {
		return "runs:\n  max_concurrent: 2\n  iotest_dirs: [" + scratch + "]\n  nettest_targets: [\"" + netAddr + "\"]\n  keep: 7d\n"
	})

	// iotest: a sweep of two steps on a scratch file.
	iot := e.op.startRun("iotest", map[string]any{"dir": e.scratch, "steps": []int{1, 2}, "duration": "1s", "warmup": "200ms",
		"size": "32M", "interval": "250ms"})
	sawProgress := false
	done := e.op.waitRun(iot.ID, "succeeded", 60*time.Second, func(r runJSON) {
		if r.State == "running" && r.Progress.Percent != nil && *r.Progress.Percent < 100 {
			sawProgress = true
		}
	})
	if !sawProgress || *done.Progress.Percent != 100 || *done.ExitCode != 0 {
		t.Errorf("iotest run's progress: saw a running percentage %v, final %+v", sawProgress, done)
	}
	b, _ := e.op.output(iot.ID, "report.json")
	var viaRun ioReport
	decodeJSON(t, b, &viaRun)
	viaCLI, _ := runIOTest(t, t.TempDir(), "--steps", "1,2", "--duration", "1s", "--warmup", "200ms", "--size", "32M", "--interval", "250ms")
	if viaRun.BS != viaCLI.BS || viaRun.Loop != viaCLI.Loop || viaRun.Kind != viaCLI.Kind || len(viaRun.Steps) != len(viaCLI.Steps) {
		t.Fatalf("run report %+v\nCLI report %+v", viaRun, viaCLI)
	}
	for i, s := range viaRun.Steps {
		if s.Concurrency != viaCLI.Steps[i].Concurrency || !s.Complete || s.Ops == 0 {
			t.Errorf("step %d: run %+v, CLI %+v", i, s, viaCLI.Steps[i])
		}
	}
	html, h := e.op.output(iot.ID, "report.html")
	if ct, csp := h.Get("Content-Type"), h.Get("Content-Security-Policy"); ct != "text/html; charset=utf-8" ||
		!strings.HasPrefix(csp, "sandbox allow-scripts;") || !strings.Contains(string(html), "<html") {
		t.Errorf("report.html served as %q with CSP %q", ct, csp)
	}
	if left, _ := os.ReadDir(e.scratch); len(left) != 0 {
		t.Errorf("scratch files left: %v", left)
	}

	// nettest: against a server the configuration allows.
	nt := e.op.startRun("nettest", map[string]any{"target": netAddr, "duration": "1s", "size": "512"})
	e.op.waitRun(nt.ID, "succeeded", 30*time.Second, nil)
	b, _ = e.op.output(nt.ID, "report.json")
	var netRun map[string]any
	decodeJSON(t, b, &netRun)
	cli := run(t, "", "nettest", "client", netAddr, "--duration", "1s", "--size", "512", "--format", "json")
	var netCLI map[string]any
	decodeJSON(t, []byte(cli.stdout), &netCLI)
	for _, k := range []string{"tool", "server", "mode", "request_bytes", "reply_bytes", "connections"} {
		if !reflect.DeepEqual(netRun[k], netCLI[k]) {
			t.Errorf("nettest %s: run %v, CLI %v", k, netRun[k], netCLI[k])
		}
	}
	if n, _ := netRun["round_trips"].(float64); n == 0 {
		t.Errorf("nettest run measured nothing: %s", b)
	}
	if status, b := e.op.call("POST", "/api/v1/runs", `{"kind":"nettest","params":{"target":"127.0.0.1:9"}}`); status != http.StatusBadRequest ||
		!strings.Contains(string(b), "not in the configured runs.nettest_targets") {
		t.Errorf("a target not configured: %d %s", status, b)
	}

	// report: the server's own archive, as latscope report reads it.
	deadline := time.Now().Add(10 * time.Second)
	for e.op.jobs()["waits"].Intervals < 8 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	rep := e.op.startRun("report", map[string]any{"from": "-1h", "series": "*"})
	rep = e.op.waitRun(rep.ID, "succeeded", 30*time.Second, nil)
	if len(rep.Commands) != 2 || rep.Commands[0][1] != "report" {
		t.Errorf("report commands %q", rep.Commands)
	}
	b, _ = e.op.output(rep.ID, "report.json")
	var repRun, repCLI struct{ Series []map[string]any }
	decodeJSON(t, b, &repRun)
	cliRep := run(t, "", "report", e.data, "--from", "-1h", "--series", "*", "--format", "json")
	decodeJSON(t, []byte(cliRep.stdout), &repCLI)
	if len(repRun.Series) == 0 || !reflect.DeepEqual(repRun.Series, repCLI.Series) {
		t.Errorf("report run's series differ from latscope report's:\n%s\n%s", b, cliRep.stdout)
	}
	e.op.output(rep.ID, "report.html")

	// The log is followed by offset; outputs are only the listed names.
	var piece struct {
		State        string
		Offset, Next int64
		Complete     bool
		Text         string
	}
	e.viewer.get("/api/v1/runs/"+strconv.FormatInt(iot.ID, 10)+"/log?offset=0", &piece)
	if !piece.Complete || piece.Next != int64(len(piece.Text)) || !strings.Contains(piece.Text, "$ latscope iotest "+e.scratch) {
		t.Errorf("log %+v", piece)
	}
	for _, name := range []string{"..%2Fauth.db", "..%2F..%2Fauth.db", "latscope.db", "flame.html"} {
		if status, _ := e.viewer.call("GET", "/api/v1/runs/"+strconv.FormatInt(iot.ID, 10)+"/outputs/"+name, ""); status != http.StatusNotFound {
			t.Errorf("output %s: %d, want 404", name, status)
		}
	}
	var page struct {
		Runs       []runJSON
		NextBefore int64 `json:"next_before"`
	}
	e.viewer.get("/api/v1/runs?limit=2", &page)
	if len(page.Runs) != 2 || page.Runs[0].ID != rep.ID || page.NextBefore != nt.ID {
		t.Errorf("first page of runs: %+v", page)
	}
}

// TestServeRunsQueueCancelAndRoles: a third run waits while two run;
// cancel ends a run's processes and starts the next; viewers start and
// cancel nothing; bad requests are refused by name; all is audited.
func TestServeRunsQueueCancelAndRoles(t *testing.T) {
	e := startRunsServe(t, func(scratch string) string {
		return "runs:\n  max_concurrent: 2\n  iotest_dirs: [" + scratch + "]\n"
	})
	long := map[string]any{"dir": e.scratch, "duration": "5m", "warmup": "0s", "size": "16M", "concurrency": 1}
	if status, b := e.viewer.call("POST", "/api/v1/runs", `{"kind":"iotest","params":{"dir":"`+e.scratch+`"}}`); status != http.StatusForbidden {
		t.Errorf("a viewer starts a run: %d %s", status, b)
	}
	for body, want := range map[string]string{
		`{"kind":"sh","params":{}}`: `kind \"sh\"`,
		`{"kind":"iotest","params":{"dir":"` + e.scratch + `","durations":"1s"}}`: `unknown field \"durations\"`,
		`{"kind":"iotest","params":{"dir":"/etc"}}`:                               "is not in the configured runs.iotest_dirs",
		`{"kind":"iotest","args":["--help"]}`:                                     `unknown field \"args\"`,
		`{"kind":"iotest","params":{"dir":"` + e.scratch + `","duration":"2h"}}`:  "at most 1h0m0s",
	} {
		if status, b := e.op.call("POST", "/api/v1/runs", body); status != http.StatusBadRequest || !strings.Contains(string(b), want) {
			t.Errorf("%s: %d %s; want 400 naming %s", body, status, b, want)
		}
	}
	a, b, c := e.op.startRun("iotest", long), e.op.startRun("iotest", long), e.op.startRun("iotest", long)
	if a.State != "running" || b.State != "running" || c.State != "queued" {
		t.Fatalf("states %s %s %s; want running, running, queued", a.State, b.State, c.State)
	}
	if status, _ := e.viewer.call("POST", "/api/v1/runs/"+strconv.FormatInt(a.ID, 10)+"/cancel", ""); status != http.StatusForbidden {
		t.Errorf("a viewer cancels a run: %d", status)
	}
	// Let the first run get going, then cancel it: its processes end
	// (iotest removes its scratch file) and the queued run starts.
	e.op.waitRun(a.ID, "running", 10*time.Second, nil)
	childrenRunning(t, e.data, a.ID)
	if status, body := e.op.call("POST", "/api/v1/runs/"+strconv.FormatInt(a.ID, 10)+"/cancel", ""); status != http.StatusOK {
		t.Fatalf("cancel: %d %s", status, body)
	}
	ca := e.op.waitRun(a.ID, "cancelled", 15*time.Second, nil)
	if ca.CancelledBy != "admin" || ca.Error != "cancelled" {
		t.Errorf("cancelled run %+v", ca)
	}
	noChildrenLeft(t, e.data, a.ID)
	e.op.waitRun(c.ID, "running", 10*time.Second, nil)
	childrenRunning(t, e.data, c.ID)
	for _, r := range []runJSON{b, c} {
		e.op.call("POST", "/api/v1/runs/"+strconv.FormatInt(r.ID, 10)+"/cancel", "")
		e.op.waitRun(r.ID, "cancelled", 15*time.Second, nil)
		noChildrenLeft(t, e.data, r.ID)
	}
	if status, _ := e.op.call("POST", "/api/v1/runs/"+strconv.FormatInt(a.ID, 10)+"/cancel", ""); status != http.StatusBadRequest {
		t.Errorf("cancel of an ended run: %d, want 400", status)
	}
	if left, _ := os.ReadDir(e.scratch); len(left) != 0 {
		t.Errorf("scratch files left after cancel: %v", left)
	}
	var audit struct {
		Events []struct{ Actor, Action, Target, Remote string }
	}
	e.admin.get("/api/v1/audit?limit=50", &audit)
	seen := map[string]int{}
	for _, ev := range audit.Events {
		if strings.HasPrefix(ev.Action, "run.") {
			seen[ev.Action]++
			if ev.Actor != "admin" || ev.Remote != "127.0.0.1" {
				t.Errorf("audit event %+v: want the operator token's user and address", ev)
			}
		}
	}
	if seen["run.start"] < 3 || seen["run.cancel"] != 3 || seen["run.finish"] != 3 {
		t.Errorf("run audit events %v; want the starts (refused ones too), 3 cancels, 3 ends", seen)
	}
}

// TestServeRunsRestartMarksOrphansFailed: kill -9 of the server during a
// run ends the run's child, and the next start marks the run failed.
func TestServeRunsRestartMarksOrphansFailed(t *testing.T) {
	e := startRunsServe(t, func(scratch string) string { return "runs:\n  iotest_dirs: [" + scratch + "]\n" })
	r := e.op.startRun("iotest", map[string]any{"dir": e.scratch, "duration": "5m", "warmup": "0s", "size": "16M"})
	e.op.waitRun(r.ID, "running", 10*time.Second, nil)
	childrenRunning(t, e.data, r.ID)
	e.srv.cmd.Process.Kill()
	<-e.srv.done
	e.srv.cmd.Wait()
	noChildrenLeft(t, e.data, r.ID)

	srv := startServe(t, "--config", e.config)
	op := &apiClient{t: t, base: srv.base, token: e.op.token, bodies: &strings.Builder{}}
	got := op.run(r.ID)
	if got.State != "failed" || got.Error != "server stopped" {
		t.Errorf("run left by a killed server: %+v; want failed, server stopped", got)
	}
	var piece struct{ Text string }
	op.get("/api/v1/runs/"+strconv.FormatInt(r.ID, 10)+"/log", &piece)
	if !strings.Contains(piece.Text, "the server stopped during this run") {
		t.Errorf("log of the orphaned run:\n%s", piece.Text)
	}
	// A clean stop cancels running runs and says why.
	r2 := op.startRun("iotest", map[string]any{"dir": e.scratch, "duration": "5m", "warmup": "0s", "size": "16M"})
	op.waitRun(r2.ID, "running", 10*time.Second, nil)
	childrenRunning(t, e.data, r2.ID)
	srv.cmd.Process.Signal(os.Interrupt)
	<-srv.done
	if err := srv.cmd.Wait(); err != nil {
		t.Fatalf("serve after SIGINT: %v\n%s", err, srv.stderr())
	}
	noChildrenLeft(t, e.data, r2.ID)
	srv = startServe(t, "--config", e.config)
	op.base = srv.base
	if got := op.run(r2.ID); got.State != "cancelled" || got.Error != "server stopped" {
		t.Errorf("run stopped with the server: %+v; want cancelled, server stopped", got)
	}
}

// TestServeRunsFlame profiles a busy process through the API.
func TestServeRunsFlame(t *testing.T) {
	testenv.RecordingPerf(t)
	p := busy(t)
	e := startRunsServe(t, func(string) string { return "" })
	r := e.op.startRun("flame", map[string]any{"pid": p.Process.Pid, "duration": "1s"})
	r = e.op.waitRun(r.ID, "succeeded", 60*time.Second, nil)
	html, h := e.viewer.output(r.ID, "flame.html")
	if h.Get("Content-Type") != "text/html; charset=utf-8" || !strings.Contains(string(html), "sh") {
		t.Errorf("flame.html (%s, %d bytes) lacks the profiled shell", h.Get("Content-Type"), len(html))
	}
	if !strings.Contains(r.Progress.Line, "samples") {
		t.Errorf("last progress line %q", r.Progress.Line)
	}
}

// A viewer follows a real report run's events from its start: its state,
// its log, its final state, then the stream closes; a reconnection with
// Last-Event-ID gets the log from that offset, nothing twice.
func TestServeRunEvents(t *testing.T) {
	e := startRunsServe(t, func(string) string { return "" })
	rep := e.op.startRun("report", map[string]any{"from": "-1h", "series": "*"})
	url := e.srv.base + "/api/v1/runs/" + strconv.FormatInt(rep.ID, 10) + "/events"
	follow := func(lastID string) (types []string, log string, final runJSON) {
		t.Helper()
		var b strings.Builder
		offset, _ := strconv.Atoi(lastID)
		for ev := range openSSE(t, url, e.viewer.token, lastID).events {
			types = append(types, ev.typ)
			switch ev.typ {
			case "state":
				decodeJSON(t, []byte(ev.data), &final)
			case "log":
				var piece struct {
					Offset int
					Text   string
				}
				decodeJSON(t, []byte(ev.data), &piece)
				if piece.Offset != offset+b.Len() || ev.id != strconv.Itoa(piece.Offset+len(piece.Text)) {
					t.Errorf("log event id %s at offset %d after %d bytes from %d", ev.id, piece.Offset, b.Len(), offset)
				}
				b.WriteString(piece.Text)
			}
		}
		return types, b.String(), final
	}
	types, log, final := follow("")
	if types[0] != "state" || types[len(types)-1] != "state" || final.State != "succeeded" {
		t.Fatalf("events %v, final %+v: want the state first and the final state last", types, final)
	}
	var stored struct{ Text string }
	e.viewer.get("/api/v1/runs/"+strconv.FormatInt(rep.ID, 10)+"/log", &stored)
	if log != stored.Text || !strings.Contains(log, "$ latscope report") {
		t.Errorf("streamed log differs from the stored one:\n%s\n---\n%s", log, stored.Text)
	}
	_, rest, _ := follow("10")
	if rest != log[10:] {
		t.Errorf("log resumed from offset 10:\n%s\nwant\n%s", rest, log[10:])
	}
}
