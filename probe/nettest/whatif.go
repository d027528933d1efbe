package nettest

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/latscope/latscope/probe/loadtest"
)

// WhatIf is the seed's arithmetic: a session that makes one call after the
// other pays, per call, its round trips on the wire plus the server's time;
// so the TPS a single session can reach is 1 / (k·RTT + server time), and
// a server time can be derived from a TPS observed at a known RTT:
// server time = (1 s − k·RTT·TPS) / TPS.
type WhatIf struct {
	// ServerTimeUS is the per-call time outside the network.
	ServerTimeUS float64 `json:"server_time_us"`
	// FromTPS is the TPS it was derived from (0: given directly).
	FromTPS float64 `json:"from_tps,omitempty"`
	// RoundTrips is the round trips per call (k).
	RoundTrips int `json:"round_trips_per_call"`
	// MeasuredRTTUS is the measured mean round trip the rows start from.
	MeasuredRTTUS float64     `json:"measured_rtt_us"`
	Rows          []WhatIfRow `json:"rows"`
}

// WhatIfRow is one RTT's outcome.
type WhatIfRow struct {
	Label string  `json:"label"`
	RTTUS float64 `json:"rtt_us"`
	// TPS is what one session reaches; NetworkShare the part of each call
	// spent on the wire.
	TPS          float64 `json:"tps"`
	NetworkShare float64 `json:"network_share"`
}

// Reference round trips from the seed (oratcptest, 250-byte payload).
var referenceRTTs = []struct {
	label string
	us    float64
}{
	{"same host (seed: 0.021 ms)", 21},
	{"local network (seed: 0.161 ms)", 161},
	{"across networks (seed: 0.685 ms)", 685},
}

// NewWhatIf builds the calculator from the measured mean RTT and either a
// server time or a TPS observed at that RTT (the other zero).
func NewWhatIf(rttUS float64, serverTime time.Duration, tps float64, roundTrips int) (*WhatIf, error) {
	if roundTrips < 1 {
		roundTrips = 1
	}
	if !(rttUS > 0) {
		return nil, errors.New("what-if: no round trip was measured")
	}
	w := &WhatIf{RoundTrips: roundTrips, MeasuredRTTUS: rttUS, ServerTimeUS: float64(serverTime) / float64(time.Microsecond)}
	if tps > 0 {
		network := float64(roundTrips) * rttUS * tps // µs per second on the wire
		if network >= 1e6 {
			return nil, fmt.Errorf("what-if: %g calls per second with %d round trip(s) of %.1f µs each would need %.2f s "+
				"of network time per second: one session cannot reach that (at most %.0f per second)",
				tps, roundTrips, rttUS, network/1e6, 1e6/(float64(roundTrips)*rttUS))
		}
		w.FromTPS = tps
		w.ServerTimeUS = (1e6 - network) / tps
	}
	rows := []WhatIfRow{{Label: "measured", RTTUS: rttUS}}
	for _, f := range []float64{0.5, 2, 5} {
		rows = append(rows, WhatIfRow{Label: fmt.Sprintf("%g× measured", f), RTTUS: f * rttUS})
	}
	for _, ref := range referenceRTTs {
		rows = append(rows, WhatIfRow{Label: ref.label, RTTUS: ref.us})
	}
	slices.SortStableFunc(rows, func(a, b WhatIfRow) int {
		switch {
		case a.RTTUS < b.RTTUS:
			return -1
		case a.RTTUS > b.RTTUS:
			return 1
		}
		return 0
	})
	for i := range rows {
		call := loadtest.SerialCall{RoundTrips: roundTrips, RTTUS: rows[i].RTTUS, ServiceUS: w.ServerTimeUS}
		rows[i].TPS, rows[i].NetworkShare = call.PerSecond(), call.NetworkShare()
	}
	w.Rows = rows
	return w, nil
}

// write prints the calculator.
func (w *WhatIf) write(out io.Writer) {
	from := "given"
	if w.FromTPS > 0 {
		from = fmt.Sprintf("from %g TPS observed at the measured RTT: (1 s − %d × %s × %g) / %g",
			w.FromTPS, w.RoundTrips, usText(w.MeasuredRTTUS), w.FromTPS, w.FromTPS)
	}
	fmt.Fprintf(out, "What if (one session, %d round trip(s) per call, server time %s per call, %s):\n",
		w.RoundTrips, usText(w.ServerTimeUS), from)
	fmt.Fprintf(out, "  %-34s %10s %12s %9s\n", "round trip", "RTT", "calls/s", "network")
	for _, r := range w.Rows {
		fmt.Fprintf(out, "  %-34s %10s %12.0f %8.0f%%\n", r.Label, usText(r.RTTUS), r.TPS, 100*r.NetworkShare)
	}
}
