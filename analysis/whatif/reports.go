package whatif

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/latscope/latscope/probe/iotest"
	"github.com/latscope/latscope/probe/nettest"
)

// maxReportBytes bounds a report read: reports are a few KiB, a long
// nettest's per-interval lines a few MiB.
const maxReportBytes = 64 << 20

// decodeReport reads one JSON document of a tool's report.
func decodeReport(name string, r io.Reader, tool string, v any) error {
	data, err := io.ReadAll(io.LimitReader(r, maxReportBytes+1))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > maxReportBytes {
		return fmt.Errorf("%s: larger than %d MiB: not a %s report", name, maxReportBytes>>20, tool)
	}
	var head struct {
		Tool string `json:"tool"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("%s: not a %s --format json report: %w", name, tool, jsonError(data, err))
	}
	if head.Tool != tool {
		return fmt.Errorf("%s: a report of %q, want one of %s --format json", name, head.Tool, tool)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", name, jsonError(data, err))
	}
	return nil
}

// jsonError adds the line of a syntax or type error.
func jsonError(data []byte, err error) error {
	var offset int64 = -1
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		offset = syntax.Offset
	case errors.As(err, &typ):
		offset = typ.Offset
	}
	if offset < 0 || offset > int64(len(data)) {
		return err
	}
	return fmt.Errorf("line %d: %w", 1+strings.Count(string(data[:offset]), "\n"), err)
}

// ReadNetTestRTT reads the mean round trip of a `latscope nettest client
// --format json` report, in µs.
func ReadNetTestRTT(name string, r io.Reader) (float64, error) {
	var rep nettest.Report
	if err := decodeReport(name, r, "latscope nettest", &rep); err != nil {
		return 0, err
	}
	if rep.Mode == "connect" {
		return 0, fmt.Errorf("%s: a connect-mode test times TCP handshakes, not round trips of data: run nettest client --mode sync", name)
	}
	if !(rep.MeanUS > 0) || math.IsInf(rep.MeanUS, 0) || rep.RoundTrips <= 0 {
		return 0, fmt.Errorf("%s: no round trip was measured (mean_us %g, round_trips %d)", name, rep.MeanUS, rep.RoundTrips)
	}
	return rep.MeanUS, nil
}

// ReadIOTestWrite reads the zero-distance write time of a `latscope iotest
// --write --format json` report: the mean latency of its lightest step
// (the fewest writers: one, ideally, as a log writer writes).
func ReadIOTestWrite(name string, r io.Reader) (Point, error) {
	var rep iotest.Report
	if err := decodeReport(name, r, "latscope iotest", &rep); err != nil {
		return Point{}, err
	}
	if !strings.Contains(rep.Operation, "write") {
		return Point{}, fmt.Errorf("%s: a %s test: want one of latscope iotest --write", name, rep.Operation)
	}
	if rep.BS <= 0 || rep.ModesStep < 1 || rep.ModesStep > len(rep.Steps) {
		return Point{}, fmt.Errorf("%s: no block size or no measured step", name)
	}
	step := rep.Steps[rep.ModesStep-1]
	if !(step.MeanUS > 0) || math.IsInf(step.MeanUS, 0) || step.Ops <= 0 {
		return Point{}, fmt.Errorf("%s: step %d measured no write", name, rep.ModesStep)
	}
	from := fmt.Sprintf("%s: mean of %d writes", name, step.Ops)
	if step.Concurrency > 1 {
		from += fmt.Sprintf(", %d writers at once", step.Concurrency)
	}
	return Point{Bytes: int64(rep.BS), US: step.MeanUS, From: from}, nil
}
