package whatif

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The reports in testdata/ were written by latscope itself: iotest --write
// --concurrency 1 --bs 2k and 8k on a scratch file, an 8k read test, and
// nettest client --size 2k against a loopback nettest server.

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReadReports(t *testing.T) {
	rtt, err := ReadNetTestRTT("nettest-sync-2k.json", bytes.NewReader(readFile(t, "nettest-sync-2k.json")))
	if err != nil || math.Abs(rtt-32.742574470190625) > 1e-9 {
		t.Errorf("nettest RTT %g µs, %v; want the report's mean_us 32.74", rtt, err)
	}
	p, err := ReadIOTestWrite("iotest-write-2k.json", bytes.NewReader(readFile(t, "iotest-write-2k.json")))
	if err != nil || p.Bytes != 2048 || math.Abs(p.US-184.54534627472728) > 1e-9 || !strings.Contains(p.From, "10818 writes") {
		t.Errorf("iotest point %+v, %v; want 2048 bytes at the mean 184.5 µs of 10818 writes", p, err)
	}
	for _, c := range []struct {
		name, data, want string
		read             func(string, []byte) error
	}{
		{"read test", string(readFile(t, "iotest-read-8k.json")), "want one of latscope iotest --write", iotestRead},
		{"nettest as iotest", string(readFile(t, "nettest-sync-2k.json")), `a report of "latscope nettest"`, iotestRead},
		{"iotest as nettest", string(readFile(t, "iotest-write-2k.json")), `a report of "latscope iotest"`, nettestRead},
		{"connect mode", `{"tool":"latscope nettest","mode":"connect","mean_us":50,"round_trips":3}`, "connect-mode", nettestRead},
		{"nothing measured", `{"tool":"latscope nettest","mode":"sync","mean_us":0}`, "no round trip", nettestRead},
		{"no step", `{"tool":"latscope iotest","operation":"random write (O_DSYNC)","bs":8192}`, "no measured step", iotestRead},
		{"bad step", `{"tool":"latscope iotest","operation":"random write (O_DSYNC)","bs":8192,"modes_step":1,"steps":[{"ops":0}]}`, "measured no write", iotestRead},
		{"syntax", "{\n\"tool\": \"latscope iotest\",\n\"bs\": x}", "line 3", iotestRead},
		{"type", "{\"tool\": \"latscope iotest\",\n\"bs\": \"8k\"}", "line 2", iotestRead},
		{"not json", "latency 1ms", "not a latscope nettest --format json report", nettestRead},
	} {
		err := c.read("r.json", []byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "r.json: ") {
			t.Errorf("%s: error %v, want r.json: …%s…", c.name, err, c.want)
		}
	}
}

func iotestRead(name string, b []byte) error {
	_, err := ReadIOTestWrite(name, bytes.NewReader(b))
	return err
}

func nettestRead(name string, b []byte) error {
	_, err := ReadNetTestRTT(name, bytes.NewReader(b))
	return err
}

// FuzzReadReports: any input gives a usable figure or an error naming the
// file, never a panic, a negative or an infinite figure.
func FuzzReadReports(f *testing.F) {
	for _, name := range []string{"iotest-write-2k.json", "iotest-write-8k.json", "iotest-read-8k.json", "nettest-sync-2k.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"tool":"latscope iotest","operation":"random write","bs":-1,"modes_step":1,"steps":[{"ops":1,"mean_us":1e308}]}`))
	f.Add([]byte(`{"tool":"latscope nettest","mean_us":1e400}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if rtt, err := ReadNetTestRTT("f.json", bytes.NewReader(b)); err == nil && !(rtt > 0 && !math.IsInf(rtt, 0)) {
			t.Errorf("RTT %g without an error", rtt)
		} else if err != nil && !strings.HasPrefix(err.Error(), "f.json: ") {
			t.Errorf("error %q does not name the file", err)
		}
		if p, err := ReadIOTestWrite("f.json", bytes.NewReader(b)); err == nil && !(p.US > 0 && !math.IsInf(p.US, 0) && p.Bytes > 0) {
			t.Errorf("point %+v without an error", p)
		} else if err != nil && !strings.HasPrefix(err.Error(), "f.json: ") {
			t.Errorf("error %q does not name the file", err)
		}
	})
}

func TestParsers(t *testing.T) {
	if kms, err := ParseDistances("100km,10,500m,10km,1mi"); err != nil || len(kms) != 4 || kms[0] != 0.5 || kms[1] != 1.609344 || kms[2] != 10 || kms[3] != 100 {
		t.Errorf("distances %v, %v", kms, err)
	}
	if sizes, err := ParseSizes("128k,2k,8k,2k"); err != nil || len(sizes) != 3 || sizes[0] != 2048 || sizes[2] != 131072 {
		t.Errorf("sizes %v, %v", sizes, err)
	}
	for s, want := range map[string]float64{"2Gbit": 2e9, "1.5mbit": 1.5e6, "1.5Mbit/s": 1.5e6, "10G": 1e10, "100Mbps": 1e8, "8Gb": 8e9, "64k": 64e3} {
		if got, err := ParseBandwidth(s); err != nil || got != want {
			t.Errorf("bandwidth %q: %g, %v; want %g", s, got, err, want)
		}
	}
	if r, err := ParseRate("60MB/s"); err != nil || r.BytesPerSecond != 60<<20 {
		t.Errorf("rate 60MB/s: %+v, %v", r, err)
	}
	if r, err := ParseRate("1.5GiB/s"); err != nil || r.BytesPerSecond != 1.5*(1<<30) {
		t.Errorf("rate 1.5GiB/s: %+v, %v", r, err)
	}
	if r, err := ParseRate("2000iops"); err != nil || r.IOPS != 2000 {
		t.Errorf("rate 2000iops: %+v, %v", r, err)
	}
	if us, ok, err := ParseRTT("0.4ms"); !ok || err != nil || us != 400 {
		t.Errorf("rtt 0.4ms: %g %v %v", us, ok, err)
	}
	if _, ok, _ := ParseRTT("nettest.json"); ok {
		t.Errorf("a file name taken for a duration")
	}
	link := fc2G(t)
	if rw, err := ParseRemoteWrite("0.6ms+0.027ms/k", link); err != nil || rw.OverheadUS != 600 || math.Abs(rw.SlopeUSPerKiB-27) > 1e-9 {
		t.Errorf("0.6ms+0.027ms/k: %+v, %v", rw, err)
	}
	if rw, err := ParseRemoteWrite("0.5ms", link); err != nil || rw.OverheadUS != 500 || rw.SlopeUSPerKiB != 0 || rw.LoadUS(2048, link) != 10.24 {
		t.Errorf("0.5ms: %+v, %v", rw, err)
	}
	// One measured point: the overhead is what the link's load leaves.
	if rw, err := ParseRemoteWrite("2k=0.66ms", link); err != nil || math.Abs(rw.ZeroDistanceUS(2048, link)-660) > 1e-9 {
		t.Errorf("2k=0.66ms: %+v, %v", rw, err)
	}
	for _, bad := range []struct {
		parse func() error
		want  string
	}{
		{func() error { _, err := ParseDistances("10km,far"); return err }, `"far" is not a distance`},
		{func() error { _, err := ParseDistances("-5km"); return err }, "not a distance"},
		{func() error { _, err := ParseSizes("2k,0"); return err }, "is zero"},
		{func() error { _, err := ParseBandwidth("fast"); return err }, "want a line rate"},
		{func() error { _, err := ParseBandwidth("0Gbit"); return err }, "want a line rate"},
		{func() error { _, err := ParseRate("60"); return err }, "want MB/s"},
		{func() error { _, err := ParseRate("60XB/s"); return err }, "positive byte rate"},
		{func() error { _, err := ParseRate("0MB/s"); return err }, "positive byte rate"},
		{func() error { _, err := ParseRate("-5iops"); return err }, "positive number"},
		{func() error { _, _, err := ParseRTT("0s"); return err }, "positive round trip"},
		{func() error { _, err := ParseRemoteWrite("2k=0.66ms,5k", link); return err }, "not SIZE=DURATION"},
		{func() error { _, err := ParseRemoteWrite("2k=0.74ms,5k=0.66ms", link); return err }, "falls as the size grows"},
		{func() error { _, err := ParseRemoteWrite("2k=1us", link); return err }, "negative fixed overhead"},
		{func() error { _, err := ParseRemoteWrite("0.6ms+0.027ms", link); return err }, "not DURATION/SIZE"},
		{func() error { _, err := ParseRemoteWrite("soon", link); return err }, "not a duration"},
		{func() error { _, err := NewLink(2e9, "8b9b", 5); return err }, "want 8b10b, 64b66b or none"},
		{func() error { _, err := NewLink(2e9, "none", 0); return err }, "positive delay"},
	} {
		if err := bad.parse(); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("error %v, want …%s…", err, bad.want)
		}
	}
}

func TestFitLeastSquares(t *testing.T) {
	link := fc2G(t)
	// Three points on 0.5 ms + 0.03 ms/KiB: the fit finds them again.
	pts := []Point{{2048, 560, "a"}, {8192, 740, "b"}, {32768, 1460, "c"}}
	rw, err := FitRemoteWrite(pts, link)
	if err != nil || math.Abs(rw.OverheadUS-500) > 1e-6 || math.Abs(rw.SlopeUSPerKiB-30) > 1e-9 {
		t.Errorf("fit %+v, %v", rw, err)
	}
	// Points at one size: their mean, less the link's load.
	rw, err = FitRemoteWrite([]Point{{8192, 700, "a"}, {8192, 900, "b"}}, link)
	if err != nil || math.Abs(rw.ZeroDistanceUS(8192, link)-800) > 1e-9 || rw.SlopeUSPerKiB != 0 {
		t.Errorf("one size: %+v, %v", rw, err)
	}
	if _, err := FitRemoteWrite(nil, link); err == nil {
		t.Errorf("no points: no error")
	}
}

// TestLimits: the link's load time overrides a faster slope; the queue
// depth, credits and the offered rate set the asynchronous figures.
func TestLimits(t *testing.T) {
	slow, _ := NewLink(100e6, "none", 5) // 12.5 MB/s: 2 KiB load 163.84 µs, slower than the seed's 54 µs
	c := Config{Link: slow, Remote: SeedRemoteWrite(), RoundTrips: 2, DistancesKm: []float64{100}, Sizes: []int64{2048}}
	r := build(t, c)
	s := r.Rows[0].Sync
	if s.LoadUS != 163.84 || s.RoundTripsUS != 2000 || math.Abs(s.WriteUS-2763.84) > 1e-9 {
		t.Errorf("slow link: %+v", s)
	}
	c = seedConfig(t, []float64{100}, 8)
	c.QueueDepth, c.WriteRate, c.BufferBytes = 8, &Rate{BytesPerSecond: 60 << 20}, 1<<30
	a, o := build(t, c).Rows[0].Async, build(t, c).Rows[0].Offered
	if a.LimitedBy != "queue depth 8" || math.Abs(a.MaxIOPS-8e6/1816) > 1e-6 || o.KeepsUp || o.BufferFullSeconds <= 0 ||
		!strings.Contains(o.Verdict, "asynchronous behaves synchronously") {
		t.Errorf("queue depth 8 at 60 MiB/s: %+v %+v", a, o)
	}
	if want := 7680 * 1816e-6; math.Abs(o.InFlight-want) > 1e-9 {
		t.Errorf("in flight %g, want Little's %g", o.InFlight, want)
	}
	c.QueueDepth, c.BBCredits = 0, 10 // 10 × 2 KiB per 1 ms round trip: 20 MB/s
	a = build(t, c).Rows[0].Async
	if a.LimitedBy != "10 buffer-to-buffer credits" || math.Abs(a.MaxIOPS-10*2048/1e-3/8192) > 1e-6 {
		t.Errorf("credits: %+v", a)
	}
	c.BBCredits, c.WriteRate = 0, &Rate{IOPS: 100}
	if o := build(t, c).Rows[0].Offered; !o.KeepsUp || !strings.Contains(o.Verdict, "synchronous mirroring would keep up") {
		t.Errorf("100 I/O/s: %+v", o)
	}
	if _, err := Build(Config{Link: slow, RoundTrips: 1, Sizes: []int64{1}}); err == nil {
		t.Errorf("no distance: no error")
	}
}

// TestMeasuredRTT: a measured round trip stands for the distance.
func TestMeasuredRTT(t *testing.T) {
	c := seedConfig(t, nil, 2)
	c.MeasuredRTTUS, c.RTTFrom = 400, "given"
	r := build(t, c)
	if row := r.Rows[0]; len(r.Rows) != 1 || row.DistanceKm != 40 || row.Sync.RTTUS != 400 || row.Sync.WriteUS != 1054 {
		t.Errorf("rows %+v", r.Rows)
	}
}

func TestWriters(t *testing.T) {
	c := seedConfig(t, []float64{10, 50}, 2, 128)
	c.WriteRate = &Rate{IOPS: 5000}
	r := build(t, c)
	var table, js, page, sheet bytes.Buffer
	if err := WriteTable(&table, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Synchronous mirroring", "    50 km     2k     0.500 ms   0.054 ms   0.600 ms    1.154 ms      867",
		"Offered write rate 5000 I/O/s", "behave synchronously"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Rows) != 4 || back.Rows[1].Sync.IOPS != r.Rows[1].Sync.IOPS {
		t.Errorf("JSON round trip: %v %+v", err, back)
	}
	if err := WriteCSV(&sheet, r); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&sheet).ReadAll()
	if err != nil || len(recs) != 5 || len(recs[1]) != len(csvHeader) || recs[3][0] != "50" || recs[3][6] != "1154" {
		t.Errorf("CSV %v %q", err, recs)
	}
	if err := WriteHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Content-Security-Policy", "<svg", "<circle", `id="whatif-data"`, "Synchronous mirroring"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// FuzzFlags: whatever the flags' strings, they parse or fail with an
// error, and what parses builds a what-if whose every figure is finite
// (JSON refuses infinities and NaN).
func FuzzFlags(f *testing.F) {
	f.Add("10km,50km,100km", "2k,8k,128k", "2Gbit", "60MB/s", "0.6ms+0.027ms/k", 5.0, 8)
	f.Add("0", "1", "1", "1iops", "2k=1ms,4k=1.5ms", 1e3, 1)
	f.Add("1e5km", "1P", "1e15", "1e15iops", "2562047h", 1e-300, 0)
	f.Fuzz(func(t *testing.T, distances, sizes, bandwidth, rate, remote string, fibre float64, depth int) {
		kms, err1 := ParseDistances(distances)
		ios, err2 := ParseSizes(sizes)
		bps, err3 := ParseBandwidth(bandwidth)
		offered, err4 := ParseRate(rate)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || len(kms)*len(ios) > 1000 {
			return
		}
		link, err := NewLink(bps, "8b10b", fibre)
		if err != nil {
			return
		}
		rw, err := ParseRemoteWrite(remote, link)
		if err != nil {
			return
		}
		r, err := Build(Config{Link: link, Remote: rw, RoundTrips: 2, DistancesKm: kms, Sizes: ios, WriteRate: &offered,
			QueueDepth: max(depth, 0) % 1000, BBCredits: 40, BufferBytes: 1 << 30})
		if err != nil {
			t.Fatalf("parsed flags, no what-if: %v", err)
		}
		if err := WriteJSON(io.Discard, r); err != nil {
			t.Errorf("%q %q %q %q %q %g: %v", distances, sizes, bandwidth, rate, remote, fibre, err)
		}
	})
}
