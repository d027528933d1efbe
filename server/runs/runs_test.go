package runs

// The executor's own rules (queue, cancel, feed, log cap, restart,
// validation) with a shell script standing in for latscope, so they run
// fast and deterministically; cmd/latscope's runs_e2e_test.go runs the
// real commands through a real server.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/server/auth"
)

var operator = auth.Actor{User: "op", Role: auth.Operator, Remote: "192.0.2.7"}

// fakeLatscope writes a shell script standing in for latscope.
func fakeLatscope(t *testing.T, body string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "latscope")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

type audits struct{ events []string }

func (a *audits) Audit(ctx context.Context, by auth.Actor, action, target string, ok bool, detail string) error {
	a.events = append(a.events, by.User+"@"+by.Remote+" "+action+" "+target+" "+strconv.FormatBool(ok))
	return nil
}

func openExecutor(t *testing.T, opt Options) *Executor {
	t.Helper()
	if opt.Data == "" {
		opt.Data = t.TempDir()
	}
	e, err := Open(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// iotestIn is a valid iotest run's parameters for the executor's scratch
// directory.
func iotestIn(e *Executor) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"dir": e.policy.iotestDirs[0], "duration": "20s"})
	return b
}

func start(t *testing.T, e *Executor, kind string, params json.RawMessage) Run {
	t.Helper()
	r, err := e.Start(context.Background(), operator, kind, params)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// waitState polls a run until it is in state want.
func waitState(t *testing.T, e *Executor, id int64, want State) Run {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := e.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if r.State == want {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d is %s, want %s: %+v", id, r.State, want, r)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestQueueBeyondMaxConcurrent(t *testing.T) {
	e := openExecutor(t, Options{Binary: fakeLatscope(t, "exec sleep 30"), MaxConcurrent: 2})
	a, b, c := start(t, e, "iotest", iotestIn(e)), start(t, e, "iotest", iotestIn(e)), start(t, e, "iotest", iotestIn(e))
	if a.State != Running || b.State != Running || c.State != Queued {
		t.Fatalf("states %s %s %s; want running, running, queued", a.State, b.State, c.State)
	}
	if _, err := e.Cancel(context.Background(), operator, a.ID); err != nil {
		t.Fatal(err)
	}
	waitState(t, e, a.ID, Cancelled)
	waitState(t, e, c.ID, Running)
	// The queue is bounded.
	for range MaxQueued {
		start(t, e, "iotest", iotestIn(e))
	}
	if _, err := e.Start(context.Background(), operator, "iotest", iotestIn(e)); !errors.Is(err, auth.ErrInvalid) || !strings.Contains(err.Error(), "runs are queued already") {
		t.Errorf("a start beyond the queue's bound: %v", err)
	}
	list, err := e.List(context.Background(), 0, MaxPage)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list {
		if r.State == Queued {
			e.Cancel(context.Background(), operator, r.ID)
		}
	}
	// A queued run cancelled never starts.
	d := start(t, e, "iotest", iotestIn(e))
	r, err := e.Cancel(context.Background(), operator, d.ID)
	if err != nil || r.State != Cancelled || r.StartedAt != nil || r.ExitCode != nil {
		t.Fatalf("cancelled queued run %+v, %v", r, err)
	}
}

func TestCancelEndsTheProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The child starts a grandchild and waits; cancel must reach both.
	e := openExecutor(t, Options{Binary: fakeLatscope(t, "sleep 30 & echo $! > "+pidFile+"; echo measuring >&2; wait")})
	r := start(t, e, "iotest", iotestIn(e))
	var grandchild int
	for deadline := time.Now().Add(5 * time.Second); grandchild == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(pidFile)
		grandchild, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if grandchild == 0 {
		t.Fatal("the fake never started its grandchild")
	}
	if _, err := e.Cancel(context.Background(), auth.Actor{User: "boss", Remote: "local"}, r.ID); err != nil {
		t.Fatal(err)
	}
	done := waitState(t, e, r.ID, Cancelled)
	if done.CancelledBy != "boss" || done.Error != "cancelled" || done.ExitCode == nil || done.EndedAt == nil {
		t.Errorf("cancelled run %+v", done)
	}
	if !gone(grandchild) {
		t.Errorf("the grandchild %d survived the cancel", grandchild)
	}
	if _, err := e.Cancel(context.Background(), operator, r.ID); !errors.Is(err, auth.ErrInvalid) {
		t.Errorf("cancel of an ended run: %v, want invalid", err)
	}
}

// gone waits up to 5 s for pid to end: no such process, or a zombie
// waiting for its reaper.
func gone(pid int) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) || err == nil && strings.Contains(string(stat), ") Z ") {
			return true
		}
	}
	return false
}

func TestCancelKillsAChildThatIgnoresSIGTERM(t *testing.T) {
	e := openExecutor(t, Options{Binary: fakeLatscope(t, "trap '' TERM; echo stubborn >&2; while :; do sleep 0.05; done"),
		Grace: 300 * time.Millisecond})
	r := start(t, e, "iotest", iotestIn(e))
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if got, _ := e.Get(context.Background(), r.ID); got.Progress.Line == "stubborn" || time.Now().After(deadline) {
			break
		}
	}
	began := time.Now()
	e.Cancel(context.Background(), operator, r.ID)
	done := waitState(t, e, r.ID, Cancelled)
	if took := time.Since(began); took < 250*time.Millisecond || took > 5*time.Second {
		t.Errorf("cancel took %s with a 300ms grace", took)
	}
	if *done.ExitCode != -1 {
		t.Errorf("exit code %d, want -1 (a signal)", *done.ExitCode)
	}
}

func TestRunOutputsProgressFeedAndAudit(t *testing.T) {
	au := &audits{}
	// stdout is the step's output; stderr the log and progress.
	e := openExecutor(t, Options{Audit: au, Binary: fakeLatscope(t, `echo "step 1 of 2" >&2; sleep 0.2; echo '{"tool":"fake"}'; printf 'step 2 of 2\r' >&2; echo done >&2`)})
	raw, _ := json.Marshal(map[string]any{"dir": e.policy.iotestDirs[0], "duration": "1s", "warmup": "0s"})
	r := start(t, e, "iotest", raw)
	events, stop, err := e.Subscribe(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	// The feed starts where the run is: the log from its first offset on.
	var log strings.Builder
	first := int64(-1)
	var last Event
	progressed := 0
	for ev := range events {
		if ev.Type == EventLog {
			if first < 0 {
				first = ev.Offset
			}
			if first+int64(log.Len()) != ev.Offset {
				t.Errorf("log event at offset %d after %d bytes from %d", ev.Offset, log.Len(), first)
			}
			log.WriteString(ev.Text)
		}
		// Progress events carry the share of the planned time (1 s).
		if ev.Type == EventProgress {
			progressed++
			if p := ev.Progress.Percent; p == nil || *p < 0 || *p > 99 {
				t.Errorf("progress event %+v: want a percentage of 0 to 99", ev.Progress)
			}
		}
		last = ev
	}
	if last.Type != EventState || last.Run.State != Succeeded || progressed == 0 {
		t.Fatalf("last event %+v after %d progress events, want the final state after some", last, progressed)
	}
	got, _ := e.Get(context.Background(), r.ID)
	if got.Progress.Line != "done" || *got.Progress.Percent != 100 || *got.ExitCode != 0 {
		t.Errorf("progress %+v exit %v", got.Progress, got.ExitCode)
	}
	var names []string
	for _, o := range got.Outputs {
		names = append(names, o.Name)
	}
	if strings.Join(names, " ") != "log.txt report.json" {
		t.Errorf("outputs %v", names)
	}
	file, _ := os.ReadFile(filepath.Join(e.runDir(r.ID), LogName))
	if !strings.Contains(string(file), "step 1 of 2") || !strings.HasSuffix(string(file), "succeeded, exit code 0\n") {
		t.Errorf("log:\n%s", file)
	}
	if first < 0 || string(file[first:]) != log.String() {
		t.Errorf("the feed's log differs from the file's:\n%s\n%s", log.String(), file)
	}
	p, _ := e.OutputPath(context.Background(), r.ID, "report.json")
	if b, _ := os.ReadFile(p); string(b) != "{\"tool\":\"fake\"}\n" {
		t.Errorf("report.json %q", b)
	}
	if _, err := e.OutputPath(context.Background(), r.ID, "../runs.db"); !errors.Is(err, auth.ErrNotFound) {
		t.Errorf("output ../runs.db: %v", err)
	}
	want := []string{"op@192.0.2.7 run.start run 1 true", "op@192.0.2.7 run.finish run 1 true"}
	if strings.Join(au.events, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit %q, want %q", au.events, want)
	}
	// A finished run's feed holds its final state alone.
	events, _, _ = e.Subscribe(context.Background(), r.ID)
	if ev := <-events; ev.Run.State != Succeeded {
		t.Errorf("feed of an ended run: %+v", ev)
	}
}

func TestFailedRunAndLogCap(t *testing.T) {
	e := openExecutor(t, Options{LogCap: 1000, Binary: fakeLatscope(t, `i=0; while [ $i -lt 200 ]; do echo "line $i of noise" >&2; i=$((i+1)); done; exit 3`)})
	r := start(t, e, "report", nil)
	done := waitState(t, e, r.ID, Failed)
	if *done.ExitCode != 3 || done.Error != "exit status 3" || done.Progress.Line != "line 199 of noise" {
		t.Errorf("failed run %+v", done)
	}
	file, _ := os.ReadFile(filepath.Join(e.runDir(r.ID), LogName))
	if len(file) > 1200 || !strings.Contains(string(file), "log cut at 1000 bytes") || !strings.Contains(string(file), "failed, exit code 3") {
		t.Errorf("log of %d bytes:\n%s", len(file), file)
	}
	if n := strings.Count(string(file), "$ latscope report"); n != 1 || len(done.Commands) != 2 {
		t.Errorf("%d of %d steps ran: a failing first step stops the run", n, len(done.Commands))
	}
}

func TestShutdownAndRestart(t *testing.T) {
	data := t.TempDir()
	bin := fakeLatscope(t, "exec sleep 30")
	e, err := Open(context.Background(), Options{Data: data, Binary: bin, MaxConcurrent: 1})
	if err != nil {
		t.Fatal(err)
	}
	running, queued := start(t, e, "iotest", iotestIn(e)), start(t, e, "iotest", iotestIn(e))
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// A crash: a row left running, as a killed server leaves it.
	st, _ := openStore(context.Background(), filepath.Join(data, DBName))
	orphan, _ := st.insert(context.Background(), Run{Kind: "report", Params: []byte("{}"), State: Queued, CreatedAt: time.Now()})
	st.setStarted(context.Background(), orphan, time.Now())
	st.close()

	e = openExecutor(t, Options{Data: data, Binary: bin})
	for id, want := range map[int64]State{running.ID: Cancelled, queued.ID: Cancelled, orphan: Failed} {
		r, err := e.Get(context.Background(), id)
		if err != nil || r.State != want || r.Error != ServerStopped || r.EndedAt == nil {
			t.Errorf("run %d after restart: %+v %v; want %s, %q", id, r, err, want, ServerStopped)
		}
	}
	list, _ := e.List(context.Background(), 0, 2)
	if len(list) != 2 || list[0].ID != orphan || list[1].ID != queued.ID {
		t.Errorf("first page %+v: want the newest two", list)
	}
	next, _ := e.List(context.Background(), list[1].ID, 2)
	if len(next) != 1 || next[0].ID != running.ID {
		t.Errorf("second page %+v", next)
	}
}

func TestPruneRemovesOldRuns(t *testing.T) {
	now := time.Now()
	e := openExecutor(t, Options{Binary: fakeLatscope(t, "exit 0"), Keep: time.Hour, Now: func() time.Time { return now }})
	r := start(t, e, "report", nil)
	waitState(t, e, r.ID, Succeeded)
	if n, err := e.Prune(context.Background()); n != 0 || err != nil {
		t.Fatalf("pruned %d (%v) of fresh runs", n, err)
	}
	now = now.Add(2 * time.Hour)
	if n, err := e.Prune(context.Background()); n != 1 || err != nil {
		t.Fatalf("pruned %d (%v), want 1", n, err)
	}
	if _, err := os.Stat(e.runDir(r.ID)); !os.IsNotExist(err) {
		t.Errorf("run directory left: %v", err)
	}
	if _, err := e.Get(context.Background(), r.ID); !errors.Is(err, auth.ErrNotFound) {
		t.Errorf("pruned run: %v", err)
	}
}

func TestParametersAreValidated(t *testing.T) {
	allowed := t.TempDir()
	outside := t.TempDir()
	link := filepath.Join(allowed, "escape")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(allowed, "sub"), 0o755)
	os.WriteFile(filepath.Join(allowed, "file"), []byte("data"), 0o644)
	e := openExecutor(t, Options{Binary: fakeLatscope(t, "exit 0"), IOTestDirs: []string{allowed}, NetTestTargets: []string{"db01.example:7878"}})
	for _, c := range []struct{ kind, params, want string }{
		{"shell", `{}`, `kind "shell": want one of flame, iotest, nettest, report`},
		{"iotest", `{"dir":"` + allowed + `","durations":"1s"}`, `unknown field "durations"`},
		{"iotest", `{"dir":"` + outside + `"}`, "is not in the configured runs.iotest_dirs"},
		{"iotest", `{"dir":"` + link + `"}`, "is not in the configured runs.iotest_dirs"},
		{"iotest", `{"dir":"` + allowed + `/../` + filepath.Base(outside) + `"}`, "is not in the configured runs.iotest_dirs"},
		{"iotest", `{"dir":"sub"}`, "want an absolute path"},
		{"iotest", `{"dir":"` + allowed + `/nothing"}`, "no such file or directory"},
		{"iotest", `{"dir":"` + allowed + `/file"}`, "is not a directory"},
		{"iotest", `{"dir":"` + allowed + `","duration":"61m"}`, "the run would take 1h1m2s: at most 1h0m0s"},
		{"iotest", `{"dir":"` + allowed + `","steps":[1,2],"duration":"30m"}`, "at most 1h0m0s"},
		{"iotest", `{"dir":"` + allowed + `","duration":"-1s"}`, "duration must be positive"},
		{"iotest", `{"dir":"` + allowed + `","duration":30}`, `want a duration such as "30s"`},
		{"iotest", `{"dir":"` + allowed + `","size":"1t"}`, "at most 16 GiB"},
		{"iotest", `{"dir":"` + allowed + `","bs":"1000"}`, "multiple of 512"},
		{"iotest", `{"dir":"` + allowed + `","steps":[1],"rates":[100]}`, "not both"},
		{"iotest", `{"dir":"` + allowed + `","steps":[0]}`, "want 1 to 256"},
		{"nettest", `{"target":"127.0.0.1:7878"}`, "is not in the configured runs.nettest_targets"},
		{"nettest", `{"target":"-x:7878"}`, "want HOST:PORT"},
		{"nettest", `{"target":"db01.example:7878","mode":"udp"}`, `mode "udp"`},
		{"flame", `{}`, "give pid (one process) or all (every CPU)"},
		{"flame", `{"pid":1,"all":true}`, "give pid (one process) or all"},
		{"flame", `{"pid":999999999}`, "no such process"},
		{"flame", `{"all":true,"duration":"2h"}`, "at most 1h0m0s"},
		{"report", `{"from":"yesterday"}`, "from:"},
		{"report", `{"from":"-1h","to":"-2h"}`, "from is not before to"},
		{"report", `{"series":"a\u0000b"}`, "unprintable"},
		{"report", `[]`, "cannot unmarshal array"},
	} {
		_, err := e.Start(context.Background(), operator, c.kind, json.RawMessage(c.params))
		if !errors.Is(err, auth.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v; want invalid, %q", c.kind, c.params, err, c.want)
		}
	}
	for _, c := range []struct{ kind, params string }{
		{"iotest", `{"dir":"` + filepath.Join(allowed, "sub") + `","steps":[1,2],"duration":"1s"}`},
		{"nettest", `{"target":"DB01.example:7878"}`},
		{"flame", `{"pid":` + strconv.Itoa(os.Getpid()) + `}`},
		{"report", `{"series":"log file*","from":"-1h","to":"now"}`},
	} {
		if _, err := e.Start(context.Background(), operator, c.kind, json.RawMessage(c.params)); err != nil {
			t.Errorf("%s %s: %v", c.kind, c.params, err)
		}
	}
}

func TestDefaultsAllowOnlyTheScratchDirAndLoopback(t *testing.T) {
	e := openExecutor(t, Options{Binary: fakeLatscope(t, "exit 0")})
	for _, c := range []struct {
		kind, params string
		ok           bool
	}{
		{"nettest", `{"target":"127.0.0.1:7878"}`, true},
		{"nettest", `{"target":"[::1]:7878"}`, true},
		{"nettest", `{"target":"localhost:7878"}`, true},
		{"nettest", `{"target":"10.0.0.5:7878"}`, false},
		{"nettest", `{"target":"example.com:7878"}`, false},
		{"iotest", `{"dir":"` + e.policy.iotestDirs[0] + `"}`, true},
		{"iotest", `{"dir":"` + os.TempDir() + `"}`, false},
		{"iotest", `{"dir":"` + e.policy.data + `"}`, false},
	} {
		_, err := e.Start(context.Background(), operator, c.kind, json.RawMessage(c.params))
		if (err == nil) != c.ok {
			t.Errorf("%s %s: %v; want allowed %v", c.kind, c.params, err, c.ok)
		}
	}
}

func TestArgvIsBuiltByTheServer(t *testing.T) {
	e := openExecutor(t, Options{Binary: fakeLatscope(t, "exit 0"), NetTestTargets: []string{"10.0.0.5:7878"}})
	r := start(t, e, "nettest", json.RawMessage(`{"target":"10.0.0.5:7878","duration":"5s","size":"1k","rate":500}`))
	dir := e.runDir(r.ID)
	want := "latscope nettest client 10.0.0.5:7878 --plain --format=json --duration=5s --interval=1s --mode=sync --size=1024 --connections=1 --rate=500 -o " + filepath.Join(dir, "report.html")
	if got := strings.Join(r.Commands[0], " "); got != want {
		t.Errorf("argv\n%s\nwant\n%s", got, want)
	}
	// A glob that looks like a flag stays a value.
	r = start(t, e, "report", json.RawMessage(`{"series":"--output=/etc/passwd"}`))
	if got := r.Commands[0]; got[3] != "--series=--output=/etc/passwd" || got[4] != "-o" || got[5] != filepath.Join(e.runDir(r.ID), "report.json") {
		t.Errorf("report argv %q", got)
	}
}

// FuzzDecodeParams: any kind and body gives parameters that plan a run,
// or an error; never a panic, never an argv that starts a value with "-"
// where a path or target goes.
func FuzzDecodeParams(f *testing.F) {
	for _, s := range []struct{ kind, params string }{
		{"iotest", `{"dir":"/tmp","steps":[1,2],"duration":"1s","size":"32m"}`},
		{"iotest", `{"dir":"/tmp","rates":[100.5],"concurrency":8,"bs":"16k","write":true}`},
		{"nettest", `{"target":"127.0.0.1:7878","mode":"stream","size":"64k","rate":10}`},
		{"nettest", `{"target":"[::1]:7878"}`},
		{"flame", `{"all":true,"duration":"2s","call_graph":"dwarf"}`},
		{"report", `{"series":"log file*","from":"-1h","to":"now"}`},
		{"report", `null`},
		{"iotest", `{"dir":"/tmp","duration":"1e3h"}`},
	} {
		f.Add(s.kind, s.params)
	}
	pol := policy{data: "/data", iotestDirs: []string{"/tmp"}, loopbackOnly: true, now: time.Now(),
		processExists: func(int) bool { return true }}
	f.Fuzz(func(t *testing.T, kind, raw string) {
		p, err := decodeParams(kind, json.RawMessage(raw), pol)
		if err != nil {
			return
		}
		pl := p.plan(pol, "/data/runs/1")
		if len(pl.steps) == 0 || pl.estimate > MaxDuration+time.Minute {
			t.Fatalf("%s %s: plan %+v", kind, raw, pl)
		}
		for _, s := range pl.steps {
			for i, a := range s.args {
				if i > 0 && strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && a != "-o" {
					t.Fatalf("%s %s: argument %q", kind, raw, a)
				}
			}
		}
	})
}
