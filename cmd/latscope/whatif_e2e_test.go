package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// whatifJSON mirrors the parts of the what-if JSON the tests read.
type whatifJSON struct {
	Tool        string `json:"tool"`
	RoundTrips  int    `json:"round_trips_per_write"`
	RemoteWrite struct {
		OverheadUS float64 `json:"overhead_us"`
	} `json:"remote_write"`
	MeasuredRTTUS float64 `json:"measured_rtt_us"`
	Rows          []struct {
		DistanceKm float64 `json:"distance_km"`
		Bytes      int64   `json:"io_bytes"`
		Sync       struct {
			WriteUS float64 `json:"write_us"`
			IOPS    float64 `json:"iops"`
		} `json:"synchronous"`
		Async struct {
			FillPipe int `json:"outstanding_to_fill_pipe"`
		} `json:"asynchronous"`
	} `json:"rows"`
}

func TestWhatIfReplicationCommand(t *testing.T) {
	r := run(t, "", "whatif", "replication", "--distance", "50km,10km", "--io", "2k,128k", "--round-trips", "2", "--format", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var w whatifJSON
	if err := json.Unmarshal([]byte(r.stdout), &w); err != nil {
		t.Fatal(err)
	}
	// 2k over 50 km, two round trips: 2 × 0.5 + 0.054 + 0.6 ms.
	if w.Tool != "latscope whatif replication" || w.RoundTrips != 2 || len(w.Rows) != 4 || w.Rows[2].DistanceKm != 50 ||
		w.Rows[2].Sync.WriteUS != 1654 || w.Rows[2].Async.FillPipe != 25 {
		t.Errorf("what-if %+v", w)
	}

	csv := run(t, "", "whatif", "replication", "--io", "8k", "--format", "csv")
	if lines := strings.Split(strings.TrimSpace(csv.stdout), "\n"); csv.code != 0 || len(lines) != 4 || !strings.HasPrefix(lines[0], "distance_km,io_bytes,") {
		t.Errorf("csv: exit %d, %q", csv.code, csv.stdout)
	}

	dir := t.TempDir()
	page := filepath.Join(dir, "w.html")
	if h := run(t, "", "whatif", "replication", "-o", page); h.code != 0 {
		t.Fatalf("-o html: exit %d: %s", h.code, h.stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Content-Security-Policy", "<svg", `id="whatif-data"`, "Synchronous mirroring"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(string(b), "http://") || strings.Contains(string(b), "https://") {
		t.Errorf("page refers to the network")
	}
	js := filepath.Join(dir, "w.json")
	if h := run(t, "", "whatif", "replication", "--rtt", "0.4ms", "--remote-write", "0.5ms", "-o", js); h.code != 0 {
		t.Fatalf("-o json: exit %d: %s", h.code, h.stderr)
	}
	b, _ = os.ReadFile(js)
	if err := json.Unmarshal(b, &w); err != nil || w.MeasuredRTTUS != 400 || w.RemoteWrite.OverheadUS != 500 || len(w.Rows) != 3 || w.Rows[0].DistanceKm != 40 {
		t.Errorf("measured RTT: %v %+v", err, w)
	}
}

// TestWhatIfReplicationFromReports: the RTT of a nettest report and the
// write times of iotest reports, as latscope wrote them.
func TestWhatIfReplicationFromReports(t *testing.T) {
	root := testenv.RepoRoot(t)
	data := func(name string) string { return filepath.Join(root, "analysis", "whatif", "testdata", name) }
	r := run(t, "", "whatif", "replication", "--rtt", data("nettest-sync-2k.json"), "--iotest", data("iotest-write-2k.json"),
		"--iotest", data("iotest-write-8k.json"), "--io", "2k", "--format", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var w whatifJSON
	if err := json.Unmarshal([]byte(r.stdout), &w); err != nil {
		t.Fatal(err)
	}
	// The fit passes through both points: at 2k the zero-distance time is
	// the iotest mean, 184.545 µs; the nettest mean RTT is 32.743 µs.
	if len(w.Rows) != 1 || w.MeasuredRTTUS < 32.74 || w.MeasuredRTTUS > 32.75 || w.Rows[0].Sync.WriteUS < 217.28 || w.Rows[0].Sync.WriteUS > 217.30 {
		t.Errorf("from reports: %+v", w)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--iotest", data("iotest-read-8k.json")}, "iotest-read-8k.json: a random read test"},
		{[]string{"--rtt", data("iotest-write-2k.json")}, `iotest-write-2k.json: a report of "latscope iotest"`},
		{[]string{"--rtt", filepath.Join(root, "no-such.json")}, "no-such.json"},
	} {
		if e := run(t, "", append([]string{"whatif", "replication"}, c.args...)...); e.code != 1 || !strings.Contains(e.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 1 and %q", c.args, e.code, e.stderr, c.want)
		}
	}
}

func TestWhatIfReplicationUsage(t *testing.T) {
	if h := run(t, "", "whatif", "replication", "--help"); h.code != 0 || !strings.Contains(h.stdout, "Examples:") {
		t.Errorf("--help: exit %d, no examples", h.code)
	}
	if r := run(t, "", "whatif"); r.code != 2 || !strings.Contains(r.stderr, "replication") {
		t.Errorf("whatif alone: exit %d, %q", r.code, r.stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--distance", "far"}, `"far" is not a distance`},
		{[]string{"--io", "2k,x"}, "--io"},
		{[]string{"--bandwidth", "fast"}, "--bandwidth"},
		{[]string{"--encoding", "4b5b"}, "want 8b10b, 64b66b or none"},
		{[]string{"--round-trips", "0"}, "--round-trips"},
		{[]string{"--rtt", "0.4ms", "--distance", "10km"}, "not both"},
		{[]string{"--remote-write", "0.5ms", "--iotest", "x.json"}, "not both"},
		{[]string{"--remote-write", "2k=0.74ms,5k=0.66ms"}, "falls as the size grows"},
		{[]string{"--write-rate", "fast"}, "--write-rate"},
		{[]string{"--buffer", "1g"}, "needs --write-rate"},
		{[]string{"--format", "html"}, "--format"},
		{[]string{"extra"}, "takes no arguments"},
	} {
		if r := run(t, "", append([]string{"whatif", "replication"}, c.args...)...); r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// TestWhatIfDocExample: every line docs/whatif.md shows of its examples is
// in the output of the command it shows.
func TestWhatIfDocExample(t *testing.T) { checkDocExamples(t, "whatif.md", 2) }
