package driver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/latscope/latscope/analysis/whatif"
	"github.com/latscope/latscope/internal/bytesize"
)

// ReplicationFlags are `latscope whatif replication`'s flags as given.
type ReplicationFlags struct {
	Distances string
	// DistanceSet: --distance was given (it excludes --rtt).
	DistanceSet  bool
	IO           string
	Bandwidth    string
	Encoding     string
	FibreUSPerKm float64
	RoundTrips   int
	RemoteWrite  string
	IOTests      []string
	RTT          string
	WriteRate    string
	QueueDepth   int
	BBCredits    int
	Buffer       string
	// Format is table, json or csv (stdout); Output writes by extension:
	// .html, .json, .csv, else a table.
	Format string
	Output string
}

// ReplicationPlan is a checked what-if, its files still to read.
type ReplicationPlan struct {
	config  whatif.Config
	rttFile string
	iotests []string
	format  string
	output  string
}

// Plan checks the flags; its errors are the caller's usage errors. Files
// are read by WhatIfReplication.
func (f ReplicationFlags) Plan() (ReplicationPlan, error) {
	p := ReplicationPlan{iotests: f.IOTests, format: f.Format, output: f.Output}
	switch f.Format {
	case "table", "json", "csv":
	default:
		return p, fmt.Errorf("--format %q: want table, json or csv", f.Format)
	}
	bps, err := whatif.ParseBandwidth(f.Bandwidth)
	if err != nil {
		return p, err
	}
	link, err := whatif.NewLink(bps, f.Encoding, f.FibreUSPerKm)
	if err != nil {
		return p, fmt.Errorf("--encoding, --fibre-us-per-km: %w", err)
	}
	c := whatif.Config{Link: link, RoundTrips: f.RoundTrips, QueueDepth: f.QueueDepth, BBCredits: f.BBCredits,
		Remote: whatif.SeedRemoteWrite()}
	if f.RoundTrips < 1 || f.QueueDepth < 0 || f.BBCredits < 0 {
		return p, errors.New("--round-trips must be 1 or more, --queue-depth and --bb-credits not negative")
	}
	if c.Sizes, err = whatif.ParseSizes(f.IO); err != nil {
		return p, err
	}
	if f.RTT != "" && f.DistanceSet {
		return p, errors.New("give --distance or --rtt, not both: a measured round trip stands for the distance")
	}
	if f.RTT != "" {
		us, isValue, err := whatif.ParseRTT(f.RTT)
		if err != nil {
			return p, err
		}
		c.MeasuredRTTUS, c.RTTFrom = us, "given"
		if !isValue {
			p.rttFile = f.RTT
		}
	} else if c.DistancesKm, err = whatif.ParseDistances(f.Distances); err != nil {
		return p, err
	}
	if f.RemoteWrite != "" && len(f.IOTests) > 0 {
		return p, errors.New("give --remote-write or --iotest, not both")
	}
	if f.RemoteWrite != "" {
		if c.Remote, err = whatif.ParseRemoteWrite(f.RemoteWrite, link); err != nil {
			return p, err
		}
	}
	if f.WriteRate != "" {
		rate, err := whatif.ParseRate(f.WriteRate)
		if err != nil {
			return p, err
		}
		c.WriteRate = &rate
	}
	if f.Buffer != "" {
		if c.BufferBytes, err = bytesize.Parse(f.Buffer); err != nil {
			return p, fmt.Errorf("--buffer: %w", err)
		}
		if f.WriteRate == "" {
			return p, errors.New("--buffer needs --write-rate: it says when the buffer fills at that rate")
		}
	}
	p.config = c
	return p, nil
}

// WhatIfReplication reads the plan's measurements (a nettest report for the
// round trip, iotest reports for the remote write), computes the what-if
// and writes it.
func WhatIfReplication(p ReplicationPlan, stdout io.Writer) error {
	c := p.config
	if p.rttFile != "" {
		us, err := readReport(p.rttFile, whatif.ReadNetTestRTT)
		if err != nil {
			return err
		}
		c.MeasuredRTTUS, c.RTTFrom = us, p.rttFile+": nettest mean round trip"
	}
	if len(p.iotests) > 0 {
		var points []whatif.Point
		for _, name := range p.iotests {
			pt, err := readReport(name, whatif.ReadIOTestWrite)
			if err != nil {
				return err
			}
			points = append(points, pt)
		}
		rw, err := whatif.FitRemoteWrite(points, c.Link)
		if err != nil {
			return err
		}
		c.Remote = rw
	}
	r, err := whatif.Build(c)
	if err != nil {
		return err
	}
	return writeOutput(p.output, stdout, p.format, func(w *bufio.Writer, format string) error {
		switch format {
		case "json":
			return whatif.WriteJSON(w, r)
		case "csv":
			return whatif.WriteCSV(w, r)
		case "html":
			return whatif.WriteHTML(w, r)
		}
		return whatif.WriteTable(w, r)
	})
}

// readReport opens a report file for one of whatif's readers.
func readReport[T any](name string, read func(string, io.Reader) (T, error)) (T, error) {
	f, err := os.Open(name)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	return read(name, bufio.NewReader(f))
}
