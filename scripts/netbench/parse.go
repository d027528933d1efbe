package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/latscope/latscope/probe/loadtest"
	"github.com/latscope/latscope/probe/nettest"
	"github.com/latscope/latscope/scripts/benchkit"
)

// measurement is what one client reported for one run, in µs and round
// trips per second. A figure a tool does not report is 0 (qperf gives only
// a mean).
type measurement struct {
	// RoundTrips are those the latency figures describe; Seconds the time
	// they took (sockperf: its "valid duration" after a warm-up).
	RoundTrips int64   `json:"round_trips"`
	Seconds    float64 `json:"seconds"`
	PerSecond  float64 `json:"round_trips_per_s"`
	loadtest.Latency
	MinUS float64 `json:"min_us,omitempty"`
	// AllRoundTrips counts every round trip of the process, warm-up
	// included: the divisor of its CPU time.
	AllRoundTrips int64 `json:"all_round_trips"`
	// SelfCPUPerRoundTripUS is what the tool measured itself (latscope).
	SelfCPUPerRoundTripUS float64 `json:"self_cpu_per_round_trip_us,omitempty"`
}

// ansiEscape matches the colour sequences sockperf writes even to a pipe.
var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// sockperfPercentile is "---> percentile 99.900 =  131.135".
var sockperfPercentile = regexp.MustCompile(`^---> percentile ([0-9.]+) = *([0-9.]+)$`)

// sockperfReport is what the harness reads of a sockperf ping-pong report
// (sockperf 3.7): each line starts with "sockperf: ", figures in µs.
type sockperfReport struct {
	total, valid       sockperfRun
	avgRTT, summaryRTT float64
	minUS, maxUS       float64
	observations       int64
	percentiles        map[string]float64
	servers            int
	lost               int64 // dropped + duplicated + out of order
	errs               []string
	halfRTT            bool
}

// parseSockperf reads `sockperf ping-pong --tcp --full-rtt` output. It
// refuses a report of half round trips (no --full-rtt), of more than one
// server, with errors (sockperf exits 0 even when it cannot connect) or
// missing the percentiles compared.
func parseSockperf(out []byte) (measurement, error) {
	r, err := scanSockperf(out)
	if err != nil {
		return measurement{}, err
	}
	switch {
	case len(r.errs) > 0:
		return measurement{}, fmt.Errorf("sockperf: %s", strings.Join(r.errs, "; "))
	case r.halfRTT:
		return measurement{}, errors.New("sockperf reported one-way latency (avg-latency): run it with --full-rtt")
	case r.observations <= 0 || r.valid.seconds <= 0:
		return measurement{}, fmt.Errorf("sockperf: no round trips measured (%d observations in %g s)", r.observations, r.valid.seconds)
	case r.servers != 1:
		return measurement{}, fmt.Errorf("sockperf: statistics for %d servers, want 1", r.servers)
	case r.avgRTT == 0 || r.summaryRTT == 0 || r.maxUS == 0:
		return measurement{}, errors.New("sockperf: no avg-rtt, \"Summary: Round trip\" or <MAX> line")
	case r.lost != 0:
		return measurement{}, fmt.Errorf("sockperf: %d dropped, duplicated or out-of-order messages", r.lost)
	}
	pct := make([]float64, 4)
	for i, p := range []string{"50.000", "90.000", "99.000", "99.900"} {
		v, ok := r.percentiles[p]
		if !ok {
			return measurement{}, fmt.Errorf("sockperf: no \"percentile %s\" line", p)
		}
		pct[i] = v
	}
	return measurement{
		RoundTrips: r.observations, Seconds: r.valid.seconds,
		PerSecond: float64(r.observations) / r.valid.seconds,
		Latency:   loadtest.Latency{MeanUS: r.avgRTT, P50US: pct[0], P90US: pct[1], P99US: pct[2], P999US: pct[3], MaxUS: r.maxUS},
		MinUS:     r.minUS, AllRoundTrips: int64(r.total.received),
	}, nil
}

// scanSockperf collects the report's lines; a line it does not know is
// skipped (sockperf prints set-up chatter).
func scanSockperf(out []byte) (sockperfReport, error) {
	r := sockperfReport{percentiles: map[string]float64{}}
	sc := bufio.NewScanner(bytes.NewReader(ansiEscape.ReplaceAll(out, nil)))
	for n := 1; sc.Scan(); n++ {
		line, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "sockperf: ")
		if !ok {
			continue
		}
		if err := r.line(strings.TrimSpace(line)); err != nil {
			return r, fmt.Errorf("sockperf output line %d: %w", n, err)
		}
	}
	return r, sc.Err()
}

func (r *sockperfReport) line(line string) error {
	var err error
	switch {
	case strings.HasPrefix(line, "ERROR") || strings.HasPrefix(line, "FATAL"):
		r.errs = append(r.errs, line)
	case strings.HasPrefix(line, "[Total Run]"):
		err = r.total.parse(line)
	case strings.HasPrefix(line, "[Valid Duration]"):
		err = r.valid.parse(line)
	case strings.HasPrefix(line, "========= Printing statistics for Server"):
		r.servers++
	case strings.HasPrefix(line, "====> avg-rtt="):
		r.avgRTT, err = leadingFloat(strings.TrimPrefix(line, "====> avg-rtt="))
	case strings.HasPrefix(line, "====> avg-lat"):
		r.halfRTT = true
	case strings.HasPrefix(line, "Summary: Round trip is "):
		r.summaryRTT, err = leadingFloat(strings.TrimPrefix(line, "Summary: Round trip is "))
	case strings.HasPrefix(line, "Total ") && strings.Contains(line, " observations"):
		r.observations, err = strconv.ParseInt(strings.Fields(line)[1], 10, 64)
	case strings.HasPrefix(line, "---> <MAX> observation ="):
		r.maxUS, err = leadingFloat(strings.TrimPrefix(line, "---> <MAX> observation ="))
	case strings.HasPrefix(line, "---> <MIN> observation ="):
		r.minUS, err = leadingFloat(strings.TrimPrefix(line, "---> <MIN> observation ="))
	case strings.HasPrefix(line, "---> percentile "):
		m := sockperfPercentile.FindStringSubmatch(line)
		if m == nil {
			return fmt.Errorf("unreadable percentile line %q", line)
		}
		r.percentiles[m[1]], err = strconv.ParseFloat(m[2], 64)
	case strings.HasPrefix(line, "# dropped messages"):
		r.lost, err = sumCounts(line)
	}
	if err != nil {
		return fmt.Errorf("%q: %w", line, err)
	}
	return nil
}

// sockperfRun is a "[Total Run]" or "[Valid Duration]" line.
type sockperfRun struct{ seconds, sent, received float64 }

// parse reads "[Valid Duration] RunTime=1.550 sec; SentMessages=22617;
// ReceivedMessages=22617" (the Total Run line adds a warm-up time).
func (d *sockperfRun) parse(line string) error {
	var seen int
	for _, f := range strings.Split(line, ";") {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k[strings.LastIndexByte(k, ']')+1:])
		x, err := leadingFloat(v)
		if err != nil {
			return err
		}
		switch k {
		case "RunTime":
			d.seconds, seen = x, seen+1
		case "SentMessages":
			d.sent, seen = x, seen+1
		case "ReceivedMessages":
			d.received, seen = x, seen+1
		}
	}
	if seen != 3 {
		return errors.New("want RunTime, SentMessages and ReceivedMessages")
	}
	return nil
}

// sumCounts adds the numbers of "# dropped messages = 0; # duplicated
// messages = 0; # out-of-order messages = 0".
func sumCounts(line string) (int64, error) {
	var sum int64
	for _, f := range strings.Split(line, ";") {
		_, v, ok := strings.Cut(f, "=")
		if !ok {
			return 0, errors.New("want NAME = COUNT fields")
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
}

// leadingFloat reads the number at the start of s ("68.519 (std-dev=…)",
// "2.000 sec").
func leadingFloat(s string) (float64, error) {
	s = strings.TrimSpace(s)
	end := strings.IndexFunc(s, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.' || r == '-' || r == '+' || r == 'e') })
	if end < 0 {
		end = len(s)
	}
	v, err := strconv.ParseFloat(s[:end], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}

// qperfResult is what `qperf HOST -m SIZE -t SECONDS -vvs tcp_lat` says.
type qperfResult struct {
	// OneWayUS is qperf's "latency": half the mean round trip.
	OneWayUS float64
	// RecvMsgs (loc_recv_msgs, -vvs only) counts the replies the client
	// got: its round trips.
	RecvMsgs int64
}

// parseQperf reads qperf 0.4.11's tcp_lat result. The round trip is twice
// its one-way latency, a mean over the whole run; qperf has no
// percentiles.
func parseQperf(out []byte, seconds float64) (measurement, error) {
	q, err := scanQperf(out)
	if err != nil {
		return measurement{}, err
	}
	rtt := 2 * q.OneWayUS
	m := measurement{Latency: loadtest.Latency{MeanUS: rtt}, Seconds: seconds, PerSecond: 1e6 / rtt, AllRoundTrips: q.RecvMsgs}
	if q.RecvMsgs > 0 {
		m.RoundTrips = q.RecvMsgs
		m.PerSecond = float64(q.RecvMsgs) / seconds
	} else {
		// Without -vvs the count is the run's length over the mean.
		m.AllRoundTrips = int64(math.Round(seconds * 1e6 / rtt))
		m.RoundTrips = m.AllRoundTrips
	}
	return m, nil
}

func scanQperf(out []byte) (qperfResult, error) {
	var q qperfResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	inTest := false
	var complaints []string
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if line == "tcp_lat:" {
			inTest = true
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !inTest || !ok {
			complaints = append(complaints, line)
			continue
		}
		var err error
		switch strings.TrimSpace(k) {
		case "latency":
			q.OneWayUS, err = qperfMicroseconds(v)
		case "loc_recv_msgs":
			q.RecvMsgs, err = strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(v), ",", ""), 10, 64)
		}
		if err != nil {
			return q, fmt.Errorf("qperf output line %d %q: %w", n, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return q, err
	}
	if q.OneWayUS <= 0 {
		if len(complaints) > 0 {
			return q, fmt.Errorf("qperf: %s", strings.Join(complaints, "; "))
		}
		return q, errors.New("qperf: no tcp_lat latency line")
	}
	return q, nil
}

// qperfMicroseconds reads "32.1 us" (qperf scales to ns, us, ms or sec).
func qperfMicroseconds(v string) (float64, error) {
	f := strings.Fields(v)
	if len(f) != 2 {
		return 0, errors.New("want a number and a unit")
	}
	x, err := strconv.ParseFloat(f[0], 64)
	if err != nil || x <= 0 || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%q is not a positive number", f[0])
	}
	scale, ok := map[string]float64{"ns": 1e-3, "us": 1, "ms": 1e3, "sec": 1e6, "s": 1e6}[f[1]]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q", f[1])
	}
	return x * scale, nil
}

// parseLatscope reads latscope's report of a closed-loop sync test of size
// bytes each way over one connection.
func parseLatscope(out []byte, size int) (measurement, error) {
	var r nettest.Report
	if err := benchkit.DecodeJSON(out, &r); err != nil {
		return measurement{}, fmt.Errorf("latscope output: %w", err)
	}
	switch {
	case r.Mode != nettest.Sync.String() || r.Rate != 0:
		return measurement{}, fmt.Errorf("latscope output: mode %q at rate %g, want a closed-loop sync test", r.Mode, r.Rate)
	case r.RequestBytes != size || r.ReplyBytes != size:
		return measurement{}, fmt.Errorf("latscope output: %d-byte requests, %d-byte replies, want %d each way", r.RequestBytes, r.ReplyBytes, size)
	case r.Connections != 1:
		return measurement{}, fmt.Errorf("latscope output: %d connections, want 1", r.Connections)
	case r.RoundTrips <= 0 || r.Seconds <= 0:
		return measurement{}, fmt.Errorf("latscope output: no round trips (%d in %g s)", r.RoundTrips, r.Seconds)
	case r.Errors != 0 || r.LostConnections != 0:
		return measurement{}, fmt.Errorf("latscope output: %d errors, %d lost connections", r.Errors, r.LostConnections)
	}
	return measurement{
		RoundTrips: r.RoundTrips, Seconds: r.Seconds, PerSecond: r.PerSecond, Latency: r.Latency,
		AllRoundTrips: r.RoundTrips, SelfCPUPerRoundTripUS: r.CPUPerRoundTripUS,
	}, nil
}
