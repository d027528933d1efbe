package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/stream"
)

// The fault tests run the real `latscope serve` on followed files that a
// goroutine fills fast with oracle-wait-lines (`HH:MM:SS pid=N event=NAME
// wait_time=US`): each simulated second of faultEvents events is one
// interval of as many series, and simulated time runs faultSpeed times
// faster than the clock, so the jobs write heavily.
const (
	faultEvents = 100
	faultSpeed  = 20
)

// waitLines appends simulated seconds of wait lines to a file until
// stopped. The tests start its clock at 00:57 of the file's day (the
// format takes the day from the file's modification time): no run crosses
// midnight, and the kill test's jobs pack their first hour while killed.
type waitLines struct {
	path string
	at   time.Time // the next simulated second
	stop chan struct{}
	done chan struct{}
}

// startWaitLines appends one simulated second from at to path (created
// if missing) at once, then one every 1/faultSpeed s.
func startWaitLines(t *testing.T, path string, at time.Time) *waitLines {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	w := &waitLines{path: path, at: at, stop: make(chan struct{}), done: make(chan struct{})}
	w.second(f)
	go func() {
		defer close(w.done)
		defer f.Close()
		tick := time.NewTicker(time.Second / faultSpeed)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
				if !w.second(f) {
					return // the disk is full: the test makes room
				}
			}
		}
	}()
	return w
}

func (w *waitLines) second(f *os.File) bool {
	var b strings.Builder
	for e := 0; e < faultEvents; e++ {
		fmt.Fprintf(&b, "%s pid=%d event=wait-%03d wait_time=%d\n", w.at.Format("15:04:05"), 4000+e, e, 50+(e*37+w.at.Second()*11)%900)
	}
	w.at = w.at.Add(time.Second)
	_, err := f.WriteString(b.String())
	return err == nil
}

// end stops the writer and returns the next simulated second.
func (w *waitLines) end() time.Time {
	close(w.stop)
	<-w.done
	return w.at
}

// faultJob is a job as the API shows it.
type faultJob struct {
	Name, State  string
	LastError    string     `json:"last_error"`
	LastInterval *time.Time `json:"last_interval"`
	Intervals    int
}

func faultJobs(c *apiClient) map[string]faultJob {
	var resp struct{ Jobs []faultJob }
	c.get("/api/v1/jobs", &resp)
	out := map[string]faultJob{}
	for _, j := range resp.Jobs {
		out[j.Name] = j
	}
	return out
}

// waitJobs polls the jobs until ok holds for all of them.
func waitJobs(t *testing.T, c *apiClient, within time.Duration, what string, ok func(faultJob) bool) map[string]faultJob {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		jobs := faultJobs(c)
		all := len(jobs) > 0
		for _, j := range jobs {
			all = all && ok(j)
		}
		if all {
			return jobs
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs not %s within %s: %+v", what, within, jobs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// faultConfig writes a configuration of one followed file per job.
func faultConfig(t *testing.T, dir, data string, files map[string]string) string {
	t.Helper()
	yaml := "data: " + data + "\nlisten: " + freePort(t) + "\njobs:\n"
	for _, name := range []string{"waits-a", "waits-b"} {
		yaml += "  - name: " + name + "\n    source: " + files[name] + "\n"
	}
	path := filepath.Join(dir, "latscope.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// newestEnd returns the end of each source's newest raw window.
func newestEnd(t *testing.T, a *archive.Archive) map[string]time.Time {
	t.Helper()
	out := map[string]time.Time{}
	err := a.Read(context.Background(), archive.Query{Resolution: archive.Raw}, func(iv stream.Interval) error {
		if end := iv.End(); end.After(out[iv.Source]) {
			out[iv.Source] = end
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestServeKill9DuringHeavyWrites kills the real server with SIGKILL 20
// times in a row while two jobs write intervals of 100 series each, 20 a
// second: every time the archive opens, SQLite's integrity check passes,
// each job kept every interval the API had reported written (so it lost
// at most the one in flight), and on restart the jobs resume. A second
// writer on the same data directory is refused while a reader works.
func TestServeKill9DuringHeavyWrites(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	files := map[string]string{"waits-a": filepath.Join(dir, "a.log"), "waits-b": filepath.Join(dir, "b.log")}
	config := faultConfig(t, dir, data, files)
	y, m, d := time.Now().Date()
	at := time.Date(y, m, d, 0, 57, 0, 0, time.Local)
	rng := rand.New(rand.NewPCG(14, 9))
	var token string
	written := 0
	for round := 0; round < 20; round++ {
		// Fresh files each round: a restarted job reads its file from the
		// start, and the earlier rounds' lines are archived already.
		for _, f := range files {
			os.Remove(f)
		}
		a := startWaitLines(t, files["waits-a"], at)
		b := startWaitLines(t, files["waits-b"], at)
		srv := startServe(t, "--config", config)
		if round == 0 {
			token = viewerToken(t, srv)
		}
		api := &apiClient{t: t, base: srv.base, token: token, bodies: &strings.Builder{}}
		n := 2 + rng.IntN(6)
		waitJobs(t, api, 15*time.Second, fmt.Sprintf("running with %d intervals", n), func(j faultJob) bool {
			return j.State == "running" && j.Intervals >= n
		})
		if round == 0 {
			checkOneWriter(t, data, files["waits-a"])
		}
		reported := faultJobs(api)
		for _, j := range reported {
			written += j.Intervals
		}
		srv.cmd.Process.Signal(syscall.SIGKILL)
		<-srv.done
		srv.cmd.Wait()
		if at = a.end(); b.end().After(at) {
			at = b.at
		}

		r, err := archive.Open(data, archive.Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("round %d: opening after kill -9: %v", round, err)
		}
		if err := r.IntegrityCheck(context.Background()); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		kept := newestEnd(t, r)
		r.Close()
		for name, j := range reported {
			if j.LastInterval == nil || kept[name].Before(*j.LastInterval) {
				t.Fatalf("round %d: job %s reported its intervals written up to %v, the archive has them up to %v", round, name, j.LastInterval, kept[name])
			}
		}
	}
	t.Logf("20 kills; before them the jobs had reported %d intervals of %d series written", written, faultEvents)
	// A last, clean start: the jobs resume, SIGTERM closes the archive.
	for _, f := range files {
		os.Remove(f)
	}
	a := startWaitLines(t, files["waits-a"], at)
	b := startWaitLines(t, files["waits-b"], at)
	defer a.end()
	defer b.end()
	srv := startServe(t, "--config", config)
	api := &apiClient{t: t, base: srv.base, token: token, bodies: &strings.Builder{}}
	waitJobs(t, api, 15*time.Second, "running again", func(j faultJob) bool { return j.State == "running" && j.Intervals >= 2 })
	srv.stop(t)
	rep := run(t, "", "report", data, "--format", "json", "--series", "wait-042")
	if rep.code != 0 || !strings.Contains(rep.stdout, `"wait-042"`) {
		t.Fatalf("latscope report after the kills: %d\n%s%s", rep.code, rep.stdout, rep.stderr)
	}
}

// checkOneWriter: with the server running, a second server and a
// record --archive on its data directory are refused with a clear
// message, and latscope report reads it.
func checkOneWriter(t *testing.T, data, file string) {
	t.Helper()
	second := run(t, "", "serve", file, "--data", data, "--listen", freePort(t))
	if second.code == 0 || !strings.Contains(second.stderr, "another latscope process is writing this archive (pid ") || !strings.Contains(second.stderr, "one writer at a time") {
		t.Fatalf("a second serve on the data directory: exit %d\n%s", second.code, second.stderr)
	}
	rec := run(t, "", "record", file, "--archive", data)
	if rec.code == 0 || !strings.Contains(rec.stderr, "another latscope process is writing this archive") {
		t.Fatalf("record --archive beside the server: exit %d\n%s", rec.code, rec.stderr)
	}
	if rep := run(t, "", "report", data, "--format", "json"); rep.code != 0 || !strings.Contains(rep.stdout, "wait-000") {
		t.Fatalf("latscope report while the server writes: %d\n%s%s", rep.code, rep.stdout, rep.stderr)
	}
}

// TestServeDiskFull runs the server on a 6 MiB tmpfs data directory
// that its jobs fill: the API shows them stalled with the disk-full error,
// the archive is not damaged, and once the tmpfs is grown they run again
// and the server closes the archive cleanly. Mounting needs root.
func TestServeDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.SkipAlways(t, "mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", data).CombinedOutput(); err != nil {
		testenv.SkipOrFail(t, "mount -t tmpfs failed as root: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", data).Run() }) // after the server's cleanup kills it
	files := map[string]string{"waits-a": filepath.Join(dir, "a.log"), "waits-b": filepath.Join(dir, "b.log")}
	config := faultConfig(t, dir, data, files)
	y, m, d := time.Now().Date()
	at := time.Date(y, m, d, 1, 0, 0, 0, time.Local)
	// One simulated second per file, then the login and the token while
	// there is room; then the flood. The token's first use comes on the
	// full disk: recording it fails, the request goes on.
	for _, f := range files {
		startWaitLines(t, f, at).end()
	}
	srv := startServe(t, "--config", config)
	token := viewerToken(t, srv)
	api := &apiClient{t: t, base: srv.base, token: token, bodies: &strings.Builder{}}
	a := startWaitLines(t, files["waits-a"], at.Add(time.Second))
	b := startWaitLines(t, files["waits-b"], at.Add(time.Second))
	defer a.end()
	defer b.end()

	stalled := waitJobs(t, api, 30*time.Second, "stalled", func(j faultJob) bool { return j.State == "stalled" })
	for name, j := range stalled {
		t.Logf("%s: stalled after %d intervals: %s", name, j.Intervals, j.LastError)
		if !strings.Contains(j.LastError, "database or disk is full") || !strings.Contains(j.LastError, data) {
			t.Errorf("job %s stalled with %q: want the disk-full error naming %s", name, j.LastError, data)
		}
	}
	if out, err := exec.Command("mount", "-o", "remount,size=256m", data).CombinedOutput(); err != nil {
		t.Fatalf("growing the tmpfs: %v: %s", err, out)
	}
	before := faultJobs(api)
	waitJobs(t, api, 30*time.Second, "running again", func(j faultJob) bool {
		return j.State == "running" && j.Intervals > before[j.Name].Intervals+2
	})
	srv.stop(t)
	openIntact(t, data)
	if !strings.Contains(srv.stderr(), "state=stalled") {
		t.Errorf("the log does not mention the stalled jobs:\n%s", srv.stderr())
	}
}
