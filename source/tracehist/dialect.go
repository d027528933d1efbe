package tracehist

import (
	"strings"
	"unicode"

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
	// headerShape tells in messages what starts a table.
	headerShape string
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
	dtraceDialect = &dialect{id: dialectDTrace, name: "dtrace", headerShape: `"value  ---- Distribution ---- count"`, unit: hist.Nanosecond, counts: source.CountsCumulative,
		parseRow: parseValueRow, valueRows: true, probeLines: true}
	systemtapDialect = &dialect{id: dialectSystemTap, name: "systemtap", headerShape: `"value |---- count"`, unit: hist.Microsecond, counts: source.CountsCumulative,
		parseRow: parseValueRow, valueRows: true, elision: true}
	bccDialect = &dialect{id: dialectBCC, name: "bcc", headerShape: `"usecs : count distribution", or any label naming the unit ("wait time, microsec")`, counts: source.CountsInterval,
		parseRow: func(l string) (row, bool, string) { return parseArrowRow(l, true) }}
	iolatencyDialect = &dialect{id: dialectIolatency, name: "iolatency", headerShape: `">=(ms) .. <(ms) : I/O |Distribution"`, unit: hist.Millisecond, counts: source.CountsInterval,
		parseRow: func(l string) (row, bool, string) { return parseArrowRow(l, false) }}
	bpftraceDialect = &dialect{id: dialectBpftrace, name: "bpftrace", headerShape: `"@name:" or "@name[key]:" followed by "[lo, hi)" rows`, counts: source.CountsInterval,
		parseRow: parseBracketRow}
)

// header is a table header line.
type header struct {
	dialect dialectID
	// label is bcc's value label ("usecs", "wait time, microsec"); unit
	// is the time unit it names, labelKind what kind of label it is.
	label     string
	unit      hist.Unit
	labelKind labelKind
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
	case len(f) >= 4 && f[len(f)-3] == ":" && f[len(f)-2] == "count" && f[len(f)-1] == "distribution":
		label := strings.Join(f[:len(f)-3], " ")
		u, kind := labelUnit(label)
		return header{dialect: dialectBCC, label: label, unit: u, labelKind: kind}, true
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
	case "nsecs", "nsec", "ns", "nanosec", "nanosecs", "nanosecond", "nanoseconds":
		return hist.Nanosecond
	case "usecs", "usec", "us", "µs", "μs", "microsec", "microsecs", "microsecond", "microseconds":
		return hist.Microsecond
	case "msecs", "msec", "ms", "millisec", "millisecs", "millisecond", "milliseconds":
		return hist.Millisecond
	case "secs", "sec", "second", "seconds":
		return hist.Second
	}
	return 0
}

// labelKind says what a bcc value label measures.
type labelKind int

const (
	// labelTime names a time unit: the table is a latency.
	labelTime labelKind = iota
	// labelSize names a size (bitesize's "Kbytes"): never a latency.
	labelSize
	// labelUnknown names no unit ("value", "runqlen"): a latency only if
	// --unit says so.
	labelUnknown
)

// labelUnit finds the unit of a bcc value label: the first of its words
// that is a time unit ("wait time, microsec" → µs), else whether it names a
// size.
func labelUnit(label string) (hist.Unit, labelKind) {
	words := strings.FieldsFunc(label, func(c rune) bool { return !unicode.IsLetter(c) })
	for _, w := range words {
		if u := unitWord(w); u != 0 {
			return u, labelTime
		}
	}
	for _, w := range words {
		if isSizeWord(w) {
			return 0, labelSize
		}
	}
	return 0, labelUnknown
}

// isSizeWord says a label word names an amount of data.
func isSizeWord(w string) bool {
	w = strings.ToLower(w)
	switch w {
	case "kb", "mb", "gb", "kib", "mib", "gib", "sectors", "pages", "blocks":
		return true
	}
	return strings.HasSuffix(w, "bytes")
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

// sectionName names a bcc table by the line printed just before its
// header: the value of a section line in any of its forms (bcc's
// "disk = 'sda'", "Function = vfs_read", "flags = Read", b'...' values,
// and "event=db file sequential read" after a sed rename), or the line
// itself when it is a bare name ("db file sequential read"). Prose is no
// name: see isBareName.
func sectionName(line string) (string, bool) {
	t := strings.TrimSpace(line)
	if label, value, ok := strings.Cut(t, "="); ok {
		if strings.TrimSpace(label) == "" {
			return "", false
		}
		v := strings.TrimSpace(value)
		v = strings.TrimPrefix(v, "b'")
		v = strings.Trim(v, "'\"")
		return v, v != ""
	}
	return t, isBareName(t)
}

// maxBareName bounds a bare section name: wait event names are shorter
// than 64 bytes and 8 words.
const (
	maxBareName      = 64
	maxBareNameWords = 8
)

// isBareName says a line may be a section name on its own: short, not
// the tools' prose ("Tracing ... Hit Ctrl-C to end.", "^C", a shell
// prompt "# ./biolatency") and not a sentence.
func isBareName(t string) bool {
	if t == "" || len(t) > maxBareName || len(strings.Fields(t)) > maxBareNameWords {
		return false
	}
	if strings.Contains(t, "Ctrl-C") || strings.ContainsAny(t[:1], "#$%>^") || strings.ContainsAny(t, "|") {
		return false
	}
	return !strings.ContainsAny(t[len(t)-1:], ".:!?")
}
