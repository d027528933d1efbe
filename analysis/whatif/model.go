// Package whatif is `latscope whatif replication` (docs/whatif.md): the
// physics of synchronous and asynchronous replication over distance, as the
// seed (christianbilien, 2007) reasons about it. A synchronous write pays
// the protocol's round trips through the fibre, the time to load its bytes
// onto the link and the remote array's fixed overhead; an asynchronous
// stream is limited by how many I/Os the pipe holds and the host lets out.
package whatif

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/bytesize"
)

// kib is the seed's kilobyte: its slopes are in ms per KiB and its
// throughputs in MiB/s (16 KiB × 653 I/O/s = 10.2 MiB/s).
const kib = 1024

// Link is the replication link: line rate, line code and fibre.
type Link struct {
	BitsPerSecond float64 `json:"bits_per_s"`
	Encoding      string  `json:"encoding"`
	// PayloadBytesPerSecond is what the line code leaves of the line rate:
	// 2 Gb/s with 8b10b carries 200 MB/s, as the seed says ("2Gb/s =
	// 200MB/s because the FC frame is 10 bytes long").
	PayloadBytesPerSecond float64 `json:"payload_bytes_per_s"`
	// FibreUSPerKm is light's one-way delay in fibre (about 5 µs/km: a
	// refractive index near 1.5).
	FibreUSPerKm float64 `json:"fibre_us_per_km"`
}

// Bounds that keep every figure finite (and are far beyond any link).
const (
	maxBitsPerSecond = 1e15
	maxFibreUSPerKm  = 1e3
	maxKm            = 1e5
	maxRate          = 1e15 // bytes or I/Os per second
)

// encodings are the line codes: data bits per bit on the wire.
var encodings = map[string]float64{"8b10b": 8.0 / 10, "64b66b": 64.0 / 66, "none": 1}

// NewLink checks and builds a link.
func NewLink(bitsPerSecond float64, encoding string, fibreUSPerKm float64) (Link, error) {
	eff, ok := encodings[encoding]
	if !ok {
		return Link{}, fmt.Errorf("encoding %q: want 8b10b, 64b66b or none", encoding)
	}
	if !(bitsPerSecond > 0 && bitsPerSecond <= maxBitsPerSecond) {
		return Link{}, fmt.Errorf("bandwidth %g bit/s: want a positive rate up to %g", bitsPerSecond, maxBitsPerSecond)
	}
	if !(fibreUSPerKm > 0 && fibreUSPerKm <= maxFibreUSPerKm) {
		return Link{}, fmt.Errorf("fibre delay %g µs/km: want a positive delay up to %g", fibreUSPerKm, maxFibreUSPerKm)
	}
	return Link{BitsPerSecond: bitsPerSecond, Encoding: encoding, PayloadBytesPerSecond: bitsPerSecond / 8 * eff,
		FibreUSPerKm: fibreUSPerKm}, nil
}

// LoadUS is the time an I/O's bytes take to pass a point of the link:
// the seed's "time to load".
func (l Link) LoadUS(bytes int64) float64 { return float64(bytes) / l.PayloadBytesPerSecond * 1e6 }

// PacketKm is the length of an I/O in the fibre: its load time travelled
// at the speed of light (2 KiB at 200 MB/s: 10.24 µs, 2 km).
func (l Link) PacketKm(bytes int64) float64 { return l.LoadUS(bytes) / l.FibreUSPerKm }

// RTTUS is the fibre's round trip over a distance.
func (l Link) RTTUS(km float64) float64 { return 2 * km * l.FibreUSPerKm }

// RemoteWrite is the write's completion time at zero distance, the seed's
// "slope × packet size + overhead": a fixed overhead (array processors,
// host ports) and a load time linear in the size. The load is never
// shorter than the link's own (a pipeline goes at its slowest stage).
type RemoteWrite struct {
	OverheadUS    float64 `json:"overhead_us"`
	SlopeUSPerKiB float64 `json:"slope_us_per_kib"`
	// From says where the model comes from; Points are the measurements
	// it was fitted to.
	From   string  `json:"from"`
	Points []Point `json:"points,omitempty"`
}

// Point is a measured zero-distance write time at one size.
type Point struct {
	Bytes int64   `json:"bytes"`
	US    float64 `json:"us"`
	From  string  `json:"from"`
}

// SeedRemoteWrite is the seed's model, the one its figures use: 0.6 ms +
// 0.027 ms/KiB, rounded from its fit of two dd measurements on a DMX 1000
// (2k: 0.66 ms, 5k: 0.74 ms).
func SeedRemoteWrite() RemoteWrite {
	return RemoteWrite{OverheadUS: 600, SlopeUSPerKiB: 27,
		From: "the seed's model, its fit of 2k = 0.66 ms and 5k = 0.74 ms rounded"}
}

// LoadUS is the size-dependent part for bytes on link: the fitted slope or
// the link's load time, whichever is longer.
func (r RemoteWrite) LoadUS(bytes int64, link Link) float64 {
	return math.Max(r.SlopeUSPerKiB*float64(bytes)/kib, link.LoadUS(bytes))
}

// ZeroDistanceUS is the write's completion time with no distance.
func (r RemoteWrite) ZeroDistanceUS(bytes int64, link Link) float64 {
	return r.OverheadUS + r.LoadUS(bytes, link)
}

// FitRemoteWrite fits overhead + slope × size to measured points by least
// squares, as the seed does with two. Points at a single size fix the
// overhead alone (their mean less the link's load time); the load is then
// the link's.
func FitRemoteWrite(points []Point, link Link) (RemoteWrite, error) {
	if len(points) == 0 {
		return RemoteWrite{}, errors.New("no measured write time to fit")
	}
	sizes := map[int64]bool{}
	var sx, sy, sxx, sxy float64
	for _, p := range points {
		if !(p.US > 0) || math.IsInf(p.US, 0) || p.Bytes <= 0 {
			return RemoteWrite{}, fmt.Errorf("%s: write time %g µs at %d bytes: want a positive time and size", p.From, p.US, p.Bytes)
		}
		sizes[p.Bytes] = true
		x := float64(p.Bytes) / kib
		sx, sy, sxx, sxy = sx+x, sy+p.US, sxx+x*x, sxy+x*p.US
	}
	n := float64(len(points))
	rw := RemoteWrite{Points: points}
	if len(sizes) == 1 {
		b := points[0].Bytes
		rw.OverheadUS = sy/n - link.LoadUS(b)
		rw.From = fmt.Sprintf("%s at %s less the link's load time; load time from the link", describePoints(points), bytesize.Format(b))
	} else {
		rw.SlopeUSPerKiB = (n*sxy - sx*sy) / (n*sxx - sx*sx)
		rw.OverheadUS = (sy - rw.SlopeUSPerKiB*sx) / n
		rw.From = fmt.Sprintf("least-squares fit of %s", describePoints(points))
		if rw.SlopeUSPerKiB < 0 {
			return RemoteWrite{}, fmt.Errorf("%s: the write time falls as the size grows (%.4f ms/KiB): not a load time", rw.From, rw.SlopeUSPerKiB/1e3)
		}
	}
	if rw.OverheadUS < 0 {
		return RemoteWrite{}, fmt.Errorf("%s: negative fixed overhead (%.3f ms): the measurements are faster than this link can load them", rw.From, rw.OverheadUS/1e3)
	}
	return rw, nil
}

func describePoints(points []Point) string {
	parts := make([]string, len(points))
	for i, p := range points {
		parts[i] = fmt.Sprintf("%s = %s (%s)", sizeText(p.Bytes), msText(p.US), p.From)
	}
	return strings.Join(parts, ", ")
}

// ParseRemoteWrite reads --remote-write: "0.6ms+0.027ms/k" (overhead and
// slope per KiB), "2k=0.66ms,5k=0.74ms" (measured points to fit) or a
// bare "0.5ms" (the overhead; the load time is the link's).
func ParseRemoteWrite(s string, link Link) (RemoteWrite, error) {
	t := strings.TrimSpace(s)
	if strings.Contains(t, "=") {
		points, err := parsePoints(t)
		if err != nil {
			return RemoteWrite{}, fmt.Errorf("--remote-write %q: %w", s, err)
		}
		return FitRemoteWrite(points, link)
	}
	rw, err := parseOverheadSlope(t)
	if err != nil {
		return RemoteWrite{}, fmt.Errorf("--remote-write %q: %w", s, err)
	}
	return rw, nil
}

// parsePoints reads "2k=0.66ms,5k=0.74ms".
func parsePoints(s string) ([]Point, error) {
	var points []Point
	for _, part := range strings.Split(s, ",") {
		size, dur, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not SIZE=DURATION", part)
		}
		b, err := parseSize(size)
		if err != nil {
			return nil, err
		}
		d, err := parseDuration(dur)
		if err != nil {
			return nil, err
		}
		points = append(points, Point{Bytes: b, US: d, From: "given"})
	}
	return points, nil
}

// parseOverheadSlope reads "0.6ms+0.027ms/k" or "0.5ms".
func parseOverheadSlope(s string) (RemoteWrite, error) {
	over, slope, hasSlope := strings.Cut(s, "+")
	o, err := parseDuration(over)
	if err != nil {
		return RemoteWrite{}, err
	}
	rw := RemoteWrite{OverheadUS: o, From: fmt.Sprintf("given: %s + the link's load time", msText(o))}
	if !hasSlope {
		return rw, nil
	}
	dur, per, ok := strings.Cut(slope, "/")
	if !ok {
		return RemoteWrite{}, fmt.Errorf("the slope %q is not DURATION/SIZE (0.027ms/k)", slope)
	}
	d, err := parseDuration(dur)
	if err != nil {
		return RemoteWrite{}, err
	}
	per = strings.TrimSpace(per)
	if per != "" && !strings.ContainsAny(per, "0123456789") {
		per = "1" + per // "ms/k": per one KiB
	}
	b, err := parseSize(per)
	if err != nil {
		return RemoteWrite{}, err
	}
	rw.SlopeUSPerKiB = d / float64(b) * kib
	rw.From = fmt.Sprintf("given: %s + %.4g ms/KiB", msText(o), rw.SlopeUSPerKiB/1e3)
	return rw, nil
}

// parseDuration reads a non-negative duration in µs ("0.66ms", "500us").
func parseDuration(s string) (float64, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (0.5ms, 500us)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	return float64(d) / float64(time.Microsecond), nil
}

// ParseRTT reads a round-trip time given as a duration, in µs; ok is false
// when s is not a duration (then it names a nettest report).
func ParseRTT(s string) (us float64, ok bool, err error) {
	if _, perr := time.ParseDuration(strings.TrimSpace(s)); perr != nil {
		return 0, false, nil
	}
	us, err = parseDuration(s)
	if err == nil && us == 0 {
		err = fmt.Errorf("--rtt %q: want a positive round trip", s)
	}
	return us, true, err
}

func parseSize(s string) (int64, error) {
	b, err := bytesize.Parse(s)
	if err == nil && b == 0 {
		err = fmt.Errorf("size %q is zero", s)
	}
	return b, err
}

// ParseSizes reads --io: "2k,8k,128k", sorted, duplicates dropped.
func ParseSizes(s string) ([]int64, error) { return parseList(s, "--io", parseSize) }

// ParseDistances reads --distance: "10km,50km,100km" (km, m or mi; a bare
// number is km), in km, sorted, duplicates dropped.
func ParseDistances(s string) ([]float64, error) { return parseList(s, "--distance", parseDistance) }

func parseList[T int64 | float64](s, flag string, parse func(string) (T, error)) ([]T, error) {
	var v []T
	for _, part := range strings.Split(s, ",") {
		x, err := parse(part)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", flag, err)
		}
		v = append(v, x)
	}
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	return slices.Compact(v), nil
}

func parseDistance(s string) (float64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	switch {
	case strings.HasSuffix(t, "km"):
		t = strings.TrimSuffix(t, "km")
	case strings.HasSuffix(t, "mi"):
		t, mult = strings.TrimSuffix(t, "mi"), 1.609344
	case strings.HasSuffix(t, "m"):
		t, mult = strings.TrimSuffix(t, "m"), 1e-3
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || !(v >= 0) || v*mult > maxKm {
		return 0, fmt.Errorf("%q is not a distance (100km, 500m, 60mi; at most %g km)", s, maxKm)
	}
	return v * mult, nil
}

// ParseBandwidth reads a line rate in bit/s: "2Gbit", "1.5Mbit/s", "10G"
// (decimal prefixes k, M, G, T, as line rates are quoted).
func ParseBandwidth(s string) (float64, error) {
	t := strings.TrimSpace(s)
	for _, suffix := range []string{"/s", "ps", "it", "b"} {
		t = strings.TrimSuffix(t, suffix)
	}
	mult := 1.0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k', 'K':
			mult = 1e3
		case 'M', 'm':
			mult = 1e6
		case 'G', 'g':
			mult = 1e9
		case 'T', 't':
			mult = 1e12
		}
		if mult != 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || !(v > 0) || v*mult > maxBitsPerSecond {
		return 0, fmt.Errorf("--bandwidth %q: want a line rate in bit/s such as 2Gbit, 10Gbit, 1.5Mbit", s)
	}
	return v * mult, nil
}

// Rate is an offered write rate, in bytes or in I/Os per second.
type Rate struct {
	BytesPerSecond float64 `json:"bytes_per_s,omitempty"`
	IOPS           float64 `json:"iops,omitempty"`
}

// ParseRate reads --write-rate: bytes per second with a unit in powers of
// 1024 as the seed's throughputs (60MB/s, 1.5GiB/s) or "2000iops".
func ParseRate(s string) (Rate, error) {
	t := strings.TrimSpace(s)
	if n, ok := strings.CutSuffix(strings.ToLower(t), "iops"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		if err != nil || !(v > 0 && v <= maxRate) {
			return Rate{}, fmt.Errorf("--write-rate %q: want a positive number of I/Os per second (2000iops)", s)
		}
		return Rate{IOPS: v}, nil
	}
	n, ok := strings.CutSuffix(t, "/s")
	if !ok {
		return Rate{}, fmt.Errorf("--write-rate %q: want MB/s (60MB/s) or I/Os per second (2000iops)", s)
	}
	b, err := bytesize.Parse(n)
	if err != nil || b == 0 || float64(b) > maxRate {
		return Rate{}, fmt.Errorf("--write-rate %q: want a positive byte rate such as 60MB/s (MB = MiB) or I/Os per second (2000iops)", s)
	}
	return Rate{BytesPerSecond: float64(b)}, nil
}

// msText prints µs as the seed does, in ms.
func msText(us float64) string {
	t := strings.TrimRight(strconv.FormatFloat(us/1e3, 'f', 3, 64), "0")
	return strings.TrimSuffix(t, ".") + " ms"
}

// sizeText prints a size as the seed's tables do: in KiB when whole.
func sizeText(b int64) string {
	if b%kib == 0 {
		return strconv.FormatInt(b/kib, 10) + "k"
	}
	return strconv.FormatInt(b, 10)
}
