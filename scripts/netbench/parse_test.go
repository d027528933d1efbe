package main

import (
	"bytes"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/latscope/latscope/probe/loadtest"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func checkMeasurement(t *testing.T, got, want measurement) {
	t.Helper()
	g := []float64{got.Seconds, got.PerSecond, got.MeanUS, got.P50US, got.P90US, got.P99US, got.P999US, got.MinUS, got.MaxUS, got.SelfCPUPerRoundTripUS}
	w := []float64{want.Seconds, want.PerSecond, want.MeanUS, want.P50US, want.P90US, want.P99US, want.P999US, want.MinUS, want.MaxUS, want.SelfCPUPerRoundTripUS}
	names := []string{"seconds", "per second", "mean", "p50", "p90", "p99", "p99.9", "min", "max", "self cpu"}
	if got.RoundTrips != want.RoundTrips || got.AllRoundTrips != want.AllRoundTrips {
		t.Errorf("round trips %d (all %d), want %d (all %d)", got.RoundTrips, got.AllRoundTrips, want.RoundTrips, want.AllRoundTrips)
	}
	for i := range g {
		if !near(g[i], w[i]) {
			t.Errorf("%s = %v, want %v", names[i], g[i], w[i])
		}
	}
}

// The real sockperf 3.7 reports (testdata/PROVENANCE.md), colour codes
// and all: figures are µs of full round trips over sockperf's valid
// duration; the CPU divisor counts the whole run's replies.
func TestParseSockperfReal(t *testing.T) {
	for _, c := range []struct {
		file string
		want measurement
	}{
		{"sockperf-3.7-pingpong-tcp-fullrtt-m64.txt", measurement{
			RoundTrips: 22617, Seconds: 1.55, PerSecond: 22617 / 1.55, Latency: loadtest.Latency{MeanUS: 68.519,
				P50US: 67.360, P90US: 76.123, P99US: 95.662, P999US: 131.135, MaxUS: 3150.220}, MinUS: 23.414, AllRoundTrips: 28593,
		}},
		{"sockperf-3.7-pingpong-tcp-fullrtt-m1024.txt", measurement{
			RoundTrips: 26014, Seconds: 1.55, PerSecond: 26014 / 1.55, Latency: loadtest.Latency{MeanUS: 59.576,
				P50US: 57.154, P90US: 70.124, P99US: 81.711, P999US: 112.306, MaxUS: 2505.259}, MinUS: 16.033, AllRoundTrips: 34023,
		}},
	} {
		t.Run(c.file, func(t *testing.T) {
			out := readTestdata(t, c.file)
			if !bytes.Contains(out, []byte("\x1b[")) {
				t.Fatal("the real output should carry sockperf's colour codes")
			}
			m, err := parseSockperf(out)
			if err != nil {
				t.Fatal(err)
			}
			checkMeasurement(t, m, c.want)
			// Independent checks: the observation count is the valid
			// duration's ReceivedMessages, and the percentiles are ordered
			// between the minimum and the maximum.
			if !bytes.Contains(out, []byte("ReceivedMessages="+strconv.FormatInt(m.RoundTrips, 10)+"\n")) {
				t.Errorf("%d observations is not the valid duration's count", m.RoundTrips)
			}
			seq := []float64{m.MinUS, m.P50US, m.P90US, m.P99US, m.P999US, m.MaxUS}
			for i := 1; i < len(seq); i++ {
				if seq[i] < seq[i-1] {
					t.Errorf("figures out of order: %v", seq)
				}
			}
		})
	}
}

// Real failures and edits of a real report that the harness must refuse,
// not misread.
func TestParseSockperfRefuses(t *testing.T) {
	real := readTestdata(t, "sockperf-3.7-pingpong-tcp-fullrtt-m64.txt")
	edit := func(old, new string) []byte {
		if !bytes.Contains(real, []byte(old)) {
			t.Fatalf("the real output lacks %q", old)
		}
		return bytes.Replace(real, []byte(old), []byte(new), 1)
	}
	block := real[bytes.Index(real, []byte("sockperf: ========= Printing")):]
	for name, c := range map[string]struct {
		out  []byte
		want string
	}{
		// sockperf exits 0 when it cannot connect.
		"connection refused (real)": {readTestdata(t, "sockperf-3.7-refused.txt"), "Can`t connect socket (errno=111 Connection refused)"},
		"half round trips (real)":   {readTestdata(t, "sockperf-3.7-pingpong-tcp-halfrtt-m64.txt"), "--full-rtt"},
		"no p99.9":                  {edit("sockperf: ---> percentile 99.900 =  131.135\n", ""), `no "percentile 99.900" line`},
		"unreadable percentile":     {edit("percentile 99.900 =  131.135", "percentile 99.900 =  13x.135"), "line 19"},
		"two servers":               {append(bytes.Clone(real), block...), "statistics for 2 servers"},
		"dropped messages":          {edit("# dropped messages = 0", "# dropped messages = 3"), "3 dropped"},
		"no observations":           {edit("Total 22617 observations", "Total 0 observations"), "no round trips"},
		"no avg-rtt":                {edit("====> avg-rtt=68.519", "====> avg-rtt=0"), "no avg-rtt"},
		"help text (bad option)":    {[]byte("sockperf: '-m' Invalid message size: 13 (min: 14)\nping-pong (pp): Run sockperf client\n"), "no round trips"},
		"empty":                     {nil, "no round trips"},
	} {
		_, err := parseSockperf(c.out)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want it to mention %q", name, err, c.want)
		}
	}
}

// The real qperf 0.4.11 outputs: the round trip is twice the one-way
// latency; -vvs adds the count of replies.
func TestParseQperfReal(t *testing.T) {
	m, err := parseQperf(readTestdata(t, "qperf-0.4.11-tcp_lat-m1024-vvs.txt"), 2)
	if err != nil {
		t.Fatal(err)
	}
	checkMeasurement(t, m, measurement{RoundTrips: 35935, AllRoundTrips: 35935, Seconds: 2, PerSecond: 35935 / 2.0, Latency: loadtest.Latency{MeanUS: 55.6}})
	// Independent check: qperf's count over its 2 s agrees with its mean
	// (3 significant digits) within 0.2 %.
	if got := 2e6 / m.MeanUS; math.Abs(got/float64(m.RoundTrips)-1) > 0.002 {
		t.Errorf("2 s / %.1f µs = %.0f round trips, qperf counted %d", m.MeanUS, got, m.RoundTrips)
	}

	// Without -vvs the count is estimated from the mean.
	m, err = parseQperf(readTestdata(t, "qperf-0.4.11-tcp_lat-m64.txt"), 2)
	if err != nil {
		t.Fatal(err)
	}
	checkMeasurement(t, m, measurement{RoundTrips: 35211, AllRoundTrips: 35211, Seconds: 2, PerSecond: 1e6 / 56.8, Latency: loadtest.Latency{MeanUS: 56.8}})

	if _, err := parseQperf(readTestdata(t, "qperf-0.4.11-refused.txt"), 2); err == nil || !strings.Contains(err.Error(), "127.0.0.1: failed to connect") {
		t.Errorf("refused: err %v", err)
	}
}

// qperf scales its unit to the figure; synthetic lines in its layout
// (qperf 0.4.11 prints "latency = N UNIT" with ns, us, ms or sec).
func TestQperfUnits(t *testing.T) {
	for in, want := range map[string]float64{"  950 ns": 0.95, "32.1 us": 32.1, "1.5 ms": 1500, "2 sec": 2e6} {
		got, err := qperfMicroseconds(in)
		if err != nil || !near(got, want) {
			t.Errorf("%q: %v µs (%v), want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"32.1", "32.1 parsecs", "-1 us", "x us", "0 us", ""} {
		if _, err := qperfMicroseconds(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
	for _, out := range []string{"", "tcp_lat:\n", "tcp_lat:\n    latency  =  fast\n", "tcp_lat:\n    latency  =  1 us\n    loc_recv_msgs = 1.2.3\n"} {
		if _, err := parseQperf([]byte(out), 2); err == nil {
			t.Errorf("%q accepted", out)
		}
	}
}

// The real latscope reports (testdata/PROVENANCE.md).
func TestParseLatscopeReal(t *testing.T) {
	out := readTestdata(t, "latscope-nettest-client-64.json")
	m, err := parseLatscope(out, 64)
	if err != nil {
		t.Fatal(err)
	}
	checkMeasurement(t, m, measurement{
		RoundTrips: 31488, AllRoundTrips: 31488, Seconds: 1.9999222300000001, PerSecond: 15744.612229246533,
		Latency: loadtest.Latency{MeanUS: 63.36120909552844, P50US: 62.41507217599345, P90US: 86.92694308910269,
			P99US: 112.24863643581152, P999US: 146.3649356468334, MaxUS: 2407.911},
		SelfCPUPerRoundTripUS: 30.77762957317073,
	})
	if got := float64(m.RoundTrips) / m.Seconds; !near(got, m.PerSecond) {
		t.Errorf("round trips / seconds = %v, per second %v", got, m.PerSecond)
	}
	m, err = parseLatscope(readTestdata(t, "latscope-nettest-client-1024.json"), 1024)
	if err != nil || m.RoundTrips != 28600 || !near(m.P50US, 67.9153285692804) {
		t.Errorf("1024 B: %+v, %v", m, err)
	}
	for _, c := range []struct {
		size int
		out  []byte
		want string
	}{
		{1024, out, "64-byte requests, 64-byte replies, want 1024"},
		{64, bytes.Replace(out, []byte(`"mode": "sync"`), []byte(`"mode": "stream"`), 1), `mode "stream"`},
		{64, bytes.Replace(out, []byte(`"connections": 1`), []byte(`"connections": 4`), 1), "4 connections"},
		{64, bytes.Replace(out, []byte(`"errors": 0`), []byte(`"errors": 2`), 1), "2 errors"},
		{64, bytes.Replace(out, []byte(`"round_trips": 31488`), []byte(`"round_trips": 0`), 1), "no round trips"},
		{64, []byte("Error: dial tcp 127.0.0.1:1: connect: connection refused\n"), "no JSON"},
	} {
		if _, err := parseLatscope(c.out, c.size); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err %v, want it to mention %q", err, c.want)
		}
	}
}

// The parsers never panic and never return figures with an error-free
// nonsense: whatever they accept has round trips and a positive mean.
func FuzzParseSockperf(f *testing.F) {
	for _, name := range []string{"sockperf-3.7-pingpong-tcp-fullrtt-m64.txt", "sockperf-3.7-pingpong-tcp-fullrtt-m1024.txt",
		"sockperf-3.7-refused.txt", "sockperf-3.7-pingpong-tcp-halfrtt-m64.txt"} {
		f.Add(readTestdata(f, name))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		m, err := parseSockperf(out)
		if err == nil && (m.RoundTrips <= 0 || m.Seconds <= 0 || m.MeanUS <= 0 || math.IsNaN(m.PerSecond)) {
			t.Errorf("accepted %+v", m)
		}
	})
}

func FuzzParseQperf(f *testing.F) {
	for _, name := range []string{"qperf-0.4.11-tcp_lat-m1024-vvs.txt", "qperf-0.4.11-tcp_lat-m64.txt", "qperf-0.4.11-refused.txt"} {
		f.Add(readTestdata(f, name))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		m, err := parseQperf(out, 2)
		if err == nil && (m.MeanUS <= 0 || m.RoundTrips < 0 || math.IsNaN(m.PerSecond) || math.IsInf(m.PerSecond, 0)) {
			t.Errorf("accepted %+v", m)
		}
	})
}
