package oracle10046

import (
	"bytes"
	"strings"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// Limits that keep memory bounded whatever the input holds.
const (
	// maxSeries is how many distinct series (event on instance) are kept;
	// real traces have a few dozen.
	maxSeries = 10000
	// maxPIDAnchors bounds the per-process anchors of trcsess merges.
	maxPIDAnchors = 4096
	// maxZones bounds the cache of UTC-offset locations.
	maxZones = 64
	// maxNameLen bounds instance and process names taken from the input.
	maxNameLen = 256
)

// sqlMode says whether the lines being read are SQL text.
type sqlMode int

const (
	sqlNone sqlMode = iota
	// sqlStatement: after PARSING IN CURSOR, up to END OF STMT.
	sqlStatement
	// sqlParseError: after PARSE ERROR, len bytes of text with no end marker.
	sqlParseError
)

// Line prefixes and keys the parser dispatches on.
var (
	waitPrefix       = []byte("WAIT #")
	starsPrefix      = []byte("*** ")
	parsingPrefix    = []byte("PARSING IN CURSOR #")
	parseErrorPrefix = []byte("PARSE ERROR #")
	traceFilePrefix  = []byte("Trace file ")
	bannerPrefix     = []byte("Oracle Database")
	instancePrefix   = []byte("Instance name:")
	endOfStmt        = []byte("END OF STMT")
	pidPrefix        = []byte("[ Unix process pid:")
	continuedPrefix  = []byte("TRACE CONTINUED FROM FILE")
	namKey           = []byte("nam='")
	cursorNamKey     = []byte(": nam='")
	elaDelim         = []byte("' ela=")
	waitTimKey       = []byte(" tim=")
	timKey           = []byte("tim=")
	lenKey           = []byte("len=")
	utf8BOM          = []byte("\xef\xbb\xbf")
)

// parser holds the state of one trace read: which lines are SQL text, the
// series seen so far, the pending timestamp and the binner that turns
// waits into intervals.
type parser struct {
	name string
	diag *input.Diagnostics
	opts source.Options
	loc  *time.Location

	line int

	sqlMode  sqlMode
	sqlSeen  int64 // bytes of SQL text read so far
	sqlLimit int64 // sqlStatement: give up on END OF STMT past this; sqlParseError: text length

	instance string
	keys     []stream.Key
	keep     []bool
	byName   map[string]int32
	full     bool // maxSeries reached (reported once)

	lastName   []byte // the previous wait's event, to skip the map lookup
	lastSeries int32
	lastOK     bool

	// pendingAt is the last "***" timestamp not yet tied to a tim.
	pending   bool
	pendingAt time.Time

	clock    clockMode
	held     []heldWait
	boundary bool // a new file's header was seen since the last wait

	pid        string
	pidAnchors map[string]anchor
	zones      map[int]*time.Location

	bin *binner

	// calls is set by ReadCalls and --calls: otherwise no call is parsed.
	calls *callState
	// blockEvent[s]: series s is a block read (kept with opts.BlockReads).
	blockEvent []bool
}

func newParser(in source.Input, opts source.Options, emit func(stream.Interval) error) *parser {
	p := &parser{
		name:   in.Name,
		diag:   in.Diag,
		opts:   opts,
		loc:    opts.Loc(),
		byName: map[string]int32{},
	}
	p.bin = newBinner(in.Name, opts.Interval, emit, &p.keys, p.warnBackwards)
	if opts.Calls != "" {
		p.calls = &callState{series: opts.Calls, cpu: opts.CallCPU}
	}
	return p
}

// scanned is a WAIT or call line read ahead of its turn by a chunk worker
// of the parallel parse (parallel.go); nil when not.
type scanned struct {
	wait *waitLine
	call *callLine
}

// handle dispatches one line (without its newline). truncated says the line
// was longer than the buffer and only its start is given; pre, when not
// nil, is the line already scanned.
func (p *parser) handle(line []byte, truncated bool, pre scanned) error {
	if p.line == 1 {
		line = bytes.TrimPrefix(line, utf8BOM)
	}
	if p.sqlMode != sqlNone && p.sqlText(line) {
		return nil
	}
	line = trimCR(line)
	if len(line) == 0 {
		return nil
	}
	switch line[0] {
	case 'W':
		if bytes.HasPrefix(line, waitPrefix) {
			if pre.wait != nil {
				return p.wait(line, *pre.wait)
			}
			return p.wait(line, scanWait(line, truncated))
		}
	case '*':
		if bytes.HasPrefix(line, starsPrefix) {
			p.stars(line[len(starsPrefix):])
			return nil
		}
	case 'P':
		if bytes.HasPrefix(line, parsingPrefix) {
			if p.calls != nil && p.calls.namesCursors() {
				p.openCursor(line)
			}
			p.enterSQL(line, sqlStatement)
		} else if bytes.HasPrefix(line, parseErrorPrefix) {
			p.enterSQL(line, sqlParseError)
		} else if p.calls != nil {
			if err := p.call(line, pre); err != nil {
				return err
			}
		}
	case 'X':
		if p.calls != nil && p.calls.handler != nil && bytes.HasPrefix(line, xctendPrefix) {
			p.transaction(line[len(xctendPrefix):])
		}
	case 'E', 'F', 'C':
		if p.calls != nil {
			if err := p.call(line, pre); err != nil {
				return err
			}
		}
	case 'T':
		if bytes.HasPrefix(line, traceFilePrefix) {
			p.boundary = true
		}
	case 'O':
		if bytes.HasPrefix(line, bannerPrefix) {
			p.boundary = true
		}
	case 'I':
		if bytes.HasPrefix(line, instancePrefix) {
			p.setInstance(line[len(instancePrefix):])
		}
	}
	// A timestamp belongs to the tim of the next line that has one: database
	// calls (PARSE, EXEC, FETCH, CLOSE, XCTEND, ERROR, LOB...) as well as
	// PARSING lines.
	if p.pending && line[0] >= 'A' && line[0] <= 'Z' {
		if tim, ok := findTim(line); ok {
			return p.resolveStamp(tim)
		}
	}
	return nil
}

// enterSQL starts skipping the SQL text that follows a PARSING IN CURSOR or
// PARSE ERROR line. len= (bytes or characters, sometimes off by a couple)
// is used as a guide only: a statement ends at END OF STMT, but a missing
// END OF STMT (truncated trace) must not swallow the rest of the file.
func (p *parser) enterSQL(line []byte, mode sqlMode) {
	p.sqlMode, p.sqlSeen, p.sqlLimit = mode, 0, sqlLimitOf(line, mode)
}

// sqlLimitOf returns the sqlLimit of the text after a PARSING IN CURSOR
// (sqlStatement) or PARSE ERROR (sqlParseError) line.
func sqlLimitOf(line []byte, mode sqlMode) int64 {
	var n int64
	// "PARSING IN CURSOR #4 len=71 ..." but "PARSE ERROR #9:len=67 ...".
	if i := bytes.Index(line, lenKey); i > 0 && (line[i-1] == ' ' || line[i-1] == ':') {
		if v, _, ok := parseUint(line[i+len(lenKey):]); ok {
			n = min(v, 1<<40)
		}
	}
	if mode == sqlStatement {
		return 4*n + 4096 // 4 bytes per character at most, plus slack
	}
	return n
}

// sqlText consumes a line of SQL text; it returns false when the line turns
// out not to be SQL text and must be read as a trace line.
func (p *parser) sqlText(line []byte) bool {
	trimmed := trimCR(line)
	if bytes.Equal(trimmed, endOfStmt) {
		p.sqlMode = sqlNone
		if p.calls != nil {
			p.calls.closeCursor()
		}
		return true
	}
	p.sqlSeen += int64(len(line)) + 1
	switch p.sqlMode {
	case sqlStatement:
		if p.sqlSeen > p.sqlLimit {
			p.sqlMode = sqlNone
			if p.calls != nil {
				p.calls.closeCursor()
			}
			return false
		}
		if p.calls != nil {
			p.calls.addText(trimmed)
		}
	case sqlParseError:
		// The first line is always text; len is at most two bytes longer
		// than the text in the traces seen (10g counts a terminator).
		if p.sqlSeen >= p.sqlLimit-2 {
			p.sqlMode = sqlNone
		}
	}
	return true
}

// waitLine is what a WAIT line says, read without the parser's state (so
// that chunks of a file can be read ahead in parallel): bad says why the
// line is malformed (badNone when it is not), name and params are offsets
// in the line. It holds no pointer, so that the garbage collector need not
// look at chunks of them.
type waitLine struct {
	cursor, ela, tim int64
	nameAt, nameEnd  int32
	paramsAt         int32
	bad              badWait
}

// badWait says why a WAIT line is malformed.
type badWait uint8

const (
	badNone badWait = iota
	badLong
	badNoName
	badNoEla
	badEla
	badNoTim
	badTim
	badEmptyName
)

var badWaitReasons = [...]string{
	badLong:      "WAIT line longer than 1 MiB",
	badNoName:    "WAIT line without nam='...'",
	badNoEla:     "WAIT line without ela=",
	badEla:       "WAIT line with a bad ela value",
	badNoTim:     "WAIT line without tim=",
	badTim:       "WAIT line with a bad tim value",
	badEmptyName: "WAIT line with an empty event name",
}

// scanWait reads "WAIT #c: nam='<event>' ela= N <params> tim=T".
func scanWait(line []byte, truncated bool) waitLine {
	if truncated {
		return waitLine{bad: badLong}
	}
	at := len(waitPrefix)
	rest := line[at:]
	// Usually "WAIT #<cursor>: nam='": check there before searching.
	cursor, c, _ := parseUint(rest)
	if bytes.HasPrefix(rest[c:], cursorNamKey) {
		at += c + len(cursorNamKey)
	} else if i := bytes.Index(rest, namKey); i >= 0 {
		at += i + len(namKey)
	} else {
		return waitLine{bad: badNoName}
	}
	rest = line[at:]
	// Event names contain quotes, colons and asterisks: the name ends at
	// the "' ela=" delimiter, not at the first quote.
	j := bytes.Index(rest, elaDelim)
	if j < 0 {
		return waitLine{bad: badNoEla}
	}
	w := waitLine{cursor: cursor, nameAt: int32(at), nameEnd: int32(at + j)}
	at += j + len(elaDelim)
	for at < len(line) && line[at] == ' ' {
		at++
	}
	ela, n, ok := parseUint(line[at:])
	if !ok || (at+n < len(line) && line[at+n] != ' ') {
		return waitLine{bad: badEla}
	}
	at += n
	tim, found, ok := waitTim(line[at:])
	switch {
	case !found:
		return waitLine{bad: badNoTim}
	case !ok:
		return waitLine{bad: badTim}
	case w.nameEnd == w.nameAt:
		return waitLine{bad: badEmptyName}
	}
	w.ela, w.tim, w.paramsAt = ela, tim, int32(at)
	return w
}

// wait places a WAIT line read by scanWait.
func (p *parser) wait(line []byte, w waitLine) error {
	if w.bad != badNone {
		p.malformed(badWaitReasons[w.bad])
		return nil
	}
	s, ok := p.seriesOf(line[w.nameAt:w.nameEnd])
	if !ok {
		return nil
	}
	if p.pending {
		if err := p.resolveStamp(w.tim); err != nil {
			return err
		}
	}
	if p.opts.BlockReads != nil && p.keep[s] {
		p.blockRead(s, line[w.paramsAt:], w.ela, w.tim)
	}
	if p.calls != nil && p.calls.handler != nil {
		// ReadCalls: the handler is the only reader, no interval is wanted.
		p.calls.handler.Wait(Wait{Cursor: w.cursor, Event: p.keys[s].Event, Ela: w.ela, Tim: w.tim, Line: p.line, Process: p.pid})
		return nil
	}
	return p.onWait(heldWait{tim: w.tim, ela: w.ela, series: s, line: p.line})
}

// waitTim reads the tim field of a WAIT line's parameters: the last field
// in every version seen, else the last " tim=" followed by a number.
func waitTim(params []byte) (tim int64, found, ok bool) {
	end := len(params)
	for end > 0 && (params[end-1] == ' ' || params[end-1] == '\t') {
		end--
	}
	field := params[bytes.LastIndexByte(params[:end], ' ')+1 : end]
	if !bytes.HasPrefix(field, timKey) {
		t := bytes.LastIndex(params[:end], waitTimKey)
		if t < 0 {
			return 0, false, false
		}
		field = params[t+1 : end]
	}
	v, n, ok := parseUint(field[len(timKey):])
	after := field[len(timKey)+n:]
	return v, true, ok && (len(after) == 0 || after[0] == ' ')
}

// seriesOf returns the series index of an event on the current instance.
func (p *parser) seriesOf(name []byte) (int32, bool) {
	// Waits come in runs of one event: skip the map for a repeat.
	if p.lastOK && bytes.Equal(name, p.lastName) {
		return p.lastSeries, true
	}
	if s, ok := p.byName[string(name)]; ok {
		p.remember(name, s)
		return s, true
	}
	if len(p.keys) >= maxSeries {
		if !p.full {
			p.full = true
			p.diag.Warn(p.name, "more than %d distinct event names; WAIT lines of further events are skipped", maxSeries)
		}
		p.malformed("too many distinct event names")
		return 0, false
	}
	ev := string(name)
	s := int32(len(p.keys))
	p.keys = append(p.keys, stream.Key{Event: ev, Instance: p.instance})
	p.keep = append(p.keep, p.opts.KeepEvent(ev))
	p.byName[ev] = s
	p.remember(name, s)
	return s, true
}

func (p *parser) remember(name []byte, s int32) {
	p.lastName = append(p.lastName[:0], name...)
	p.lastSeries, p.lastOK = s, true
}

// setInstance reads the header's "Instance name: X"; a concatenated trace
// of another instance starts new series.
func (p *parser) setInstance(b []byte) {
	name := string(bytes.TrimSpace(b))
	if len(name) > maxNameLen {
		name = name[:maxNameLen]
	}
	if name == p.instance {
		return
	}
	p.instance = name
	p.byName = map[string]int32{}
	p.lastOK = false
	if p.calls != nil {
		p.calls.byType = [2][CallClose + 1][maxCachedDep]int32{}
	}
}

// stars handles a "*** " line: timestamps (bare or after an identity such as
// "SESSION ID:(90.6)"), trcsess process sections and continuation markers.
func (p *parser) stars(rest []byte) {
	switch {
	case len(rest) > 0 && isDigit(rest[0]):
		p.stamp(rest)
	case bytes.HasPrefix(rest, pidPrefix):
		p.switchProcess(rest[len(pidPrefix):])
	case bytes.HasPrefix(rest, continuedPrefix):
		// This file continues the previous one: time is continuous.
		p.boundary = false
	default:
		if i := bytes.LastIndex(rest, []byte(") ")); i >= 0 {
			p.stamp(rest[i+2:])
		}
	}
}

// stamp records a timestamp; it is tied to a tim by the next line with one.
// Unreadable timestamps are ignored: they are not WAIT lines.
func (p *parser) stamp(b []byte) {
	if t, ok := parseStamp(b, p.loc, p.zone); ok {
		p.pending, p.pendingAt = true, t
	}
}

// zone returns a cached fixed-offset location.
func (p *parser) zone(offset int) *time.Location {
	if z, ok := p.zones[offset]; ok {
		return z
	}
	z := time.FixedZone("", offset)
	if p.zones == nil {
		p.zones = map[int]*time.Location{}
	}
	if len(p.zones) < maxZones {
		p.zones[offset] = z
	}
	return z
}

// switchProcess starts a trcsess section "[ Unix process pid: N ]": each
// process keeps its own anchor, restored when its section comes back.
func (p *parser) switchProcess(b []byte) {
	pid := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(b)), "]"))
	if len(pid) > maxNameLen {
		pid = pid[:maxNameLen]
	}
	if pid == p.pid {
		return
	}
	// A timestamp not yet tied to a tim belonged to the section that ended.
	p.pending = false
	if p.clock == clockWall {
		if p.pidAnchors == nil {
			p.pidAnchors = map[string]anchor{}
		}
		if _, ok := p.pidAnchors[p.pid]; ok || len(p.pidAnchors) < maxPIDAnchors {
			p.pidAnchors[p.pid] = p.bin.anchor
		}
		if a, ok := p.pidAnchors[pid]; ok {
			p.bin.setAnchor(a)
		}
	}
	p.pid = pid
}

// malformed reports the current line as skipped.
func (p *parser) malformed(reason string) {
	p.diag.Malformed(p.name, p.line, reason)
}

// warnBackwards reports, once per source, that time went backwards.
func (p *parser) warnBackwards(line int) {
	p.diag.Warn(p.name, "time goes backwards at line %d (concatenated or merged trace?)", line)
}

// parseUint reads the decimal digits at the start of b. ok is false when
// there are none or more than 18 (which could overflow int64).
func parseUint(b []byte) (v int64, n int, ok bool) {
	for n < len(b) && isDigit(b[n]) {
		if n == 18 {
			return 0, n, false
		}
		v = v*10 + int64(b[n]-'0')
		n++
	}
	return v, n, n > 0
}

func isDigit(c byte) bool { return c-'0' <= 9 }

func onlySpaces(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// findTim returns the value of the last "tim=N" field of a call line, where
// tim= follows a space, comma or colon and N ends the field.
func findTim(line []byte) (int64, bool) {
	end := len(line)
	for {
		i := bytes.LastIndex(line[:end], timKey)
		if i < 0 {
			return 0, false
		}
		if i > 0 && (line[i-1] == ' ' || line[i-1] == ',' || line[i-1] == ':') {
			v, n, ok := parseUint(line[i+len(timKey):])
			if r := line[i+len(timKey)+n:]; ok && (len(r) == 0 || r[0] == ' ' || r[0] == ',') {
				return v, true
			}
		}
		end = i
	}
}

// trimCR removes a line's carriage return.
func trimCR(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		return line[:n-1]
	}
	return line
}
