package loadtest

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// WriteSteps prints the steps as an aligned table, one row per step:
// the load (concurrency, or the intended rate of open-loop steps), the
// throughput of opName ("reads", "round trips") per second, MB/s,
// mean, p50, p90, p99, p99.9, max, CPU per operation, Little's L, and an
// errors column when any step had errors. Latencies print in a human
// unit (412µs, 8.19ms); "-" marks a figure the step cannot give.
func WriteSteps(w io.Writer, steps []Stats, opName string) error {
	if opName == "" {
		opName = "ops"
	}
	errorsColumn := false
	for _, s := range steps {
		errorsColumn = errorsColumn || s.Errors != 0
	}
	header := []string{loadHeader(steps), opName + "/s", "MB/s", "mean", "p50", "p90", "p99", "p99.9", "max", "CPU/op", "Little L"}
	if errorsColumn {
		header = append(header, "errors")
	}
	rows := [][]string{header}
	for _, s := range steps {
		row := append([]string{loadCell(s, steps)}, figureCells(s)...)
		if errorsColumn {
			row = append(row, fmt.Sprint(s.Errors))
		}
		rows = append(rows, row)
	}
	_, err := io.WriteString(w, alignRight(rows))
	return err
}

// loadHeader names the first column after the loop kinds present.
func loadHeader(steps []Stats) string {
	closed, open := false, false
	for _, s := range steps {
		closed = closed || s.Closed()
		open = open || !s.Closed()
	}
	switch {
	case closed && open:
		return "load"
	case open:
		return "rate/s"
	default:
		return "concurrency"
	}
}

// loadCell prints a step's load; in a mixed table rates carry "/s".
func loadCell(s Stats, steps []Stats) string {
	if s.Closed() {
		return fmt.Sprint(s.Concurrency)
	}
	if loadHeader(steps) == "load" {
		return number(s.Rate) + "/s"
	}
	return number(s.Rate)
}

// figureCells prints a step's figures after the load column.
func figureCells(s Stats) []string {
	if s.Ops == 0 {
		cells := []string{number(s.IOPS), number(s.MBs)}
		for range 8 {
			cells = append(cells, "-")
		}
		return cells
	}
	cpu := "-"
	if s.CPUPerOpUS > 0 {
		cpu = usText(s.CPUPerOpUS)
	}
	return []string{
		number(s.IOPS), number(s.MBs),
		usText(s.MeanUS), usText(s.P50US), usText(s.P90US), usText(s.P99US), usText(s.P999US), usText(s.MaxUS),
		cpu, littleText(s.LittleConcurrency),
	}
}

// littleText prints Little's L with three significant digits, keeping
// two decimals below 10 (0.97, 1.00, 15.7, 143).
func littleText(l float64) string {
	if l < 10 {
		return fmt.Sprintf("%.2f", l)
	}
	return number(l)
}

// alignRight pads every cell to its column's width (in characters: µ is
// one), right-aligned, columns two spaces apart.
func alignRight(rows [][]string) string {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)))
			b.WriteString(c)
		}
		b.WriteString("\n")
	}
	return b.String()
}
