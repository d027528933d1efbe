package oracle10046

import (
	"bytes"
	"context"
	"strconv"

	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// CallType is the kind of a database call line.
type CallType uint8

// The database calls of a 10046 trace.
const (
	CallParse CallType = iota + 1
	CallExec
	CallFetch
	CallClose
)

// String returns the call's name as the trace writes it.
func (t CallType) String() string {
	switch t {
	case CallParse:
		return "PARSE"
	case CallExec:
		return "EXEC"
	case CallFetch:
		return "FETCH"
	case CallClose:
		return "CLOSE"
	}
	return "?"
}

// Call is one database call line: "EXEC #4:c=3999,e=4507,...,r=1,dep=0,...,tim=T".
// E and C are in microseconds (10g and later write both in µs); Tim is the
// trace's clock, in µs, at the call's end.
type Call struct {
	Type               CallType
	Cursor             int64
	Dep                int64
	E, C, R, P, CR, CU int64
	Tim                int64
	Line               int
	// Process is the trcsess section's pid ("" outside one): cursor
	// numbers and tim clocks are per process.
	Process string
}

// Wait is one WAIT line, with the cursor it was written for.
type Wait struct {
	Cursor int64
	Event  string
	Ela    int64 // µs
	Tim    int64
	Line   int
	// Process: as Call's.
	Process string
}

// Cursor is a "PARSING IN CURSOR" section: the statement a cursor number
// names from here on, with its text (at most maxSQLText bytes kept).
type Cursor struct {
	Cursor int64
	Dep    int64
	HV     string
	SQLID  string // empty before 11g
	Text   string
	Tim    int64
	Line   int
	// Process: as Call's.
	Process string
}

// Transaction is an XCTEND line, "XCTEND rlbk=0, rd_only=1, tim=T": the end
// of a transaction, a commit or (Rollback) a rollback; ReadOnly when it had
// changed nothing. Tim is 0 when the line has none (before 11g).
type Transaction struct {
	Rollback, ReadOnly bool
	Tim                int64
	Line               int
	// Process: as Call's.
	Process string
}

// CallHandler receives a trace's cursors, calls, waits and transaction
// ends in file order.
type CallHandler interface {
	Cursor(Cursor)
	Call(Call)
	Wait(Wait)
	Transaction(Transaction)
}

// maxSQLText bounds the SQL text kept per cursor.
const maxSQLText = 4096

// callPrefixes are the starts of call lines, by first letter.
var (
	parseCallPrefix = []byte("PARSE #")
	execCallPrefix  = []byte("EXEC #")
	fetchCallPrefix = []byte("FETCH #")
	closeCallPrefix = []byte("CLOSE #")
	xctendPrefix    = []byte("XCTEND ")
)

// callType returns the type of a call line and the length of its prefix,
// or 0 for any other line.
func callType(line []byte) (CallType, int) {
	var prefix []byte
	var typ CallType
	switch line[0] {
	case 'P':
		prefix, typ = parseCallPrefix, CallParse
	case 'E':
		prefix, typ = execCallPrefix, CallExec
	case 'F':
		prefix, typ = fetchCallPrefix, CallFetch
	case 'C':
		prefix, typ = closeCallPrefix, CallClose
	default:
		return 0, 0
	}
	if !bytes.HasPrefix(line, prefix) {
		return 0, 0
	}
	return typ, len(prefix)
}

// ReadCalls reads a whole trace, handing its cursors, calls and waits to h.
// The WAIT path is the latency parser's own; calls are parsed only here.
func ReadCalls(ctx context.Context, in source.Input, opts source.Options, h CallHandler) error {
	p := newParser(in, opts, func(stream.Interval) error { return nil })
	p.calls = &callState{handler: h}
	err := p.run(ctx, in.Reader)
	p.calls.closeCursor() // a trace cut inside SQL text
	return err
}

// callState is what the parser keeps when calls are asked for: by a
// handler (ReadCalls), or as latency series (--calls, series set).
type callState struct {
	handler CallHandler
	cursor  Cursor // the PARSING IN CURSOR whose text is being read
	open    bool
	text    []byte

	series     string           // source.CallsByType or CallsBySQL
	statements map[int64]string // CallsBySQL: cursor number → statement
	name       []byte           // scratch for series names
	cpu        bool             // also c= as "cpu ..." series
	// byType[cpu][type][dep] is 1 + the series of a CallsByType call's
	// elapsed (cpu 0) or CPU (1) series (0: not looked up yet on this
	// instance), so that most calls build no name.
	byType [2][CallClose + 1][maxCachedDep]int32
}

// maxCachedDep: calls deeper than this look their series up by name.
const maxCachedDep = 16

// maxCursorNames bounds the cursor → statement map of --calls sql (12c
// cursor numbers are addresses): past it the map starts again.
const maxCursorNames = 1 << 16

// callLine is what a call line says, read without the parser's state: typ
// is 0 for a line of another kind starting with the same letters
// (PARSING, PARSE ERROR, FETCH without fields), ok false for a bad one.
type callLine struct {
	typ CallType
	ok  bool
	c   Call
}

func scanCall(line []byte) callLine {
	typ, n := callType(line)
	if typ == 0 {
		return callLine{}
	}
	c, ok := parseCall(line[n:])
	return callLine{typ: typ, ok: ok, c: c}
}

// call places a call line (pre: already scanned).
func (p *parser) call(line []byte, pre scanned) error {
	var cl callLine
	if pre.call != nil {
		cl = *pre.call
	} else {
		cl = scanCall(line)
	}
	if cl.typ == 0 {
		return nil
	}
	if !cl.ok {
		p.malformed("bad " + cl.typ.String() + " line")
		return nil
	}
	c := cl.c
	c.Type, c.Line, c.Process = cl.typ, p.line, p.pid
	if p.calls.handler != nil {
		p.calls.handler.Call(c)
		return nil
	}
	return p.placeCall(c)
}

// transaction hands an XCTEND line's "rlbk=0, rd_only=1[, tim=T]" to the
// handler.
func (p *parser) transaction(fields []byte) {
	x := Transaction{Line: p.line, Process: p.pid}
	seen := 0
	for len(fields) > 0 {
		var f []byte
		f, fields, _ = bytes.Cut(fields, []byte(","))
		key, value, _ := bytes.Cut(bytes.TrimSpace(f), []byte("="))
		var flag *bool
		switch string(key) {
		case "rlbk":
			flag = &x.Rollback
		case "rd_only":
			flag = &x.ReadOnly
		case "tim":
			x.Tim, _, _ = parseUint(value)
			continue
		default:
			continue
		}
		if len(value) != 1 || value[0] != '0' && value[0] != '1' {
			p.malformed("bad XCTEND " + string(key) + "=" + string(value[:min(len(value), 20)]))
			return
		}
		*flag = value[0] == '1'
		seen++
	}
	if seen != 2 {
		p.malformed("XCTEND without rlbk= and rd_only=")
		return
	}
	p.calls.handler.Transaction(x)
}

// namesCursors says whether PARSING IN CURSOR lines are wanted: by a
// handler, or to name --calls sql series.
func (s *callState) namesCursors() bool {
	return s.handler != nil || s.series == source.CallsBySQL
}

// placeCall bins a call's elapsed time as a latency series (--calls).
func (p *parser) placeCall(c Call) error {
	if p.pending {
		if err := p.resolveStamp(c.Tim); err != nil {
			return err
		}
	}
	if series, ok := p.callSeries(c, 0); ok {
		if err := p.onWait(heldWait{tim: c.Tim, ela: c.E, series: series, line: p.line}); err != nil {
			return err
		}
	}
	if !p.calls.cpu {
		return nil
	}
	series, ok := p.callSeries(c, 1)
	if !ok {
		return nil
	}
	return p.onWait(heldWait{tim: c.Tim, ela: c.C, series: series, line: p.line})
}

// callSeries returns the series of a call's elapsed time (cpu 0: "call
// FETCH", "call EXEC dep=1" or "call FETCH <statement>") or CPU (cpu 1:
// "cpu FETCH"...).
func (p *parser) callSeries(c Call, cpu int) (int32, bool) {
	s := p.calls
	cached := s.series == source.CallsByType && c.Dep < maxCachedDep
	if cached && s.byType[cpu][c.Type][c.Dep] > 0 {
		return s.byType[cpu][c.Type][c.Dep] - 1, true
	}
	name := append(s.name[:0], [2]string{"call ", "cpu "}[cpu]...)
	name = append(name, c.Type.String()...)
	if s.series == source.CallsBySQL {
		stmt, ok := s.statements[c.Cursor]
		if !ok {
			stmt = "#" + strconv.FormatInt(c.Cursor, 10)
		}
		name = append(append(name, ' '), stmt...)
	} else if c.Dep > 0 {
		name = strconv.AppendInt(append(name, " dep="...), c.Dep, 10)
	}
	s.name = name
	series, ok := p.seriesOf(name)
	if ok && cached {
		s.byType[cpu][c.Type][c.Dep] = series + 1
	}
	return series, ok
}

// parseCall reads "<cursor>:c=N,e=N,...,tim=N" (the part after "EXEC #")
// in one pass. Unknown fields are skipped; e and tim are required.
func parseCall(b []byte) (Call, bool) {
	var c Call
	cur, n, ok := parseUint(b)
	if !ok || n >= len(b) || b[n] != ':' {
		return c, false
	}
	c.Cursor = cur
	var haveE, haveTim bool
	for i := n + 1; i < len(b); {
		k := i
		for i < len(b) && b[i] != '=' && b[i] != ',' {
			i++
		}
		if i == len(b) || b[i] == ',' { // a field without a value
			i++
			continue
		}
		key := b[k:i]
		v, m, ok := parseUint(b[i+1:])
		i += 1 + m
		if !ok || (i < len(b) && b[i] != ',') {
			if string(key) == "e" || string(key) == "tim" {
				return c, false
			}
			for i < len(b) && b[i] != ',' {
				i++
			}
			i++
			continue
		}
		i++
		switch string(key) {
		case "c":
			c.C = v
		case "e":
			c.E, haveE = v, true
		case "p":
			c.P = v
		case "cr":
			c.CR = v
		case "cu":
			c.CU = v
		case "r":
			c.R = v
		case "dep":
			c.Dep = v
		case "tim":
			c.Tim, haveTim = v, true
		}
	}
	return c, haveE && haveTim
}

// openCursor starts a cursor from its PARSING IN CURSOR line:
// "#4 len=71 dep=0 uid=33 oct=47 lid=33 tim=T hv=H ad='...' sqlid='S'",
// read in one pass over its space-separated fields.
func (p *parser) openCursor(line []byte) {
	rest := line[len(parsingPrefix):]
	cur, n, ok := parseUint(rest)
	if !ok {
		p.malformed("PARSING IN CURSOR without a cursor number")
		return
	}
	c := Cursor{Cursor: cur, Line: p.line, Process: p.pid}
	for rest = rest[n:]; len(rest) > 0; {
		f := rest
		if i := bytes.IndexByte(rest, ' '); i >= 0 {
			f, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		eq := bytes.IndexByte(f, '=')
		if eq < 0 {
			continue
		}
		value := f[eq+1:]
		switch string(f[:eq]) {
		case "dep":
			c.Dep, _, _ = parseUint(value)
		case "tim":
			c.Tim, _, _ = parseUint(value)
		case "hv":
			c.HV = string(value)
		case "sqlid":
			c.SQLID = string(bytes.Trim(value, "'"))
		}
	}
	s := p.calls
	s.closeCursor()
	s.cursor, s.open, s.text = c, true, s.text[:0]
}

// addText keeps a line of the open cursor's SQL text.
func (s *callState) addText(line []byte) {
	if !s.open || s.handler == nil || len(s.text) >= maxSQLText {
		return
	}
	if len(s.text) > 0 {
		s.text = append(s.text, '\n')
	}
	s.text = append(s.text, line[:min(len(line), maxSQLText-len(s.text))]...)
}

// closeCursor hands over the open cursor with the text read so far, or
// (--calls sql) names the cursor's statement.
func (s *callState) closeCursor() {
	if !s.open {
		return
	}
	s.open = false
	if s.handler == nil {
		s.nameCursor(s.cursor)
		return
	}
	s.cursor.Text = string(bytes.TrimRight(s.text, "\r\n "))
	s.handler.Cursor(s.cursor)
}

// nameCursor remembers which statement a cursor number names now.
func (s *callState) nameCursor(c Cursor) {
	if s.series != source.CallsBySQL {
		return
	}
	name := c.SQLID
	if name == "" && c.HV != "" {
		name = "hv:" + c.HV
	}
	if name == "" {
		return
	}
	if s.statements == nil || len(s.statements) >= maxCursorNames {
		s.statements = map[int64]string{}
	}
	s.statements[c.Cursor] = name
}
