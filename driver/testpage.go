package driver

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/probe/iotest"
	"github.com/latscope/latscope/probe/loadtest"
	"github.com/latscope/latscope/probe/nettest"
	"github.com/latscope/latscope/view/static"
)

// The HTML export of a load test (-o FILE.html) shows the report the
// terminal prints, drawn from the same report struct, before the heat maps.
// Every figure's cell carries its exact value in data-v (as in the JSON
// report) beside the rounded text, so tests and scripts can read the page.

// reportStyle keeps the report's tables on one line per row (the page's
// stylesheet wraps the second column, a series name there), but for the
// notes. The page's policy allows inline styles.
const reportStyle = `<style>#report th, #report td { white-space: nowrap; overflow-wrap: normal; }
#report td[data-k="little_note"] { white-space: normal; text-align: left; min-width: 18em; }
#report h3 { font-size: 15px; margin: 14px 0 6px; }
#report #totals { width: auto; }</style>
`

// ioTestPage is the report part of `latscope iotest -o FILE.html`: the
// report sections and the step boundaries to mark on the maps.
func ioTestPage(rep iotest.Report, steps []iotest.StepResult) (string, []static.Mark) {
	var b strings.Builder
	b.WriteString(reportStyle + `<section class="card" id="report"><h2>Report</h2>` + "\n")
	direct := "O_DIRECT"
	if !rep.Direct {
		direct = "page cache (no O_DIRECT)"
	}
	fmt.Fprintf(&b, `<p class="meta" id="run">%s (%s), %s working set, %s %ss, %s, %s loop</p>`+"\n",
		esc(rep.Path), esc(rep.Kind), esc(formatBytes(rep.WorkingSetBytes)), esc(formatBytes(int64(rep.BS))),
		esc(rep.Operation), direct, esc(rep.Loop))
	fmt.Fprintf(&b, `<p class="meta" id="device">device: %s</p>`+"\n", esc(rep.Device.Summary()))
	fmt.Fprintf(&b, `<p class="meta" id="placement">placement: %s</p>`+"\n", esc(rep.Placement.String()))
	writeStepTable(&b, rep)
	writeKnee(&b, rep.Knee, kneeLoad(rep))
	if u := rep.USL; u != nil {
		fmt.Fprintf(&b, `<p id="usl" data-lambda="%s" data-sigma="%s" data-kappa="%s" data-r2="%s" data-peak-concurrency="%s" data-peak-iops="%s">`+
			`<b>USL fit</b> (R² %.2f): λ = %.0f IOPS per reader, σ = %.3f, κ = %.4f; %s</p>`+"\n",
			num(u.Lambda), num(u.Sigma), num(u.Kappa), num(u.R2), num(u.PeakConcurrency), num(u.PeakIOPS),
			u.R2, u.Lambda, u.Sigma, u.Kappa, esc(uslPeak(u)))
	}
	if q := rep.Queue; q != nil {
		fmt.Fprintf(&b, `<p id="queue" data-service-us="%s" data-saturation-iops="%s" data-r2="%s">`+
			`<b>Queueing fit</b> R = S/(1−ρ) (R² %.2f): service time %s, saturation near %.0f IOPS</p>`+"\n",
			num(q.ServiceUS), num(q.SaturationIOPS), num(q.R2), q.R2, esc(usText(q.ServiceUS)), q.SaturationIOPS)
	}
	writeModes(&b, rep.Modes, rep.ModesStep)
	writeList(&b, "reading", "Reading", rep.Reading)
	writeList(&b, "warnings", "Warnings", rep.Warnings)
	b.WriteString("</section>\n")
	writeChart(&b, "Latency against IOPS", "IOPS", ioChart(rep))

	marks := make([]static.Mark, 0, len(steps))
	for i, s := range steps {
		if !s.Start.IsZero() && i < len(rep.Steps) {
			marks = append(marks, static.Mark{At: s.Start, Label: rep.Steps[i].Load()})
		}
	}
	return b.String(), marks
}

// stepColumn is a column of the step table: its JSON name, heading, value
// and text; optional columns (the open loop's) show only when a step has
// a value there, as in the terminal's table.
type stepColumn struct {
	key, head string
	value     func(iotest.StepReport) float64
	text      func(float64) string
	optional  bool
}

var stepColumns = []stepColumn{
	{key: "concurrency", head: "Readers", value: func(s iotest.StepReport) float64 { return float64(s.Concurrency) }, text: intText},
	{key: "rate", head: "Rate offered", value: func(s iotest.StepReport) float64 { return s.Rate }, text: rateText, optional: true},
	{key: "seconds", head: "Seconds", value: func(s iotest.StepReport) float64 { return s.Seconds }, text: fixed(1)},
	{key: "ops", head: "Ops", value: func(s iotest.StepReport) float64 { return float64(s.Ops) }, text: intText},
	{key: "iops", head: "IOPS", value: func(s iotest.StepReport) float64 { return s.IOPS }, text: fixed(0)},
	{key: "mb_s", head: "MB/s", value: func(s iotest.StepReport) float64 { return s.MBs }, text: fixed(2)},
	{key: "mean_us", head: "Mean", value: func(s iotest.StepReport) float64 { return s.MeanUS }, text: usText},
	{key: "p50_us", head: "p50", value: func(s iotest.StepReport) float64 { return s.P50US }, text: usText},
	{key: "p90_us", head: "p90", value: func(s iotest.StepReport) float64 { return s.P90US }, text: usText},
	{key: "p99_us", head: "p99", value: func(s iotest.StepReport) float64 { return s.P99US }, text: usText},
	{key: "p999_us", head: "p99.9", value: func(s iotest.StepReport) float64 { return s.P999US }, text: usText},
	{key: "max_us", head: "Max", value: func(s iotest.StepReport) float64 { return s.MaxUS }, text: usText},
	{key: "cpu_per_op_us", head: "CPU/op", value: func(s iotest.StepReport) float64 { return s.CPUPerOpUS }, text: usText},
	{key: "little_concurrency", head: "X·R", value: func(s iotest.StepReport) float64 { return s.LittleConcurrency }, text: fixed(2)},
	{key: "little_ratio", head: "X·R / N", value: func(s iotest.StepReport) float64 { return s.LittleRatio }, text: fixed(2)},
	{key: "errors", head: "Errors", value: func(s iotest.StepReport) float64 { return float64(s.Errors) }, text: intText},
	{key: "issue_delay_p50_us", head: "Issue delay p50", value: func(s iotest.StepReport) float64 { return s.IssueDelayP50US }, text: usText, optional: true},
	{key: "issue_delay_p99_us", head: "Issue delay p99", value: func(s iotest.StepReport) float64 { return s.IssueDelayP99US }, text: usText, optional: true},
	{key: "not_issued", head: "Not issued", value: func(s iotest.StepReport) float64 { return float64(s.NotIssued) }, text: intText, optional: true},
}

// shownStepColumns leaves out the optional columns no step has a value in.
func shownStepColumns(steps []iotest.StepReport) []stepColumn {
	var cols []stepColumn
	for _, c := range stepColumns {
		used := !c.optional
		for _, s := range steps {
			used = used || c.value(s) != 0
		}
		if used {
			cols = append(cols, c)
		}
	}
	return cols
}

// writeStepTable writes one row per step with every figure of the JSON
// step, Little's note and completeness included.
func writeStepTable(b *strings.Builder, rep iotest.Report) {
	cols := shownStepColumns(rep.Steps)
	b.WriteString(`<h3>Steps</h3>` + "\n" + `<table id="steps"><thead><tr><th>#</th><th>Load</th>`)
	for _, c := range cols {
		b.WriteString("<th>" + esc(c.head) + "</th>")
	}
	b.WriteString("<th>Complete</th><th>Little's law</th></tr></thead>\n<tbody>\n")
	for i, s := range rep.Steps {
		fmt.Fprintf(b, `<tr data-step="%d"><td>%d</td><td>%s</td>`, i+1, i+1, esc(s.Load()))
		for _, c := range cols {
			v := c.value(s)
			fmt.Fprintf(b, `<td data-k="%s" data-v="%s">%s</td>`, c.key, num(v), esc(c.text(v)))
		}
		fmt.Fprintf(b, `<td data-k="complete" data-v="%t">%s</td><td data-k="little_note">%s</td></tr>`+"\n",
			s.Complete, yesNo(s.Complete), esc(s.LittleNote))
	}
	b.WriteString("</tbody></table>\n")
}

// kneeLoad names the knee's load: "8 readers", or for io_uring "1 reader
// × iodepth 8".
func kneeLoad(rep iotest.Report) string {
	k := rep.Knee
	if k == nil {
		return ""
	}
	if rep.Engine != "" && k.Index >= 0 && k.Index < len(rep.Steps) {
		return rep.Steps[k.Index].Load()
	}
	return iotest.LoadName(loadtest.Stats{Concurrency: k.Concurrency, Rate: k.Rate})
}

// writeKnee writes the saturation knee at load, or that there is none.
func writeKnee(b *strings.Builder, k *loadtest.Knee, load string) {
	if k == nil {
		b.WriteString(`<p id="knee" data-none="true"><b>Saturation knee</b>: none found</p>` + "\n")
		return
	}
	fmt.Fprintf(b, `<p id="knee" data-concurrency="%d" data-rate="%s" data-iops="%s" data-p99-us="%s">`+
		`<b>Saturation knee</b> at %s (%.0f IOPS, p99 %s): <span data-k="reason">%s</span></p>`+"\n",
		k.Concurrency, num(k.Rate), num(k.IOPS), num(k.P99US),
		esc(load), k.IOPS, esc(usText(k.P99US)), esc(k.Reason))
}

// writeModes writes the latency modes; step, when not 0, is the step they
// come from.
func writeModes(b *strings.Builder, modes []loadtest.Mode, step int) {
	fmt.Fprintf(b, `<h3>Latency modes</h3>`+"\n"+`<table id="modes" data-step="%d"><thead><tr>`+
		`<th>#</th><th>Label</th><th>Centre</th><th>Low (p5)</th><th>High (p95)</th><th>Share</th></tr></thead>`+"\n<tbody>\n", step)
	for i, m := range modes {
		fmt.Fprintf(b, `<tr data-mode="%d"><td>%d</td><td data-k="label">%s</td><td data-k="center_us" data-v="%s">%s</td>`+
			`<td data-k="low_us" data-v="%s">%s</td><td data-k="high_us" data-v="%s">%s</td><td data-k="fraction" data-v="%s">%.1f %%</td></tr>`+"\n",
			i+1, i+1, esc(m.Label), num(m.CenterUS), esc(usText(m.CenterUS)), num(m.LowUS), esc(usText(m.LowUS)),
			num(m.HighUS), esc(usText(m.HighUS)), num(m.Fraction), 100*m.Fraction)
	}
	b.WriteString("</tbody></table>\n")
}

// writeList writes lines of text as a list under a heading (nothing when
// there are none, but the list, empty, stays for readers of the page).
func writeList(b *strings.Builder, id, head string, lines []string) {
	fmt.Fprintf(b, "<h3>%s</h3>\n<ul id=\"%s\">", esc(head), id)
	for _, l := range lines {
		b.WriteString("<li>" + esc(l) + "</li>")
	}
	if len(lines) == 0 {
		b.WriteString(`</ul><p class="kind">none</p>` + "\n")
		return
	}
	b.WriteString("</ul>\n")
}

// netTestPage is the report part of `latscope nettest client -o FILE.html`.
func netTestPage(rep nettest.Report) string {
	var b strings.Builder
	b.WriteString(reportStyle + `<section class="card" id="report"><h2>Report</h2>` + "\n")
	fmt.Fprintf(&b, `<p class="meta" id="run">%s, %s mode, %d-byte requests, %d-byte replies, %d connection(s)</p>`+"\n",
		esc(rep.Server), esc(rep.Mode), rep.RequestBytes, rep.ReplyBytes, rep.Connections)
	fmt.Fprintf(&b, `<p class="meta" id="placement">placement: %s</p>`+"\n", esc(rep.Placement.String()))
	b.WriteString(`<table id="totals"><thead><tr><th>Figure</th><th>Value</th></tr></thead><tbody>` + "\n")
	for _, f := range []struct {
		key, head string
		v         float64
		text      func(float64) string
	}{
		{"rate", "Rate offered", rep.Rate, rateText},
		{"seconds", "Seconds", rep.Seconds, fixed(1)},
		{"round_trips", "Round trips", float64(rep.RoundTrips), intText},
		{"round_trips_per_s", "Per second", rep.PerSecond, fixed(0)},
		{"mb_s", "MB/s", rep.MBs, fixed(3)},
		{"mean_us", "Mean", rep.MeanUS, usText},
		{"p50_us", "p50", rep.P50US, usText},
		{"p90_us", "p90", rep.P90US, usText},
		{"p99_us", "p99", rep.P99US, usText},
		{"p999_us", "p99.9", rep.P999US, usText},
		{"max_us", "Max", rep.MaxUS, usText},
		{"cpu_per_round_trip_us", "CPU per round trip", rep.CPUPerRoundTripUS, usText},
		{"issue_delay_p50_us", "Issue delay p50", rep.IssueDelayP50US, usText},
		{"issue_delay_p99_us", "Issue delay p99", rep.IssueDelayP99US, usText},
		{"errors", "Errors", float64(rep.Errors), intText},
		{"lost_connections", "Connections lost", float64(rep.LostConnections), intText},
	} {
		fmt.Fprintf(&b, `<tr><td>%s</td><td data-k="%s" data-v="%s">%s</td></tr>`+"\n", esc(f.head), f.key, num(f.v), esc(f.text(f.v)))
	}
	b.WriteString("</tbody></table>\n")
	writeIntervals(&b, rep.Intervals)
	writeModes(&b, rep.Modes, 0)
	if w := rep.WhatIf; w != nil {
		fmt.Fprintf(&b, `<h3>What if</h3>`+"\n"+`<table id="whatif" data-server-time-us="%s" data-from-tps="%s" data-round-trips-per-call="%d" data-measured-rtt-us="%s">`+
			"<thead><tr><th>#</th><th>Label</th><th>RTT</th><th>TPS per session</th><th>Network share</th></tr></thead><tbody>\n",
			num(w.ServerTimeUS), num(w.FromTPS), w.RoundTrips, num(w.MeasuredRTTUS))
		for i, r := range w.Rows {
			fmt.Fprintf(&b, `<tr data-row="%d"><td>%d</td><td data-k="label">%s</td><td data-k="rtt_us" data-v="%s">%s</td><td data-k="tps" data-v="%s">%.0f</td>`+
				`<td data-k="network_share" data-v="%s">%.0f %%</td></tr>`+"\n",
				i+1, i+1, esc(r.Label), num(r.RTTUS), esc(usText(r.RTTUS)), num(r.TPS), r.TPS, num(r.NetworkShare), 100*r.NetworkShare)
		}
		b.WriteString("</tbody></table>\n")
	}
	b.WriteString("</section>\n")
	points := make([]chartPoint, 0, len(rep.Intervals))
	for _, iv := range rep.Intervals {
		if iv.RoundTrips > 0 {
			points = append(points, chartPoint{X: iv.PerSecond, Mean: iv.MeanUS, P50: iv.P50US, P99: iv.P99US})
		}
	}
	writeChart(&b, "Round-trip time against rate (one point per interval)", "round trips per second", chart{Points: points, Knee: -1})
	return b.String()
}

// writeIntervals writes the per-interval lines.
func writeIntervals(b *strings.Builder, ivs []nettest.IntervalReport) {
	b.WriteString(`<h3>Intervals</h3>` + "\n" + `<table id="intervals"><thead><tr><th>#</th><th>Start</th><th>Seconds</th>` +
		"<th>Round trips</th><th>Per second</th><th>MB/s</th><th>Mean</th><th>p50</th><th>p99</th><th>Max</th></tr></thead><tbody>\n")
	for i, iv := range ivs {
		fmt.Fprintf(b, `<tr data-interval="%d"><td>%d</td><td data-k="start">%s</td>`, i+1, i+1, esc(iv.Start.Local().Format("15:04:05")))
		for _, c := range []struct {
			key  string
			v    float64
			text func(float64) string
		}{
			{"seconds", iv.Seconds, fixed(3)}, {"round_trips", float64(iv.RoundTrips), intText},
			{"round_trips_per_s", iv.PerSecond, fixed(0)}, {"mb_s", iv.MBs, fixed(3)}, {"mean_us", iv.MeanUS, usText},
			{"p50_us", iv.P50US, usText}, {"p99_us", iv.P99US, usText}, {"max_us", iv.MaxUS, usText},
		} {
			fmt.Fprintf(b, `<td data-k="%s" data-v="%s">%s</td>`, c.key, num(c.v), esc(c.text(c.v)))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table>\n")
}

func uslPeak(u *loadtest.USL) string {
	if u.PeakConcurrency > 0 {
		return fmt.Sprintf("throughput peaks near %.0f readers at %.0f IOPS", u.PeakConcurrency, u.PeakIOPS)
	}
	return "no retrograde region within reach (κ = 0)"
}

func esc(s string) string { return html.EscapeString(s) }

// num is a value exactly as encoding/json writes it, for data-v.
func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func usText(us float64) string {
	if us == 0 {
		return "–"
	}
	return hist.FormatDuration(us * 1e3)
}

func intText(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }

func rateText(v float64) string {
	if v == 0 {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func fixed(prec int) func(float64) string {
	return func(v float64) string { return strconv.FormatFloat(v, 'f', prec, 64) }
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no (interrupted)"
}

// formatBytes prints a size in binary units: 64 MiB, 8 KiB.
func formatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 && math.Mod(v, 1024) == 0 {
		v /= 1024
		i++
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + " " + units[i]
}
