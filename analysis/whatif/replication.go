package whatif

import (
	"errors"
	"fmt"
	"math"

	"github.com/latscope/latscope/internal/bytesize"
	"github.com/latscope/latscope/probe/loadtest"
)

// FrameBytes is a full Fibre Channel frame's payload: what one
// buffer-to-buffer credit lets out.
const FrameBytes = 2048

// Config is what a replication what-if computes.
type Config struct {
	Link   Link
	Remote RemoteWrite
	// RoundTrips is the protocol's round trips per write: 1 for host-based
	// mirroring (VxVM, ASM), 2 for SRDF-like array replication.
	RoundTrips  int
	DistancesKm []float64
	// MeasuredRTTUS, when positive, replaces the fibre's round trip (and
	// the distances): a nettest RTT, named by RTTFrom.
	MeasuredRTTUS float64
	RTTFrom       string
	Sizes         []int64
	// WriteRate is the offered asynchronous write rate (nil: none).
	WriteRate *Rate
	// QueueDepth is the most I/Os the host or the array keeps outstanding
	// (8: HP-UX's default per SCSI target, 32: an HP EVA); BBCredits the
	// link's buffer-to-buffer credits; BufferBytes what the asynchronous
	// replication's journal absorbs. 0: no limit, no buffer.
	QueueDepth  int
	BBCredits   int
	BufferBytes int64
}

// Result is the what-if: one row per distance and I/O size.
type Result struct {
	Tool          string      `json:"tool"`
	Link          Link        `json:"link"`
	RoundTrips    int         `json:"round_trips_per_write"`
	RemoteWrite   RemoteWrite `json:"remote_write"`
	MeasuredRTTUS float64     `json:"measured_rtt_us,omitempty"`
	RTTFrom       string      `json:"rtt_from,omitempty"`
	QueueDepth    int         `json:"queue_depth,omitempty"`
	BBCredits     int         `json:"bb_credits,omitempty"`
	BufferBytes   int64       `json:"buffer_bytes,omitempty"`
	WriteRate     *Rate       `json:"write_rate,omitempty"`
	Rows          []Row       `json:"rows"`
}

// Row is one distance and I/O size.
type Row struct {
	DistanceKm float64  `json:"distance_km"`
	Bytes      int64    `json:"io_bytes"`
	Sync       Sync     `json:"synchronous"`
	Async      Async    `json:"asynchronous"`
	Offered    *Offered `json:"offered,omitempty"`
}

// Sync is a synchronous write's time, one write after the other (the
// seed's figure 1 of "Asynchronous checkpoints", figure 3 of "Log file
// write time").
type Sync struct {
	RTTUS float64 `json:"rtt_us"`
	// RoundTripsUS is round trips × RTT; LoadUS the size-dependent part
	// and OverheadUS the fixed part of the remote write.
	RoundTripsUS float64 `json:"round_trips_us"`
	LoadUS       float64 `json:"load_us"`
	OverheadUS   float64 `json:"overhead_us"`
	WriteUS      float64 `json:"write_us"`
	IOPS         float64 `json:"iops"`
	MiBs         float64 `json:"mib_s"`
	// LinkShare is the part of the link's payload rate used.
	LinkShare float64 `json:"link_share"`
}

// Async is a stream of writes with no gap between them (the seed's figure
// 2 of "Asynchronous checkpoints").
type Async struct {
	WireLoadUS float64 `json:"wire_load_us"`
	PacketKm   float64 `json:"packet_km"`
	// IOsInPipe is how many I/Os the one-way pipe holds back to back;
	// FillPipe the outstanding I/Os that fill it (the seed's "25
	// outstanding I/Os" for 2 KiB over 50 km).
	IOsInPipe float64 `json:"ios_in_pipe"`
	FillPipe  int     `json:"outstanding_to_fill_pipe"`
	// StreamIOPS is the link's limit: one I/O per load time.
	StreamIOPS float64 `json:"stream_iops"`
	// SaturateOutstanding is Little's law: the I/Os in flight that keep the
	// link busy, each held for a whole synchronous write time.
	SaturateOutstanding int `json:"outstanding_to_saturate_link"`
	// MaxIOPS is the stream's rate under the queue depth and credits,
	// LimitedBy what sets it.
	MaxIOPS   float64 `json:"max_iops"`
	MaxMiBs   float64 `json:"max_mib_s"`
	LimitedBy string  `json:"limited_by"`
	// Synchronous: the pipe holds at most one I/O (the seed: "asynchronous
	// writes behave synchronously"), or one I/O at a time is let out.
	Synchronous bool `json:"behaves_synchronously"`
}

// Offered is the offered write rate against the stream's limit.
type Offered struct {
	IOPS      float64 `json:"iops"`
	MiBs      float64 `json:"mib_s"`
	LinkShare float64 `json:"link_share"`
	// InFlight is Little's law: I/Os per second × write time.
	InFlight float64 `json:"in_flight"`
	KeepsUp  bool    `json:"keeps_up"`
	// BacklogMiBs is how fast the unsent writes grow when the stream
	// cannot keep up; BufferFullSeconds when the journal is full.
	BacklogMiBs       float64 `json:"backlog_mib_s,omitempty"`
	BufferFullSeconds float64 `json:"buffer_full_s,omitempty"`
	Verdict           string  `json:"verdict"`
}

// Build computes the what-if.
func Build(c Config) (*Result, error) {
	if len(c.Sizes) == 0 {
		return nil, errors.New("no I/O size")
	}
	if c.MeasuredRTTUS == 0 && len(c.DistancesKm) == 0 {
		return nil, errors.New("no distance and no measured round trip")
	}
	if c.RoundTrips < 1 {
		return nil, fmt.Errorf("%d round trips per write: want at least 1", c.RoundTrips)
	}
	if c.QueueDepth < 0 || c.BBCredits < 0 || c.BufferBytes < 0 {
		return nil, errors.New("queue depth, credits and buffer must not be negative")
	}
	r := &Result{Tool: "latscope whatif replication", Link: c.Link, RoundTrips: c.RoundTrips, RemoteWrite: c.Remote,
		MeasuredRTTUS: c.MeasuredRTTUS, RTTFrom: c.RTTFrom, QueueDepth: c.QueueDepth, BBCredits: c.BBCredits,
		BufferBytes: c.BufferBytes, WriteRate: c.WriteRate}
	distances := c.DistancesKm
	if c.MeasuredRTTUS > 0 {
		// The distance light covers in half the measured round trip.
		distances = []float64{c.MeasuredRTTUS / c.Link.RTTUS(1)}
	}
	for _, km := range distances {
		rtt := c.Link.RTTUS(km)
		if c.MeasuredRTTUS > 0 {
			rtt = c.MeasuredRTTUS
		}
		for _, size := range c.Sizes {
			row := Row{DistanceKm: km, Bytes: size, Sync: c.sync(size, rtt)}
			row.Async = c.async(size, rtt, row.Sync)
			if c.WriteRate != nil {
				row.Offered = c.offered(size, row.Sync, row.Async)
			}
			r.Rows = append(r.Rows, row)
		}
	}
	return r, nil
}

func (c Config) sync(size int64, rtt float64) Sync {
	load := c.Remote.LoadUS(size, c.Link)
	call := loadtest.SerialCall{RoundTrips: c.RoundTrips, RTTUS: rtt, ServiceUS: load + c.Remote.OverheadUS}
	s := Sync{RTTUS: rtt, RoundTripsUS: call.NetworkUS(), LoadUS: load, OverheadUS: c.Remote.OverheadUS,
		WriteUS: call.TimeUS(), IOPS: call.PerSecond()}
	s.MiBs = s.IOPS * float64(size) / (kib * kib)
	s.LinkShare = s.IOPS * float64(size) / c.Link.PayloadBytesPerSecond
	return s
}

func (c Config) async(size int64, rtt float64, s Sync) Async {
	wire := c.Link.LoadUS(size)
	a := Async{WireLoadUS: wire, PacketKm: c.Link.PacketKm(size), IOsInPipe: rtt / 2 / wire, StreamIOPS: 1e6 / wire,
		MaxIOPS: 1e6 / wire, LimitedBy: "link"}
	a.FillPipe = max(1, int(math.Ceil(a.IOsInPipe)))
	a.SaturateOutstanding = max(1, int(math.Ceil(s.WriteUS/wire)))
	if c.QueueDepth > 0 {
		if q := float64(c.QueueDepth) * s.IOPS; q < a.MaxIOPS {
			a.MaxIOPS, a.LimitedBy = q, fmt.Sprintf("queue depth %d", c.QueueDepth)
		}
	}
	if c.BBCredits > 0 && rtt > 0 {
		// Each credit lets one frame out per round trip of its R_RDY.
		if cr := float64(c.BBCredits) * FrameBytes / (rtt / 1e6) / float64(size); cr < a.MaxIOPS {
			a.MaxIOPS, a.LimitedBy = cr, fmt.Sprintf("%d buffer-to-buffer credits", c.BBCredits)
		}
	}
	a.MaxMiBs = a.MaxIOPS * float64(size) / (kib * kib)
	a.Synchronous = a.IOsInPipe <= 1 || c.QueueDepth == 1
	return a
}

func (c Config) offered(size int64, s Sync, a Async) *Offered {
	iops := c.WriteRate.IOPS
	if iops == 0 {
		iops = c.WriteRate.BytesPerSecond / float64(size)
	}
	o := &Offered{IOPS: iops, MiBs: iops * float64(size) / (kib * kib),
		LinkShare: iops * float64(size) / c.Link.PayloadBytesPerSecond, InFlight: iops * s.WriteUS / 1e6}
	o.KeepsUp = iops <= a.MaxIOPS
	switch {
	case o.KeepsUp && o.InFlight <= 1:
		o.Verdict = fmt.Sprintf("keeps up: %.2f writes in flight, synchronous mirroring would keep up too", o.InFlight)
	case o.KeepsUp:
		o.Verdict = fmt.Sprintf("keeps up: %.1f writes in flight (a single synchronous stream reaches %.0f I/O/s)", o.InFlight, s.IOPS)
	default:
		o.BacklogMiBs = (iops - a.MaxIOPS) * float64(size) / (kib * kib)
		o.Verdict = fmt.Sprintf("cannot keep up (%s: %.0f I/O/s): the backlog grows %.1f MiB/s", a.LimitedBy, a.MaxIOPS, o.BacklogMiBs)
		if c.BufferBytes > 0 {
			o.BufferFullSeconds = float64(c.BufferBytes) / (o.BacklogMiBs * kib * kib)
			o.Verdict += fmt.Sprintf(", the %s buffer is full in %.3g s; then writes wait: asynchronous behaves synchronously",
				bytesize.Format(c.BufferBytes), o.BufferFullSeconds)
		} else {
			o.Verdict += "; writes wait for the link: asynchronous behaves synchronously"
		}
	}
	return o
}
