package whatif

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/latscope/latscope/internal/bytesize"
	"github.com/latscope/latscope/internal/htmlpage"
)

// WriteJSON writes the result as one JSON document.
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// headline says what was assumed, in the table's and the page's head.
func (r *Result) headline() []string {
	l := r.Link
	lines := []string{
		fmt.Sprintf("Replication what-if: %s link, %s line code: %s of payload; light in fibre %g µs/km one way; %d round trip(s) per write",
			bitsText(l.BitsPerSecond), l.Encoding, rateText(l.PayloadBytesPerSecond), l.FibreUSPerKm, r.RoundTrips),
		fmt.Sprintf("Remote write at zero distance: %s + %s; from %s", msText(r.RemoteWrite.OverheadUS), r.slopeText(), r.RemoteWrite.From),
	}
	if r.MeasuredRTTUS > 0 {
		lines = append(lines, fmt.Sprintf("Round trip measured: %s (%s), what light in fibre takes over %.1f km and back",
			msText(r.MeasuredRTTUS), r.RTTFrom, r.Rows[0].DistanceKm))
	}
	return lines
}

func (r *Result) slopeText() string {
	if r.RemoteWrite.SlopeUSPerKiB == 0 {
		return "the link's load time"
	}
	return fmt.Sprintf("%.4g ms/KiB (the link's load time when longer)", r.RemoteWrite.SlopeUSPerKiB/1e3)
}

// WriteTable prints the what-if for people.
func WriteTable(w io.Writer, r *Result) error {
	bw := bufio.NewWriter(w)
	for _, l := range r.headline() {
		fmt.Fprintln(bw, l)
	}
	fmt.Fprintf(bw, "\nSynchronous mirroring, one write after the other:\n")
	fmt.Fprintf(bw, "%10s %6s %12s %10s %10s %11s %8s %8s %9s\n",
		"distance", "I/O", "round trips", "load", "overhead", "write time", "I/O/s", "MiB/s", "link used")
	for _, row := range r.Rows {
		s := row.Sync
		fmt.Fprintf(bw, "%10s %6s %12s %10s %10s %11s %8.0f %8.1f %8.1f%%\n", kmText(row.DistanceKm), sizeText(row.Bytes),
			ms3(s.RoundTripsUS), ms3(s.LoadUS), ms3(s.OverheadUS), ms3(s.WriteUS), s.IOPS, s.MiBs, 100*s.LinkShare)
	}
	fmt.Fprintf(bw, "\nAsynchronous, writes streamed back to back:\n")
	fmt.Fprintf(bw, "%10s %6s %11s %9s %9s %9s %10s %11s  %s\n",
		"distance", "I/O", "load", "packet", "in pipe", "to fill", "link I/O/s", "to saturate", "at most I/O/s (limited by)")
	synchronous := false
	for _, row := range r.Rows {
		a := row.Async
		mark := ""
		if a.Synchronous {
			mark, synchronous = " *", true
		}
		fmt.Fprintf(bw, "%10s %6s %8.2f µs %6.1f km %9.2f %9d %10.0f %11d  %.0f (%s)%s\n", kmText(row.DistanceKm), sizeText(row.Bytes),
			a.WireLoadUS, a.PacketKm, a.IOsInPipe, a.FillPipe, a.StreamIOPS, a.SaturateOutstanding, a.MaxIOPS, a.LimitedBy, mark)
	}
	fmt.Fprintln(bw, "in pipe: I/Os the one-way fibre holds; to fill: outstanding I/Os that fill it; to saturate: I/Os in flight that keep the link busy (Little's law: write time ÷ load)")
	if synchronous {
		fmt.Fprintln(bw, "*: at most one I/O in the pipe, or one let out at a time: asynchronous writes behave synchronously")
	}
	if r.WriteRate != nil {
		fmt.Fprintf(bw, "\nOffered write rate %s:\n", offeredText(*r.WriteRate))
		fmt.Fprintf(bw, "%10s %6s %9s %8s %9s %9s  %s\n", "distance", "I/O", "I/O/s", "MiB/s", "link used", "in flight", "verdict")
		for _, row := range r.Rows {
			o := row.Offered
			fmt.Fprintf(bw, "%10s %6s %9.0f %8.1f %8.1f%% %9.2f  %s\n", kmText(row.DistanceKm), sizeText(row.Bytes),
				o.IOPS, o.MiBs, 100*o.LinkShare, o.InFlight, o.Verdict)
		}
	}
	return bw.Flush()
}

// csvHeader names WriteCSV's columns: times in µs, shares as fractions.
var csvHeader = []string{"distance_km", "io_bytes", "rtt_us", "round_trips_us", "load_us", "overhead_us", "write_us", "iops",
	"mib_s", "link_share", "wire_load_us", "packet_km", "ios_in_pipe", "outstanding_to_fill_pipe", "stream_iops",
	"outstanding_to_saturate_link", "max_iops", "limited_by", "behaves_synchronously", "offered_iops", "offered_mib_s",
	"offered_link_share", "offered_in_flight", "offered_keeps_up", "backlog_mib_s", "buffer_full_s"}

// WriteCSV writes one line per distance and I/O size.
func WriteCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	cw.Write(csvHeader)
	for _, row := range r.Rows {
		s, a := row.Sync, row.Async
		rec := []string{num(row.DistanceKm), strconv.FormatInt(row.Bytes, 10), num(s.RTTUS), num(s.RoundTripsUS), num(s.LoadUS),
			num(s.OverheadUS), num(s.WriteUS), num(s.IOPS), num(s.MiBs), num(s.LinkShare), num(a.WireLoadUS), num(a.PacketKm),
			num(a.IOsInPipe), strconv.Itoa(a.FillPipe), num(a.StreamIOPS), strconv.Itoa(a.SaturateOutstanding), num(a.MaxIOPS),
			a.LimitedBy, strconv.FormatBool(a.Synchronous)}
		if o := row.Offered; o != nil {
			rec = append(rec, num(o.IOPS), num(o.MiBs), num(o.LinkShare), num(o.InFlight), strconv.FormatBool(o.KeepsUp),
				num(o.BacklogMiBs), num(o.BufferFullSeconds))
		} else {
			rec = append(rec, "", "", "", "", "", "", "")
		}
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// WriteHTML writes one self-contained page: the tables and a chart of the
// synchronous write time against distance, one line per I/O size.
func WriteHTML(w io.Writer, r *Result) error {
	bw := bufio.NewWriter(w)
	htmlpage.WriteHead(bw, "latscope whatif replication", pageCSS)
	bw.WriteString("<h1>Replication what-if</h1>\n")
	for _, l := range r.headline() {
		bw.WriteString("<p>" + html.EscapeString(l) + "</p>\n")
	}
	writeChart(bw, r)
	var table strings.Builder
	if err := WriteTable(&table, r); err != nil {
		return err
	}
	bw.WriteString("<pre>" + html.EscapeString(table.String()) + "</pre>\n")
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	htmlpage.WriteTail(bw, "whatif-data", data, "")
	return bw.Flush()
}

const pageCSS = `body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
pre{font:12px ui-monospace,monospace;overflow-x:auto}
svg text{font:12px system-ui,sans-serif}
.axis{stroke:#444}.grid{stroke:#ddd}
`

var chartColours = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"}

// writeChart draws the write time, a straight line in distance: the zero
// distance time plus round trips × 2 × fibre delay per km.
func writeChart(bw *bufio.Writer, r *Result) {
	const width, height, left, right, top, bottom = 720.0, 360.0, 70.0, 120.0, 20.0, 40.0
	maxKm := 0.0
	for _, row := range r.Rows {
		maxKm = math.Max(maxKm, row.DistanceKm)
	}
	sizes := rowSizes(r)
	perKm := float64(r.RoundTrips) * r.Link.RTTUS(1)
	maxUS := 0.0
	for _, b := range sizes {
		maxUS = math.Max(maxUS, r.RemoteWrite.ZeroDistanceUS(b, r.Link)+perKm*maxKm)
	}
	kmStep, usStep := niceStep(maxKm), niceStep(maxUS)
	maxKm, maxUS = kmStep*math.Ceil(maxKm/kmStep), usStep*math.Ceil(maxUS/usStep)
	x := func(km float64) float64 { return left + (width-left-right)*km/maxKm }
	y := func(us float64) float64 { return height - bottom - (height-top-bottom)*us/maxUS }
	fmt.Fprintf(bw, `<svg width="%g" height="%g" viewBox="0 0 %g %g" role="img" aria-label="synchronous write time against distance">`+"\n", width, height, width, height)
	for us := 0.0; us <= maxUS*(1+1e-9); us += usStep {
		fmt.Fprintf(bw, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/><text x="%.1f" y="%.1f" text-anchor="end">%s ms</text>`+"\n",
			left, width-right, y(us), y(us), left-6, y(us)+4, num(roundTo(us/1e3, usStep/1e3)))
	}
	for km := 0.0; km <= maxKm*(1+1e-9); km += kmStep {
		fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" text-anchor="middle">%s km</text>`+"\n", x(km), height-bottom+18, num(roundTo(km, kmStep)))
	}
	fmt.Fprintf(bw, `<line class="axis" x1="%g" x2="%g" y1="%g" y2="%g"/>`+"\n", left, width-right, height-bottom, height-bottom)
	fmt.Fprintf(bw, `<text x="%g" y="%g" text-anchor="middle">distance (synchronous write time, one write after the other)</text>`+"\n",
		(left+width-right)/2, height-4)
	labelY := labelPositions(sizes, func(b int64) float64 { return y(r.RemoteWrite.ZeroDistanceUS(b, r.Link) + perKm*maxKm) })
	for i, b := range sizes {
		colour := chartColours[i%len(chartColours)]
		zero := r.RemoteWrite.ZeroDistanceUS(b, r.Link)
		fmt.Fprintf(bw, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n",
			x(0), y(zero), x(maxKm), y(zero+perKm*maxKm), colour)
		fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" fill="%s">%s</text>`+"\n", x(maxKm)+6, labelY[i]+4, colour, sizeText(b))
		for _, row := range r.Rows {
			if row.Bytes == b {
				fmt.Fprintf(bw, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s, %s: %s</title></circle>`+"\n",
					x(row.DistanceKm), y(row.Sync.WriteUS), colour, kmText(row.DistanceKm), sizeText(b), ms3(row.Sync.WriteUS))
			}
		}
	}
	bw.WriteString("</svg>\n")
}

// niceStep is a 1, 2 or 5 × 10ⁿ step giving about four ticks up to v.
func niceStep(v float64) float64 {
	if !(v > 0) {
		return 1
	}
	raw := v / 4
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*pow >= raw {
			return m * pow
		}
	}
	return 10 * pow
}

// roundTo drops the float noise of summed steps.
func roundTo(v, step float64) float64 { return math.Round(v/step) * step }

// labelPositions spreads the lines' end labels at least 14 px apart, in
// the order of their lines (larger sizes end higher: smaller y).
func labelPositions(sizes []int64, yOf func(int64) float64) []float64 {
	ys := make([]float64, len(sizes))
	for i, b := range sizes {
		ys[i] = yOf(b)
	}
	for i := len(ys) - 2; i >= 0; i-- {
		if ys[i] < ys[i+1]+14 {
			ys[i] = ys[i+1] + 14
		}
	}
	return ys
}

// rowSizes lists the I/O sizes in the rows' order, once each.
func rowSizes(r *Result) []int64 {
	var sizes []int64
	seen := map[int64]bool{}
	for _, row := range r.Rows {
		if !seen[row.Bytes] {
			seen[row.Bytes] = true
			sizes = append(sizes, row.Bytes)
		}
	}
	return sizes
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func ms3(us float64) string { return fmt.Sprintf("%.3f ms", us/1e3) }

func kmText(km float64) string { return strconv.FormatFloat(km, 'g', 4, 64) + " km" }

func bitsText(bps float64) string {
	for _, u := range []struct {
		div  float64
		name string
	}{{1e12, "Tbit/s"}, {1e9, "Gbit/s"}, {1e6, "Mbit/s"}, {1e3, "kbit/s"}} {
		if bps >= u.div {
			return strconv.FormatFloat(bps/u.div, 'g', 4, 64) + " " + u.name
		}
	}
	return strconv.FormatFloat(bps, 'g', 4, 64) + " bit/s"
}

func rateText(bytesPerSecond float64) string {
	return strconv.FormatFloat(bytesPerSecond/1e6, 'g', 4, 64) + " MB/s"
}

func offeredText(r Rate) string {
	if r.IOPS > 0 {
		return strconv.FormatFloat(r.IOPS, 'g', -1, 64) + " I/O/s"
	}
	return bytesize.Format(int64(r.BytesPerSecond)) + "/s"
}
