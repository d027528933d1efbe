package linuxaudit

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/latscope/latscope/input"
)

// Defaults of Reader's limits.
const (
	DefaultMaxLineBytes  = 64 << 10
	DefaultMaxEventBytes = 1 << 20
	DefaultMaxOpen       = 4096
	// Window is how much later (in whole seconds of the records' times, as
	// auparse counts) a record must be for the events still open before it
	// to be complete.
	Window = 2
)

// Reader reads audit logs; its zero value uses the defaults.
type Reader struct {
	// MaxLineBytes: a longer line is reported and skipped (the kernel's
	// records are at most 8970 bytes, ENRICHED ones a little more).
	MaxLineBytes int
	// MaxEventBytes: an event whose records grow past it is handed on in
	// parts, with a warning.
	MaxEventBytes int
	// MaxOpen: with more events open, the oldest is handed on, with a
	// warning (memory is bounded by open events).
	MaxOpen int
	// Want, when set, selects events by their records' types: an event
	// none of whose records' types it accepts is dropped before its fields
	// are tokenized (reading it then costs little more than finding its
	// lines) and counted in *Dropped when Dropped is set.
	Want    func(typ []byte) bool
	Dropped *int
	// FlushIdle, when set and the input is a followed file (an
	// input.IdleNotifier), hands on every open event once the input has
	// been idle that long: otherwise the last event would wait for the
	// next one to arrive.
	FlushIdle time.Duration
	// FieldsOnly: events are handed on with their fields and types but
	// without Records (nil), which saves an allocation an event for a
	// caller that keeps only the fields.
	FieldsOnly bool
	// Skip, when set, names record types whose fields are not read: a
	// caller that needs no Paths, Proctitle or Cwd saves tokenizing PATH,
	// PROCTITLE and CWD records (their Records' Fields still work).
	Skip func(typ []byte) bool
}

// Read reads an audit log (gzip-compressed or not) with the default limits.
func Read(ctx context.Context, name string, r io.Reader, diag *input.Diagnostics, fn func(Event) error) error {
	return Reader{}.Read(ctx, name, r, diag, fn)
}

// Read reads the audit log r, named name in messages, and calls fn with
// every event once it is complete: an EOE, PROCTITLE or user-space record
// ends it, or a record Window seconds later, or the end of the input.
// Lines that are not audit records are reported to diag with file:line and
// skipped; the rest is kept. It returns fn's error, a read error or ctx's.
func (rd Reader) Read(ctx context.Context, name string, r io.Reader, diag *input.Diagnostics, fn func(Event) error) error {
	br, err := input.Decompressed(name, r, 64<<10)
	if err != nil {
		return err
	}
	a := newAssembler(name, rd.limits(), diag, fn)
	if idle, ok := r.(input.IdleNotifier); ok && rd.FlushIdle > 0 {
		idle.NotifyIdle(rd.FlushIdle, a.flush)
	}
	lr := input.NewLineReader(br, a.lim.MaxLineBytes)
	for n := 0; ; n++ {
		if n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		line, tooLong, err := lr.NextBytes()
		if err == io.EOF {
			return a.flush()
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, lr.Number()+1, err)
		}
		if err := a.line(lr.Number(), line, tooLong); err != nil {
			return err
		}
	}
}

func (rd Reader) limits() Reader {
	if rd.MaxLineBytes <= 0 {
		rd.MaxLineBytes = DefaultMaxLineBytes
	}
	if rd.MaxEventBytes <= 0 {
		rd.MaxEventBytes = DefaultMaxEventBytes
	}
	if rd.MaxOpen <= 0 {
		rd.MaxOpen = DefaultMaxOpen
	}
	return rd
}

// maxFree is how many closed events keep their buffers for new ones: a
// second's worth on a busy host, at most 16 KiB each.
const maxFree = 1024

// eventKey is what joins records into an event: auparse's node, time and
// serial (serials restart at boot; the time tells the boots apart).
type eventKey struct {
	node      string
	sec, nsec int64
	serial    uint64
}

// openEvent is an event still taking records: their lines copied into one
// buffer, fields as offsets into it. Open events are chained in the order
// they began.
type openEvent struct {
	key        eventKey
	line       int
	wanted     bool // a record's type is one Reader.Want accepts
	text       []byte
	records    []recordSpan
	tok        tokenizer
	prev, next *openEvent
}

// recordSpan is a record of an open event.
type recordSpan struct {
	line                   int
	start, end             int32 // the line in the event's text
	body                   int32 // where its fields start in the line
	typ0, typ1             int32
	fields, enriched, fend int32 // fields[fields:enriched] outer, [enriched:fend] ENRICHED
}

// assembler joins records into events.
type assembler struct {
	name  string
	lim   Reader
	diag  *input.Diagnostics
	fn    func(Event) error
	open  map[eventKey]*openEvent
	first *openEvent // oldest open event
	last  *openEvent
	count int
	// minSec is at most the smallest time of the open events: no event can
	// be complete before a record Window seconds later than it.
	minSec  int64
	nodes   map[string]string // interned node names
	free    []*openEvent
	spans   [][]fieldSpan // per record of the event being handed on
	records []Record      // FieldsOnly: the records of the event being handed on
	buf     []byte        // FieldsOnly: the fields' bytes of the event being handed on
	warned  map[string]bool
}

func newAssembler(name string, lim Reader, diag *input.Diagnostics, fn func(Event) error) *assembler {
	return &assembler{name: name, lim: lim, diag: diag, fn: fn, open: map[eventKey]*openEvent{},
		nodes: map[string]string{}, warned: map[string]bool{}}
}

// line takes one line of the input.
func (a *assembler) line(n int, line []byte, tooLong bool) error {
	if tooLong {
		a.diag.Malformed(a.name, n, fmt.Sprintf("line longer than %d bytes skipped", a.lim.MaxLineBytes))
		return nil
	}
	if len(line) == 0 || isBlank(line) {
		return nil
	}
	h, err := parseHeader(line)
	if err != nil {
		a.diag.Malformed(a.name, n, err.Error())
		return nil
	}
	key := eventKey{node: a.node(h.node), sec: h.sec, nsec: h.nsec, serial: h.serial}
	ev := a.open[key]
	if ev == nil {
		// As auparse: only a record that begins an event completes the
		// older ones (a late record of an open event does not).
		if err := a.expire(h.sec); err != nil {
			return err
		}
	}
	if ev != nil && len(ev.text)+len(line) > a.lim.MaxEventBytes {
		a.warn("event-size", "%s:%d: event %d is longer than %d bytes: handed on in parts", a.name, n, h.serial, a.lim.MaxEventBytes)
		if err := a.complete(ev); err != nil {
			return err
		}
		ev = nil
	}
	if ev == nil {
		ev = a.begin(key, n)
	}
	ev.add(n, h, line)
	if !ev.wanted && (a.lim.Want == nil || a.lim.Want(h.typ)) {
		ev.wanted = true
	}
	if endsEvent(h.typ) {
		return a.complete(ev)
	}
	if a.count > a.lim.MaxOpen {
		a.warn("open", "%s:%d: more than %d events open: the oldest are handed on before they are complete", a.name, n, a.lim.MaxOpen)
		return a.complete(a.first)
	}
	return nil
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// warn warns once per kind of trouble.
func (a *assembler) warn(kind, format string, args ...any) {
	if a.warned[kind] {
		return
	}
	a.warned[kind] = true
	a.diag.Warn("", format, args...)
}

// node interns a node name: one string per node, not per record.
func (a *assembler) node(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := a.nodes[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(a.nodes) < maxNodes {
		a.nodes[s] = s
	}
	return s
}

// maxNodes bounds the interned node names (a log has a few; damaged input
// could make every line another).
const maxNodes = 1024

// begin opens a new event.
func (a *assembler) begin(key eventKey, line int) *openEvent {
	var ev *openEvent
	if n := len(a.free); n > 0 {
		ev, a.free = a.free[n-1], a.free[:n-1]
	} else {
		ev = &openEvent{}
	}
	ev.key, ev.line = key, line
	a.open[key] = ev
	if a.last == nil {
		a.first, a.last, a.minSec = ev, ev, key.sec
	} else {
		ev.prev, a.last.next, a.last = a.last, ev, ev
		a.minSec = min(a.minSec, key.sec)
	}
	a.count++
	return ev
}

// add appends a record line to the event; its fields are tokenized when
// the event is complete (and wanted).
func (ev *openEvent) add(n int, h header, line []byte) {
	base := len(ev.text)
	ev.text = append(ev.text, line...)
	typ0 := int32(base + h.typStart)
	ev.records = append(ev.records, recordSpan{line: n, start: int32(base), end: int32(len(ev.text)),
		body: int32(base + h.body), typ0: typ0, typ1: typ0 + int32(len(h.typ))})
}

// tokenize splits every record's fields, warning about a quoted value that
// runs to the end of its line.
func (a *assembler) tokenize(ev *openEvent) {
	for i := range ev.records {
		r := &ev.records[i]
		r.fields = int32(len(ev.tok.fields))
		if a.lim.Skip != nil && a.lim.Skip(ev.text[r.typ0:r.typ1]) {
			r.enriched, r.fend = r.fields, r.fields
			r.body -= r.start
			continue
		}
		ev.tok.body(ev.text[:r.end], int(r.body))
		r.enriched = int32(len(ev.tok.fields))
		for i := int(r.fields); i < len(ev.tok.fields); i++ {
			if ev.tok.fields[i].kind == enrichedField {
				r.enriched = int32(i)
				break
			}
		}
		r.fend = int32(len(ev.tok.fields))
		r.body -= r.start // Record.body is relative to its line
		if ev.tok.unterminated {
			ev.tok.unterminated = false
			a.diag.Warn("", "%s:%d: a quoted value runs to the end of the line (truncated record?): kept as it is", a.name, r.line)
		}
	}
}

// expire hands on the events that a new event at sec completes: those
// Window whole seconds older.
func (a *assembler) expire(sec int64) error {
	if a.first == nil || sec < a.minSec+Window {
		return nil
	}
	a.minSec = sec
	for ev := a.first; ev != nil; {
		next := ev.next
		if ev.key.sec+Window <= sec {
			if err := a.complete(ev); err != nil {
				return err
			}
		} else {
			a.minSec = min(a.minSec, ev.key.sec)
		}
		ev = next
	}
	return nil
}

// flush hands on every open event, at the end of the input.
func (a *assembler) flush() error {
	for a.first != nil {
		if err := a.complete(a.first); err != nil {
			return err
		}
	}
	return nil
}

// complete closes an event and hands it to fn.
func (a *assembler) complete(ev *openEvent) error {
	delete(a.open, ev.key)
	if ev.prev != nil {
		ev.prev.next = ev.next
	} else {
		a.first = ev.next
	}
	if ev.next != nil {
		ev.next.prev = ev.prev
	} else {
		a.last = ev.prev
	}
	a.count--
	wanted := ev.wanted
	var e Event
	if wanted {
		a.tokenize(ev)
		e = a.event(ev)
	} else if a.lim.Dropped != nil {
		*a.lim.Dropped++
	}
	ev.text, ev.records, ev.tok.fields, ev.wanted = ev.text[:0], ev.records[:0], ev.tok.fields[:0], false
	ev.prev, ev.next = nil, nil
	if len(a.free) < maxFree && cap(ev.text) <= 16<<10 {
		a.free = append(a.free, ev)
	}
	if !wanted {
		return nil
	}
	return a.fn(e)
}

// event builds the Event of an open one: its text copied once into a
// string, types and values substrings of it.
func (a *assembler) event(ev *openEvent) Event {
	var s string
	if a.lim.FieldsOnly {
		s = a.fieldsText(ev)
	} else {
		s = string(ev.text)
	}
	k := ev.key
	t := time.Unix(k.sec, k.nsec).UTC()
	var records []Record
	if a.lim.FieldsOnly {
		records = slices.Grow(a.records[:0], len(ev.records))[:len(ev.records)]
		a.records = records
	} else {
		records = make([]Record, len(ev.records))
	}
	types := make([]string, len(ev.records))
	spans := a.spans[:0]
	for i, r := range ev.records {
		typ := s[r.typ0:r.typ1]
		types[i] = typ
		records[i] = Record{Source: a.name, Line: r.line, Node: k.node, Type: typ, Time: t, Serial: k.serial,
			text: s, start: r.start, end: r.end, body: r.body}
		spans = append(spans, ev.tok.fields[r.fields:r.enriched])
	}
	a.spans = spans
	e := Event{Source: a.name, Line: ev.line, Node: k.node, Serial: k.serial, Time: t, Types: types, Records: records}
	e.fill(s, spans, a)
	if a.lim.FieldsOnly {
		e.Records = nil
		clear(records) // the text is the event's, not to be kept here
	}
	return e
}

// fieldsText copies into one string only the record types and the fields
// fill reads, and points the event's spans at it (FieldsOnly): the whole
// text (a kilobyte and more with PATH and PROCTITLE records) is not
// copied. The records' own offsets are left: their Records are not handed on.
func (a *assembler) fieldsText(ev *openEvent) string {
	buf := a.buf[:0]
	for i := range ev.records {
		r := &ev.records[i]
		typ := ev.text[r.typ0:r.typ1]
		n := int32(len(buf))
		buf = append(buf, typ...)
		r.typ0, r.typ1 = n, n+int32(len(typ))
		execve, path := string(typ) == "EXECVE", string(typ) == "PATH"
		for j := r.fields; j < r.enriched; j++ {
			f := &ev.tok.fields[j]
			key := ev.text[f.k0:f.k1]
			if !execve && !(path && string(key) == "name") && !filled(key) {
				*f = fieldSpan{kind: f.kind}
				continue
			}
			d := int32(len(buf)) - f.k0
			buf = append(buf, ev.text[f.k0:f.v1]...)
			f.k0, f.k1, f.v0, f.v1 = f.k0+d, f.k1+d, f.v0+d, f.v1+d
		}
	}
	a.buf = buf
	return string(buf)
}

// filled says Event.slot has a field for key.
func filled(key []byte) bool {
	switch string(key) {
	case "auid", "uid", "euid", "ses", "pid", "ppid", "exe", "comm", "key", "terminal", "tty", "addr",
		"hostname", "acct", "op", "res", "success", "exit", "syscall", "cwd", "cmd", "unit", "proctitle":
		return true
	}
	return false
}

// warnAt warns about line n of the input.
func (a *assembler) warnAt(n int, format string, args ...any) {
	a.diag.Warn("", "%s:%d: %s", a.name, n, fmt.Sprintf(format, args...))
}
