package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/latscope/latscope/scripts/benchkit"
)

// row is one server's measurement.
type row struct {
	Server   string `json:"server"`
	Sessions int    `json:"sessions"`
	// Kind is the sampler's technique from the report's "source" object.
	Kind         string   `json:"kind"`
	PollsPerS    float64  `json:"polls_per_s"`
	Events       float64  `json:"events"`
	EventsPerS   float64  `json:"events_per_s"`
	CaptureRatio *float64 `json:"capture_ratio,omitempty"`
	Missed       int64    `json:"missed,omitempty"`
	// CPUSeconds is latscope's user+system time (child rusage), WallS its
	// whole run (start, connection, --setup, sampling, report), Cores
	// their ratio.
	CPUSeconds float64 `json:"cpu_s"`
	WallS      float64 `json:"wall_s"`
	Cores      float64 `json:"cores"`
	MaxRSSKB   int64   `json:"max_rss_kb"`
	// LoadRate is the workload's own rate (LoadUnit: queries/s for
	// MariaDB, pgbench's transactions/s for PostgreSQL).
	LoadRate float64 `json:"load_rate"`
	LoadUnit string  `json:"load_unit"`
	// Settings notes the server settings that bound the sampler.
	Settings string `json:"settings,omitempty"`
	// Verdict is PASS or FAIL against the MariaDB claim, "" elsewhere.
	Verdict string `json:"verdict,omitempty"`
}

// reportJSON is the part of `latscope report --format json` dbbench reads.
type reportJSON struct {
	Series []struct {
		Count float64 `json:"count"`
	} `json:"series"`
	Source *struct {
		Kind           string   `json:"kind"`
		PollsPerSecond float64  `json:"polls_per_s"`
		CaptureRatio   *float64 `json:"capture_ratio"`
		Missed         int64    `json:"missed"`
	} `json:"source"`
}

// summarise reads latscope's report and rusage into a row.
func summarise(server string, p benchkit.Process, sampled time.Duration) (row, error) {
	var rep reportJSON
	if err := benchkit.DecodeJSON(p.Stdout, &rep); err != nil {
		return row{}, fmt.Errorf("latscope report's JSON: %w", err)
	}
	if rep.Source == nil {
		return row{}, fmt.Errorf("latscope report has no \"source\" object (not a sampler?)")
	}
	r := row{
		Server:       server,
		Kind:         rep.Source.Kind,
		PollsPerS:    rep.Source.PollsPerSecond,
		CaptureRatio: rep.Source.CaptureRatio,
		Missed:       rep.Source.Missed,
		CPUSeconds:   p.CPU().Seconds(),
		WallS:        p.Wall.Seconds(),
		MaxRSSKB:     p.MaxRSSKB,
	}
	for _, s := range rep.Series {
		r.Events += s.Count
	}
	r.EventsPerS = r.Events / sampled.Seconds()
	if r.WallS > 0 {
		r.Cores = r.CPUSeconds / r.WallS
	}
	return r, nil
}

// verdict judges a row against the claim: the MariaDB sampler
// captures >= 99 % of the waits at 8 busy sessions using <= 1 core. Other
// servers have no claim ("").
func verdict(r row) string {
	if r.Server != "mariadb" {
		return ""
	}
	ok := r.CaptureRatio != nil && *r.CaptureRatio >= claimCapture && r.Cores <= claimCores
	return benchkit.PassWord(ok)
}

// verdictAll sets every row's verdict and reports whether none failed.
// Fewer sessions than the claim's cannot pass it.
func verdictAll(rows []row, sessions int) bool {
	pass := true
	for i := range rows {
		rows[i].Verdict = verdict(rows[i])
		if rows[i].Verdict == "PASS" && sessions < claimSessions {
			rows[i].Verdict = "FAIL"
		}
		pass = pass && rows[i].Verdict != "FAIL"
	}
	return pass
}

// writeTable prints the rows and the claim.
func writeTable(w io.Writer, rows []row, sessions int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "server\tsessions\tload\tpolls/s\tevents/s\tcapture\tmissed\tlatscope CPU\tcores\tRSS\tverdict\t")
	for _, r := range rows {
		capture := "n/a"
		if r.CaptureRatio != nil {
			capture = fmt.Sprintf("%.4f", *r.CaptureRatio)
		}
		v := r.Verdict
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f %s\t%.1f\t%.0f\t%s\t%d\t%.2f s / %.1f s\t%.3f\t%d MiB\t%s\t\n",
			r.Server, r.Sessions, r.LoadRate, r.LoadUnit, r.PollsPerS, r.EventsPerS, capture, r.Missed,
			r.CPUSeconds, r.WallS, r.Cores, (r.MaxRSSKB+512)/1024, v)
	}
	tw.Flush()
	for _, r := range rows {
		settings := ""
		if r.Settings != "" {
			settings = "; " + r.Settings
		}
		fmt.Fprintf(w, "%s sampler: %s%s\n", r.Server, r.Kind, settings)
	}
	note := ""
	if sessions < claimSessions {
		note = fmt.Sprintf(" (only %d sessions here: the claim is not tested)", sessions)
	}
	fmt.Fprintf(w, "claim: MariaDB sampler capture >= %.0f %% at %d busy sessions using <= %s core%s\n",
		claimCapture*100, claimSessions, strings.TrimSuffix(fmt.Sprintf("%.1f", claimCores), ".0"), note)
}
