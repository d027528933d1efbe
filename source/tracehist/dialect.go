package tracehist

import (
	"strings"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/source"
)

// dialectID names the tools whose histogram printouts this package reads.
type dialectID int

const (
	dialectNone dialectID = iota
	dialectDTrace
	dialectSystemTap
	dialectBCC
	dialectBpftrace
	dialectIolatency
	// dialectOther marks lines that belong to another latscope format
	// (PyLatencyMap records, Oracle traces): detection says No.
	dialectOther
)

// dialect is what differs between the tools: how rows and headers look,
// the unit and the counting mode when the output does not say.
type dialect struct {
	id   dialectID
	name string // the format name, also the event name of unnamed tables
	// unit is the default latency unit (--unit overrides), 0 when the
	// output names it (bcc, bpftrace map names, iolatency's "(ms)").
	unit   hist.Unit
	counts source.Counts
	// parseRow reads a row of an open table.
	parseRow func(line string) (r row, shaped bool, reason string)
	// valueRows says rows name only their lower edge (DTrace, SystemTap).
	valueRows bool
	// elision says "~" lines stand for elided zero rows (SystemTap).
	elision bool
	// probeLines says DTrace probe lines ("  3  72639  :tick-10s") mark
	// prints.
	probeLines bool
}

var (
	dtraceDialect = &dialect{id: dialectDTrace, name: "dtrace", unit: hist.Nanosecond, counts: source.CountsCumulative,
		parseRow: parseValueRow, valueRows: true, probeLines: true}
	systemtapDialect = &dialect{id: dialectSystemTap, name: "systemtap", unit: hist.Microsecond, counts: source.CountsCumulative,
		parseRow: parseValueRow, valueRows: true, elision: true}
	bccDialect = &dialect{id: dialectBCC, name: "bcc", counts: source.CountsInterval,
		parseRow: func(l string) (row, bool, string) { return parseArrowRow(l, true) }}
	iolatencyDialect = &dialect{id: dialectIolatency, name: "iolatency", unit: hist.Millisecond, counts: source.CountsInterval,
		parseRow: func(l string) (row, bool, string) { return parseArrowRow(l, false) }}
	bpftraceDialect = &dialect{id: dialectBpftrace, name: "bpftrace", counts: source.CountsInterval,
		parseRow: parseBracketRow}
)

// header is a table header line.
type header struct {
	dialect dialectID
	// unitWord is what bcc's header names ("usecs"); unit is its unit, 0
	// when the word is no time unit (bitesize's "kbytes").
	unitWord string
	unit     hist.Unit
	// name and key are a bpftrace map's "@name[key]:".
	name   string
	key    string
	hasKey bool
}

// parseHeader recognises the table header of any dialect.
func parseHeader(line string) (header, bool) {
	t := strings.TrimSpace(line)
	if t == "" {
		return header{}, false
	}
	if t[0] == '@' {
		return parseMapHeader(t)
	}
	if strings.HasPrefix(t, ">=(ms) .. <(ms)") && strings.Contains(t, "I/O") && strings.Contains(t, "|Distribution") {
		return header{dialect: dialectIolatency, unit: hist.Millisecond}, true
	}
	f := strings.Fields(t)
	switch {
	case len(f) == 5 && f[0] == "value" && f[2] == "Distribution" && f[4] == "count" && isDashes(f[1]) && isDashes(f[3]):
		return header{dialect: dialectDTrace}, true
	case len(f) == 3 && f[0] == "value" && f[2] == "count" && strings.HasPrefix(f[1], "|") && isDashes(f[1][1:]):
		return header{dialect: dialectSystemTap}, true
	case len(f) == 4 && f[1] == ":" && f[2] == "count" && f[3] == "distribution":
		return header{dialect: dialectBCC, unitWord: f[0], unit: unitWord(f[0])}, true
	}
	return header{}, false
}

func isDashes(s string) bool { return len(s) >= 3 && onlyChars(s, "-") }

// parseMapHeader reads bpftrace's "@name:" or "@name[key, ...]:" line
// (nothing after the colon: "@x: 5" is a scalar map).
func parseMapHeader(t string) (header, bool) {
	body, ok := strings.CutSuffix(t, ":")
	if !ok {
		return header{}, false
	}
	h := header{dialect: dialectBpftrace}
	name := body[1:]
	if i := strings.IndexByte(name, '['); i >= 0 {
		if !strings.HasSuffix(name, "]") {
			return header{}, false
		}
		h.key, h.hasKey = strings.TrimSpace(name[i+1:len(name)-1]), true
		name = name[:i]
	}
	for _, c := range name {
		if c != '_' && (c < '0' || c > '9') && (c|0x20 < 'a' || c|0x20 > 'z') {
			return header{}, false
		}
	}
	h.name = "@" + name
	return h, true
}

// unitWord maps a unit word of a header or map name to its unit (0 when it
// is none).
func unitWord(w string) hist.Unit {
	switch strings.ToLower(w) {
	case "nsecs", "nsec", "ns":
		return hist.Nanosecond
	case "usecs", "usec", "us":
		return hist.Microsecond
	case "msecs", "msec", "ms":
		return hist.Millisecond
	case "secs", "sec":
		return hist.Second
	}
	return 0
}

// mapNameUnit finds a unit in a bpftrace map name: "@usecs", "@lat_ns",
// "@read_ms" (one of its '_'-separated words).
func mapNameUnit(name string) hist.Unit {
	for _, w := range strings.Split(strings.TrimPrefix(name, "@"), "_") {
		if u := unitWord(w); u != 0 && u != hist.Second {
			return u
		}
	}
	return 0
}

// sectionKey reads bcc's per-key section line "disk = 'sda'",
// "operation = 'read'", "Function = vfs_read", "flags = Read": the value
// without quotes (or b'...').
func sectionKey(line string) (string, bool) {
	label, value, ok := strings.Cut(strings.TrimSpace(line), " = ")
	if !ok || strings.TrimSpace(label) == "" {
		return "", false
	}
	v := strings.TrimSpace(value)
	v = strings.TrimPrefix(v, "b'")
	v = strings.Trim(v, "'\"")
	if v == "" {
		return "", false
	}
	return v, true
}
