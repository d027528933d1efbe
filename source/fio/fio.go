// Package fio reads the latency histograms of the fio storage benchmark
// (fio 3.x): the per-job latency bins of `--output-format=json+` results
// (format fio-json) and the per-interval histogram logs written with
// `write_hist_log` and `log_hist_msec` (format fio-histlog).
//
// Both keep fio's own bins, 64 linear sub-buckets per power of two of
// nanoseconds, as custom bucket edges (hist.NewCustom), so latscope's
// percentiles agree with fio's within one bin (at most 1/64 of the value).
package fio

import (
	"github.com/latscope/latscope/source"
)

// Format names users give to --input-format.
const (
	JSONFormatName    = "fio-json"
	HistLogFormatName = "fio-histlog"
)

// Formats returns both fio formats, JSON results first. Neither claims the
// other's input, so their order among themselves does not matter.
func Formats() []source.Format {
	return []source.Format{JSONFormat(), HistLogFormat()}
}

// JSONFormat returns fio's --output-format=json+ results.
func JSONFormat() source.Format {
	return source.Format{
		Name: JSONFormatName,
		Description: "fio --output-format=json+ results: one interval per job over its runtime, one series per job, " +
			"direction and latency kind (\"randread read clat\"; instance = hostname in client/server mode), " +
			"fio's 1856 ns bins kept exactly; totals of one run (no cumulative/interval choice)",
		Detection: "a JSON object whose first key is \"fio version\", after fio's own preamble lines if any " +
			"(jobname: (g=0): ..., fio-3.33, Starting N processes)",
		Example: "fio job.fio --output-format=json+ --output=run.json; latscope report run.json",
		Detect:  DetectJSON,
		Open:    OpenJSON,
	}
}

// HistLogFormat returns fio's histogram logs (write_hist_log).
func HistLogFormat() source.Format {
	return source.Format{
		Name: HistLogFormatName,
		Description: "fio completion-latency histogram log (write_hist_log + log_hist_msec, any log_hist_coarseness): " +
			"lines \"msec, ddir, bs, bins...\", one series per direction (\"read clat\"); counts per interval by default " +
			"(--counts cumulative for summed logs); times are ms since the job start, placed on the wall clock so that the " +
			"last line ends at the file's modification time (relative times for stdin and --follow)",
		Detection: "a first line of integers \"msec, ddir, bs, \" followed by 1856/2^c bin counts (c = 0..6)",
		Example:   "fio job.fio --write_hist_log=run --log_hist_msec=1000; latscope heatmap run_clat_hist.1.log",
		Detect:    DetectHistLog,
		Open:      OpenHistLog,
	}
}
