// Package reportset prints host series (the host: source's mean series, or
// the same series read back from a recording, an archive or a PCP archive)
// per interval in the layouts of sysstat: sar -u, iostat -x, sar -n DEV, and
// a generic layout per group (cpu, mem, disk, net), with Average rows, as a
// table, CSV or JSON.
package reportset

import (
	"fmt"
	"slices"
	"strings"

	"github.com/latscope/latscope/stream"
)

// A Set is one report layout: the rows are the instances of one group of
// series (CPUs, devices, interfaces), the columns figures computed from
// those series per window.
type Set struct {
	Name string
	// Group is the series' prefix before the dot: "cpu" for "cpu.%user".
	Group string
	// Label heads the instance column ("CPU", "Device", "IFACE"); empty
	// when the group has no instances (memory). LabelWidth is its width
	// in sar's layout.
	Label      string
	LabelWidth int
	// Instances keeps only these instances (nil: every instance).
	Instances []string
	// Layout is the table's look: sar's or iostat's.
	Layout  Layout
	Columns []Column
}

// Layout is the table look of a set.
type Layout int

// The table layouts.
const (
	// LayoutSar prints sar's rows: time, label, figures of %9.2f.
	LayoutSar Layout = iota
	// LayoutIostat prints iostat -x -t blocks: a time line, then a
	// Device header and one row per device.
	LayoutIostat
)

// A Column is one figure of a row: its header as sysstat prints it, its
// printed width and decimals, and how it is computed from a window's
// series of one instance.
type Column struct {
	Name     string
	Width    int
	Decimals int
	// Needs names the events (without the group) the figure reads; a row
	// whose window lacks any of them shows "-".
	Needs []string
	value func(w window) float64
}

// Names lists the sets `--set` accepts.
func Names() []string {
	names := make([]string, 0, len(sets))
	for _, s := range sets {
		names = append(names, s.Name)
	}
	return names
}

// Lookup returns a set by name.
func Lookup(name string) (Set, error) {
	for _, s := range sets {
		if s.Name == name {
			return s, nil
		}
	}
	return Set{}, fmt.Errorf("unknown report set %q (want %s)", name, strings.Join(Names(), ", "))
}

// sets are the layouts: the sysstat ones column for column as sysstat 12.6
// prints them, the generic ones (cpu, mem, disk, net) with every series of
// their group as the data has them.
var sets = []Set{
	{Name: "cpu", Group: "cpu", Label: "CPU", LabelWidth: 7},
	{Name: "mem", Group: "mem"},
	{Name: "disk", Group: "disk", Label: "DEV", LabelWidth: 9},
	{Name: "net", Group: "net", Label: "IFACE", LabelWidth: 9},
	{Name: "sar-u", Group: "cpu", Label: "CPU", LabelWidth: 7, Instances: []string{"all"}, Columns: []Column{
		sarColumn("%user", mean("%user")),
		sarColumn("%nice", mean("%nice")),
		// sar -u's %system counts the time in interrupts too (sar -u ALL
		// splits it into %sys, %irq and %soft).
		{Name: "%system", Width: 9, Decimals: 2, Needs: []string{"%system", "%irq", "%soft"}, value: meanSum("%system", "%irq", "%soft")},
		sarColumn("%iowait", mean("%iowait")),
		sarColumn("%steal", mean("%steal")),
		sarColumn("%idle", mean("%idle")),
	}},
	{Name: "iostat-x", Group: "disk", Label: "Device", Layout: LayoutIostat, Columns: iostatColumns()},
	{Name: "sar-n-dev", Group: "net", Label: "IFACE", LabelWidth: 9, Columns: []Column{
		sarColumn("rxpck/s", mean("rxpck/s")),
		sarColumn("txpck/s", mean("txpck/s")),
		sarColumn("rxkB/s", mean("rxkB/s")),
		sarColumn("txkB/s", mean("txkB/s")),
		sarColumn("rxcmp/s", mean("rxcmp/s")),
		sarColumn("txcmp/s", mean("txcmp/s")),
		sarColumn("rxmcst/s", mean("rxmcst/s")),
		sarColumn("%ifutil", mean("%ifutil")),
	}},
}

// iostatColumns are iostat -x's (sysstat 12.6): per direction (read,
// write, discard) requests/s, kB/s, merged/s, % merged, await and request
// size, then flushes, queue size and utilisation. Widths are iostat's.
func iostatColumns() []Column {
	var cols []Column
	for _, d := range []string{"r", "w", "d"} {
		rate, kb, merged := d+"/s", d+"kB/s", d+"rqm/s"
		cols = append(cols,
			Column{Name: rate, Width: 7, Decimals: 2, Needs: []string{rate}, value: mean(rate)},
			Column{Name: kb, Width: 9, Decimals: 2, Needs: []string{kb}, value: mean(kb)},
			Column{Name: merged, Width: 8, Decimals: 2, Needs: []string{merged}, value: mean(merged)},
			Column{Name: "%" + d + "rqm", Width: 6, Decimals: 2, Needs: []string{merged, rate}, value: percentOf(merged, rate)},
			Column{Name: d + "_await", Width: 7, Decimals: 2, Needs: []string{d + "_await"}, value: mean(d + "_await")},
			Column{Name: d + "areq-sz", Width: 8, Decimals: 2, Needs: []string{kb, rate}, value: perEvent(kb, rate)},
		)
	}
	return append(cols,
		Column{Name: "f/s", Width: 7, Decimals: 2, Needs: []string{"f/s"}, value: mean("f/s")},
		Column{Name: "f_await", Width: 7, Decimals: 2, Needs: []string{"f_await"}, value: mean("f_await")},
		Column{Name: "aqu-sz", Width: 7, Decimals: 2, Needs: []string{"aqu-sz"}, value: mean("aqu-sz")},
		Column{Name: "%util", Width: 6, Decimals: 2, Needs: []string{"%util"}, value: mean("%util")},
	)
}

// sarColumn is a figure as sar prints it (%9.2f) of the series of the
// same name.
func sarColumn(name string, value func(window) float64) Column {
	return Column{Name: name, Width: 9, Decimals: 2, Needs: []string{name}, value: value}
}

// genericColumn shows one series of a group as is: its mean per window
// (milliseconds for latencies), kB without decimals as sar prints them.
func genericColumn(event string, q stream.Quantity) Column {
	decimals := 2
	if q == stream.KB {
		decimals = 0
	}
	return Column{Name: event, Width: max(9, len(event)), Decimals: decimals, Needs: []string{event}, value: mean(event)}
}

// columnsFor returns the set's columns: its own, or for a generic set
// every event of its group in the order the data first has them.
func (s Set) columnsFor(events []string, quantities map[string]stream.Quantity) []Column {
	if s.Columns != nil {
		return s.Columns
	}
	cols := make([]Column, 0, len(events))
	for _, e := range events {
		cols = append(cols, genericColumn(e, quantities[e]))
	}
	return cols
}

// wants says whether the set shows an instance.
func (s Set) wants(instance string) bool {
	return s.Instances == nil || slices.Contains(s.Instances, instance)
}

// split returns the event of a series of the set's group without the
// group's prefix; ok is false for series of other groups.
func (s Set) split(k stream.Key) (event string, ok bool) {
	return strings.CutPrefix(k.Event, s.Group+".")
}
