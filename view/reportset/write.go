package reportset

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/stream"
)

// Formats a table can be written in.
const (
	FormatTable = "table"
	FormatJSON  = "json"
	FormatCSV   = "csv"
)

// Write writes the table in one of the formats.
func Write(w io.Writer, t Table, format string) error {
	switch format {
	case FormatTable, "":
		return WriteTable(w, t)
	case FormatJSON:
		return WriteJSON(w, t)
	case FormatCSV:
		return WriteCSV(w, t)
	}
	return fmt.Errorf("unknown report format %q (want table, json or csv)", format)
}

// averageLabel starts the Average rows, as sar prints it.
const averageLabel = "Average:"

// WriteTable writes the set as sar or iostat print it.
func WriteTable(w io.Writer, t Table) error {
	bw := bufio.NewWriter(w)
	if len(t.Windows) == 0 {
		fmt.Fprintf(bw, "no %s series in the data (report set %s)\n", t.Set.Group, t.Set.Name)
		return bw.Flush()
	}
	if t.Set.Layout == LayoutIostat {
		t.writeIostat(bw)
	} else {
		t.writeSar(bw)
	}
	return bw.Flush()
}

// writeSar prints sar's layout: a header, rows stamped with the window's
// end, then the Average rows. With several rows a window (devices,
// interfaces) sar repeats the header before each window, stamped with the
// window's start.
func (t Table) writeSar(w *bufio.Writer) {
	perWindow := len(t.Average) > 1
	for i, win := range t.Windows {
		if perWindow || i == 0 {
			if i > 0 {
				fmt.Fprintln(w)
			}
			t.sarHeader(w, clock(win.Start, win.Relative, t.Windows[0].Start))
		}
		for _, r := range win.Rows {
			t.sarRow(w, clock(win.End(), win.Relative, t.Windows[0].Start), r)
		}
	}
	if perWindow {
		fmt.Fprintln(w)
		t.sarHeader(w, averageLabel)
	}
	for _, r := range t.Average {
		t.sarRow(w, averageLabel, r)
	}
}

func (t Table) sarHeader(w *bufio.Writer, stamp string) {
	fmt.Fprintf(w, "%-11s", stamp)
	if t.Set.Label != "" {
		fmt.Fprintf(w, " %*s", t.Set.LabelWidth, t.Set.Label)
	}
	for _, c := range t.Columns {
		fmt.Fprintf(w, " %*s", c.Width, c.Name)
	}
	fmt.Fprintln(w)
}

func (t Table) sarRow(w *bufio.Writer, stamp string, r Row) {
	fmt.Fprintf(w, "%-11s", stamp)
	if t.Set.Label != "" {
		fmt.Fprintf(w, " %*s", t.Set.LabelWidth, t.label(r))
	}
	t.writeValues(w, r)
}

// writeIostat prints iostat -x -t's layout: per window a time line and a
// block of devices, then an Average block.
func (t Table) writeIostat(w *bufio.Writer) {
	for _, win := range t.Windows {
		stamp := win.End().Format("01/02/06 15:04:05")
		if win.Relative {
			stamp = clock(win.End(), true, t.Windows[0].Start)
		}
		t.iostatBlock(w, stamp, win.Rows)
	}
	t.iostatBlock(w, averageLabel, t.Average)
}

func (t Table) iostatBlock(w *bufio.Writer, stamp string, rows []Row) {
	fmt.Fprintln(w, stamp)
	fmt.Fprintf(w, "%-13s", t.Set.Label)
	for _, c := range t.Columns {
		fmt.Fprintf(w, " %*s", c.Width, c.Name)
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprintf(w, "%-13s", t.label(r))
		t.writeValues(w, r)
	}
	fmt.Fprintln(w)
}

func (t Table) writeValues(w *bufio.Writer, r Row) {
	for i, c := range t.Columns {
		if math.IsNaN(r.Values[i]) {
			fmt.Fprintf(w, " %*s", c.Width, "-")
			continue
		}
		fmt.Fprintf(w, " %*.*f", c.Width, c.Decimals, r.Values[i])
	}
	fmt.Fprintln(w)
}

// label names a row: its instance, with its source's host when the table
// has several.
func (t Table) label(r Row) string {
	if !t.multiSource {
		return r.Instance
	}
	return strings.TrimPrefix(r.Source, "host:") + ":" + r.Instance
}

// clock prints a time as sar does (HH:MM:SS in the data's zone), or as an
// offset from origin for sources without a wall clock.
func clock(at time.Time, relative bool, origin time.Time) string {
	if relative {
		return "+" + strconv.FormatFloat(at.Sub(origin).Seconds(), 'f', -1, 64) + "s"
	}
	return at.Format("15:04:05")
}

// WriteCSV writes one row per window and instance ("interval"), then the
// "average" rows, with every figure at full precision; a missing column is
// empty.
func WriteCSV(w io.Writer, t Table) error {
	cw := csv.NewWriter(w)
	header := []string{"kind", "source", "start", "seconds", "instance"}
	for _, c := range t.Columns {
		header = append(header, c.Name)
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	row := func(kind, source, start, seconds string, r Row) error {
		rec := []string{kind, source, start, seconds, r.Instance}
		for _, v := range r.Values {
			rec = append(rec, csvNumber(v))
		}
		return cw.Write(rec)
	}
	for _, win := range t.Windows {
		for _, r := range win.Rows {
			if err := row("interval", win.Source, startText(win), csvNumber(win.Duration.Seconds()), r); err != nil {
				return err
			}
		}
	}
	for _, r := range t.Average {
		if err := row("average", r.Source, "", "", r); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvNumber(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// startText is a window's start as RFC 3339, or its offset in seconds
// without a wall clock.
func startText(win Window) string {
	if win.Relative {
		return csvNumber(win.Start.Sub(stream.RelativeStart).Seconds())
	}
	return win.Start.Format(time.RFC3339Nano)
}

// jsonTable is the JSON form of a table (docs/host.md).
type jsonTable struct {
	Set       string       `json:"set"`
	Label     string       `json:"label,omitempty"`
	Columns   []string     `json:"columns"`
	Intervals []jsonWindow `json:"intervals"`
	Average   []jsonRow    `json:"average"`
}

type jsonWindow struct {
	Source  string    `json:"source"`
	Start   string    `json:"start"`
	Seconds float64   `json:"seconds"`
	Rows    []jsonRow `json:"rows"`
}

type jsonRow struct {
	Source   string              `json:"source,omitempty"`
	Instance string              `json:"instance"`
	Values   map[string]*float64 `json:"values"`
}

// WriteJSON writes the table as indented JSON: per window its rows with
// their figures by column name (null for a missing column), then the
// average rows.
func WriteJSON(w io.Writer, t Table) error {
	out := jsonTable{Set: t.Set.Name, Label: t.Set.Label, Columns: []string{}, Intervals: []jsonWindow{}, Average: []jsonRow{}}
	for _, c := range t.Columns {
		out.Columns = append(out.Columns, c.Name)
	}
	for _, win := range t.Windows {
		jw := jsonWindow{Source: win.Source, Start: startText(win), Seconds: win.Duration.Seconds(), Rows: []jsonRow{}}
		for _, r := range win.Rows {
			jw.Rows = append(jw.Rows, t.jsonRow(r, false))
		}
		out.Intervals = append(out.Intervals, jw)
	}
	for _, r := range t.Average {
		out.Average = append(out.Average, t.jsonRow(r, true))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func (t Table) jsonRow(r Row, withSource bool) jsonRow {
	jr := jsonRow{Instance: r.Instance, Values: map[string]*float64{}}
	if withSource {
		jr.Source = r.Source
	}
	for i, c := range t.Columns {
		if v := r.Values[i]; !math.IsNaN(v) {
			jr.Values[c.Name] = &v
		} else {
			jr.Values[c.Name] = nil
		}
	}
	return jr
}
