package iotest

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/pace"
	"github.com/latscope/latscope/probe/loadtest"
)

// Report is the final answer of a storage test: per-step figures, where
// the storage saturates, a fitted model, what served the reads, and what
// to distrust. Its JSON form is `latscope iotest --format json`.
type Report struct {
	Tool            string `json:"tool"`
	Path            string `json:"path"`
	Kind            string `json:"kind"`
	Device          Device `json:"device"`
	BS              int    `json:"bs"`
	WorkingSetBytes int64  `json:"working_set_bytes"`
	Files           int    `json:"files"`
	Operation       string `json:"operation"`
	Direct          bool   `json:"direct"`
	// Loop is "closed" (N concurrent readers) or "open" (fixed arrival
	// rates, latency from the intended start).
	Loop  string         `json:"loop"`
	Steps []StepReport   `json:"steps"`
	Knee  *loadtest.Knee `json:"knee"`
	// USL is the Universal Scalability Law fitted over closed-loop steps,
	// Queue the R = S/(1−ρ) model over open-loop steps; absent when there
	// are too few steps.
	USL   *loadtest.USL   `json:"usl,omitempty"`
	Queue *loadtest.Queue `json:"queue,omitempty"`
	// Modes are the latency modes of the lightest step (ModesStep, its
	// position from 1), where queueing distorts least.
	Modes     []loadtest.Mode `json:"modes"`
	ModesStep int             `json:"modes_step"`
	// Reading says in plain words what the figures mean.
	Reading   []string       `json:"reading"`
	Warnings  []string       `json:"warnings"`
	Placement pace.Placement `json:"placement"`
	// SpinMarginUS is the open loop's calibrated spin before each arrival.
	SpinMarginUS float64 `json:"spin_margin_us,omitempty"`
	// Engine is "io_uring" when the readers used io_uring (absent: psync);
	// each step's concurrency is then readers × iodepth I/Os in flight.
	Engine string `json:"engine,omitempty"`
}

// StepReport is one step's figures.
type StepReport struct {
	loadtest.Stats
	// LittleRatio is X·R over the concurrency, LittleNote its reading.
	LittleRatio float64 `json:"little_ratio"`
	LittleNote  string  `json:"little_note"`
	// Open loop: the issue delay (issue − intended start) and the
	// arrivals never issued.
	IssueDelayP50US float64 `json:"issue_delay_p50_us,omitempty"`
	IssueDelayP99US float64 `json:"issue_delay_p99_us,omitempty"`
	NotIssued       int64   `json:"not_issued,omitempty"`
	// Complete is false for a step cut short (Ctrl-C).
	Complete bool            `json:"complete"`
	Modes    []loadtest.Mode `json:"modes"`
	// Readers and IODepth make up an io_uring step's concurrency.
	Readers int `json:"readers,omitempty"`
	IODepth int `json:"iodepth,omitempty"`
}

// words name a storage test's load in knee reasons.
var words = loadtest.Words{Worker: "reader", Workers: "readers", Throughput: "IOPS"}

// uringWords name an io_uring test's load: its concurrency counts I/Os in
// flight, not readers.
var uringWords = loadtest.Words{Worker: "I/O in flight", Workers: "I/Os in flight", Throughput: "IOPS"}

// words names the report's load.
func (r *Report) words() loadtest.Words {
	if r.Engine == EngineIOUring {
		return uringWords
	}
	return words
}

// NewReport analyses a test's result on device dev; warnings are the
// test's own (from its diagnostics), kept in the report.
func NewReport(res Result, dev Device, warnings []string) Report {
	r := Report{
		Tool: "latscope iotest", Path: res.Path, Kind: res.Kind, Device: dev, BS: res.BlockSize,
		WorkingSetBytes: res.WorkingSet, Files: res.Files, Operation: operation(res), Direct: res.Direct,
		Loop: "closed", Placement: res.Placement, Warnings: slices.Clone(warnings),
		SpinMarginUS: loadtest.Micros(res.SpinMargin),
	}
	if res.OpenLoop {
		r.Loop = "open"
	}
	if res.Engine == EngineIOUring {
		r.Engine = EngineIOUring
	}
	stats := make([]loadtest.Stats, len(res.Steps))
	for i, s := range res.Steps {
		stats[i] = loadtest.Summarize(s.Step)
		r.Steps = append(r.Steps, r.stepReport(s, stats[i]))
	}
	r.Knee = r.words().FindKnee(stats)
	if u, ok := loadtest.FitUSL(stats); ok && !res.OpenLoop {
		r.USL = &u
	}
	if q, ok := loadtest.FitQueue(stats); ok && res.OpenLoop {
		r.Queue = &q
	}
	if len(r.Steps) > 0 {
		r.ModesStep = lightestStep(stats) + 1
		r.Modes = r.Steps[r.ModesStep-1].Modes
	}
	r.Warnings = append(r.Warnings, Plausibility(dev, r.observed())...)
	r.Reading = r.reading()
	return r
}

// operation is "random read" or "random write (O_DSYNC)".
func operation(res Result) string {
	if res.Write {
		return "random write (O_DSYNC)"
	}
	return "random read"
}

// stepReport adds the step's checks and modes to its figures.
func (r *Report) stepReport(s StepResult, st loadtest.Stats) StepReport {
	sr := StepReport{Stats: st, Complete: s.Complete, NotIssued: s.NotIssued}
	sr.LittleRatio, sr.LittleNote = r.words().LittleCheck(st)
	if r.Engine == EngineIOUring {
		sr.Readers, sr.IODepth = s.Readers, s.IODepth
	}
	if s.Rate > 0 && s.IssueDelay != nil && s.IssueDelay.Count() > 0 {
		sr.IssueDelayP50US, sr.IssueDelayP99US = s.IssueDelay.Quantile(0.5), s.IssueDelay.Quantile(0.99)
	}
	sr.Modes = loadtest.FindModes(s.Latency, loadtest.ModeOptions{})
	centers := make([]float64, len(sr.Modes))
	for i, m := range sr.Modes {
		centers[i] = m.CenterUS
	}
	for i, label := range LabelModes(r.Device, centers) {
		sr.Modes[i].Label = label
	}
	return sr
}

// lightestStep is the step with the least load: the fewest readers, or the
// lowest rate.
func lightestStep(stats []loadtest.Stats) int {
	best := 0
	for i, s := range stats {
		if s.Concurrency < stats[best].Concurrency || (s.Rate > 0 && s.Rate < stats[best].Rate) {
			best = i
		}
	}
	return best
}

// observed is what the plausibility checks need: the lightest step.
func (r *Report) observed() Observed {
	o := Observed{Direct: r.Direct, WorkingSet: r.WorkingSetBytes}
	if r.ModesStep == 0 {
		return o
	}
	s := r.Steps[r.ModesStep-1]
	o.P50US, o.IOPS = s.P50US, s.IOPS
	for _, m := range r.Modes {
		o.Modes = append(o.Modes, LatencyMode{CenterUS: m.CenterUS, Fraction: m.Fraction})
	}
	return o
}

// reading says what the figures mean, in a few plain sentences.
func (r *Report) reading() []string {
	var lines []string
	if len(r.Modes) > 0 {
		parts := make([]string, len(r.Modes))
		for i, m := range r.Modes {
			parts[i] = fmt.Sprintf("%.0f %% of %ss at ~%s — %s", 100*m.Fraction, r.Operation, usText(m.CenterUS), m.Label)
		}
		lines = append(lines, fmt.Sprintf("Latency modes at %s: %s.", r.loadOf(r.Steps[r.ModesStep-1].Stats), strings.Join(parts, "; ")))
	}
	switch {
	case r.Knee != nil:
		lines = append(lines, fmt.Sprintf("Saturation knee at %s (%.0f IOPS, p99 %s): %s.",
			r.loadOf(r.Steps[r.Knee.Index].Stats), r.Knee.IOPS, usText(r.Knee.P99US), r.Knee.Reason))
	case len(r.Steps) > 1:
		last := r.Steps[len(r.Steps)-1]
		lines = append(lines, fmt.Sprintf("No knee: throughput still grew and p99 stayed within 2× up to %s; "+
			"add heavier steps to find the limit.", r.loadOf(last.Stats)))
	}
	if r.USL != nil {
		lines = append(lines, r.uslReading())
	}
	if r.Queue != nil {
		lines = append(lines, fmt.Sprintf("Queueing model R = S/(1−ρ) (R² %.2f): service time %s, saturation near %.0f IOPS.",
			r.Queue.R2, usText(r.Queue.ServiceUS), r.Queue.SaturationIOPS))
	}
	for _, s := range r.Steps {
		if s.Rate == 0 && s.LittleRatio > 0 && s.LittleRatio < 0.9 {
			lines = append(lines, fmt.Sprintf("Little's law at %s: %s.", r.loadOf(s.Stats), s.LittleNote))
		}
		if s.NotIssued > 0 {
			lines = append(lines, fmt.Sprintf("At %s, %d scheduled I/Os were never issued: the storage could not keep up.",
				r.loadOf(s.Stats), s.NotIssued))
		}
	}
	return lines
}

// uslReading explains the USL fit.
func (r *Report) uslReading() string {
	u, w := r.USL, r.words()
	s := fmt.Sprintf("Universal Scalability Law fit (R² %.2f): one %s does %.0f IOPS, contention σ = %.3f, coherency κ = %.4f",
		u.R2, w.Worker, u.Lambda, u.Sigma, u.Kappa)
	if u.PeakConcurrency > 0 {
		s += fmt.Sprintf("; throughput peaks near %.0f %s at %.0f IOPS", u.PeakConcurrency, w.Workers, u.PeakIOPS)
	} else {
		s += "; no retrograde region within reach (κ = 0)"
	}
	return s + "."
}

// loadOf names a step's load: "4 readers" or "2000 IOPS offered".
func (r *Report) loadOf(s loadtest.Stats) string {
	for _, st := range r.Steps {
		if st.Stats.Concurrency == s.Concurrency && st.IODepth > 0 {
			return st.Load()
		}
	}
	return LoadName(s)
}

// Load names the step's load: LoadName's, or for io_uring "1 reader ×
// iodepth 8".
func (s StepReport) Load() string {
	if s.IODepth == 0 {
		return LoadName(s.Stats)
	}
	return fmt.Sprintf("%s × iodepth %d", LoadName(loadtest.Stats{Concurrency: s.Readers}), s.IODepth)
}

// LoadName names a step's load as the report does: "1 reader", "4
// readers" or "2000 IOPS offered".
func LoadName(s loadtest.Stats) string {
	if s.Rate > 0 {
		return fmt.Sprintf("%.0f IOPS offered", s.Rate)
	}
	if s.Concurrency == 1 {
		return "1 reader"
	}
	return fmt.Sprintf("%d readers", s.Concurrency)
}

// usText prints µs as "85.6µs" or "6.2ms".
func usText(us float64) string { return hist.FormatDuration(us * 1e3) }

// WriteTable prints the report for people.
func (r Report) WriteTable(out io.Writer) error {
	w := bufio.NewWriter(out)
	direct := "O_DIRECT"
	if !r.Direct {
		direct = "page cache (no O_DIRECT)"
	}
	fmt.Fprintf(w, "latscope iotest: %s (%s), %s working set, %s %ss, %s, %s loop\n",
		r.Path, r.Kind, formatSize(r.WorkingSetBytes), formatSize(int64(r.BS)), r.Operation, direct, r.Loop)
	if r.Engine != "" {
		fmt.Fprintf(w, "engine: %s; concurrency is readers × iodepth, the I/Os in flight\n", r.Engine)
	}
	fmt.Fprintf(w, "device: %s\n", r.Device.Summary())
	fmt.Fprintf(w, "placement: %s\n\n", r.Placement)
	stats := make([]loadtest.Stats, len(r.Steps))
	for i, s := range r.Steps {
		stats[i] = s.Stats
	}
	op := "reads"
	if strings.Contains(r.Operation, "write") {
		op = "writes"
	}
	if err := loadtest.WriteSteps(w, stats, op); err != nil {
		return err
	}
	for _, s := range r.Steps {
		if s.Rate > 0 {
			fmt.Fprintf(w, "  %s: issue delay p50 %s, p99 %s (time from intended to actual start)\n",
				r.loadOf(s.Stats), usText(s.IssueDelayP50US), usText(s.IssueDelayP99US))
		}
		if !s.Complete {
			fmt.Fprintf(w, "  %s: interrupted, measured %.1f s\n", r.loadOf(s.Stats), s.Seconds)
		}
	}
	if len(r.Reading) > 0 {
		fmt.Fprintln(w)
		for _, line := range r.Reading {
			fmt.Fprintf(w, "%s\n", line)
		}
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintln(w, "\nWarnings:")
		for _, line := range r.Warnings {
			fmt.Fprintf(w, "  ! %s\n", line)
		}
	}
	return w.Flush()
}
