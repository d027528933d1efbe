package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/latscope/latscope/probe/loadtest"
	"github.com/latscope/latscope/scripts/benchkit"
)

// measurement is what one tool reported for one run, in the units of
// latscope's report: µs and operations per second.
type measurement struct {
	Ops     int64   `json:"ops"`
	Seconds float64 `json:"seconds"`
	IOPS    float64 `json:"iops"`
	loadtest.Latency
	// SelfCPUPerOpUS is the CPU time per I/O the tool measured itself
	// (latscope: its step's process CPU; fio: its job threads' usr+sys),
	// kept beside the harness's rusage figure to show what each includes.
	SelfCPUPerOpUS float64 `json:"self_cpu_per_op_us"`
}

// fioOutput is the part of `fio --output-format=json` the harness reads
// (field names as fio 3.33 writes them).
type fioOutput struct {
	Version string   `json:"fio version"`
	Jobs    []fioJob `json:"jobs"`
}

type fioJob struct {
	Name  string `json:"jobname"`
	Error int    `json:"error"`
	Read  struct {
		IOPS     float64 `json:"iops"`
		Runtime  int64   `json:"runtime"` // ms
		TotalIOs int64   `json:"total_ios"`
		ShortIOs int64   `json:"short_ios"`
		DropIOs  int64   `json:"drop_ios"`
		Lat      fioLat  `json:"lat_ns"`
	} `json:"read"`
	// JobRuntime is the sum of the job threads' run times in ms: with
	// group_reporting, numjobs × runtime; usr_cpu and sys_cpu are
	// percentages of it.
	JobRuntime int64   `json:"job_runtime"`
	UsrCPU     float64 `json:"usr_cpu"`
	SysCPU     float64 `json:"sys_cpu"`
}

// fioLat is total latency (submission + completion): what latscope times
// around each pread.
type fioLat struct {
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
	N    int64   `json:"N"`
	// Percentile maps "99.900000" to ns; present only with lat_percentiles=1.
	Percentile map[string]float64 `json:"percentile"`
}

// parseFio reads fio's JSON report of one group-reported randread job.
// fio may print warnings before the JSON, so the report starts at the first
// '{' of a line.
func parseFio(out []byte) (measurement, string, error) {
	var f fioOutput
	if err := benchkit.DecodeJSON(out, &f); err != nil {
		return measurement{}, "", fmt.Errorf("fio output: %w", err)
	}
	if len(f.Jobs) != 1 {
		return measurement{}, f.Version, fmt.Errorf("fio output: %d jobs, want 1 (group_reporting)", len(f.Jobs))
	}
	j := f.Jobs[0]
	r := j.Read
	switch {
	case j.Error != 0:
		return measurement{}, f.Version, fmt.Errorf("fio job %q: error %d", j.Name, j.Error)
	case r.TotalIOs <= 0 || r.Runtime <= 0:
		return measurement{}, f.Version, fmt.Errorf("fio job %q: no reads (total_ios %d, runtime %d ms)", j.Name, r.TotalIOs, r.Runtime)
	}
	pct, err := fioPercentiles(r.Lat.Percentile, 50, 90, 99, 99.9)
	if err != nil {
		return measurement{}, f.Version, fmt.Errorf("fio job %q: read.lat_ns.percentile: %w (run fio with --lat_percentiles=1 --percentile_list=50:90:99:99.9)", j.Name, err)
	}
	cpuSeconds := (j.UsrCPU + j.SysCPU) / 100 * float64(j.JobRuntime) / 1e3
	return measurement{
		Ops:     r.TotalIOs,
		Seconds: float64(r.Runtime) / 1e3,
		IOPS:    r.IOPS,
		Latency: loadtest.Latency{
			MeanUS: r.Lat.Mean / 1e3, P50US: pct[0] / 1e3, P90US: pct[1] / 1e3,
			P99US: pct[2] / 1e3, P999US: pct[3] / 1e3, MaxUS: r.Lat.Max / 1e3,
		},
		SelfCPUPerOpUS: cpuSeconds * 1e6 / float64(r.TotalIOs),
	}, f.Version, nil
}

// fioPercentiles looks up percentiles whose keys fio prints with six
// decimals ("99.900000"); keys are compared as numbers.
func fioPercentiles(m map[string]float64, want ...float64) ([]float64, error) {
	if len(m) == 0 {
		return nil, errors.New("missing")
	}
	out := make([]float64, len(want))
	for i, w := range want {
		found := false
		for k, v := range m {
			p, err := strconv.ParseFloat(k, 64)
			if err == nil && math.Abs(p-w) < 1e-6 {
				out[i], found = v, true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("no %g percentile", w)
		}
	}
	return out, nil
}

// latscopeReport is the part of `latscope iotest --format json` the harness
// reads: each step's figures are loadtest.Stats.
type latscopeReport struct {
	BS int `json:"bs"`
	// Direct is false when the filesystem refused O_DIRECT and latscope
	// read through the page cache.
	Direct *bool            `json:"direct"`
	Steps  []loadtest.Stats `json:"steps"`
}

// parseLatscope reads latscope's JSON report of a single-step test at
// concurrency readers and block size bs.
func parseLatscope(out []byte, concurrency, bs int) (measurement, error) {
	var r latscopeReport
	if err := benchkit.DecodeJSON(out, &r); err != nil {
		return measurement{}, fmt.Errorf("latscope output: %w", err)
	}
	if len(r.Steps) != 1 {
		return measurement{}, fmt.Errorf("latscope output: %d steps, want 1", len(r.Steps))
	}
	s := r.Steps[0]
	switch {
	case r.Direct != nil && !*r.Direct:
		return measurement{}, errors.New("latscope output: the reads were not O_DIRECT (page cache): the comparison with fio --direct=1 is void")
	case r.BS != bs:
		return measurement{}, fmt.Errorf("latscope output: bs %d, want %d", r.BS, bs)
	case s.Concurrency != concurrency:
		return measurement{}, fmt.Errorf("latscope output: concurrency %d, want %d", s.Concurrency, concurrency)
	case s.Ops <= 0 || s.Seconds <= 0:
		return measurement{}, fmt.Errorf("latscope output: no reads (ops %d in %g s)", s.Ops, s.Seconds)
	case s.Errors != 0:
		return measurement{}, fmt.Errorf("latscope output: %d failed reads", s.Errors)
	}
	return measurement{
		Ops: s.Ops, Seconds: s.Seconds, IOPS: s.IOPS, Latency: s.Latency, SelfCPUPerOpUS: s.CPUPerOpUS,
	}, nil
}
