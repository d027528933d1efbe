package linuxaudit

import (
	"bytes"
	"errors"
	"time"

	"github.com/latscope/latscope/input"
)

// Record is one line of audit.log.
type Record struct {
	// Source is the input's name; Line the record's 1-based line number.
	Source string
	Line   int
	// Node is the node= prefix auditd writes with name_format set ("" without).
	Node string
	// Type is the record type as written: "SYSCALL", "USER_START",
	// "UNKNOWN[1329]".
	Type   string
	Time   time.Time // UTC
	Serial uint64

	// The record's line is a substring of its event's text; its fields
	// are tokenized again when asked for: Event already holds the ones
	// the correlation reads, and keeping every pair's offsets would cost
	// more memory than the text.
	text       string
	start, end int32 // the line in text
	body       int32 // where the fields start in the line
}

// Field is one key=value pair of a record.
type Field struct {
	Key, Value string
	// Encoded says Value was written hex-encoded (the kernel's way with
	// values holding spaces, quotes or control bytes) and is decoded here.
	Encoded bool
	// Inner says the pair was inside a user-space record's msg='...'.
	Inner bool
}

// Text returns the record's line as written.
func (r Record) Text() string { return r.text[r.start:r.end] }

// Fields returns the record's key=value pairs in order. A single-quoted
// msg='...' (user-space records) is a field of its own, followed by the
// pairs inside it (Inner). Values are unquoted; hex-encoded ones are
// decoded (Encoded). "(null)", "?" and "(none)" stay as written.
func (r Record) Fields() []Field { return r.fields(outerField, innerField) }

// Enriched returns the fields auditd's ENRICHED log format appends after a
// 0x1D byte (UID="root" AUID="unset" SYSCALL=sendto ...), unquoted.
func (r Record) Enriched() []Field { return r.fields(enrichedField, enrichedField) }

// Get returns the value of the first of Fields named key.
func (r Record) Get(key string) (string, bool) {
	for _, f := range r.Fields() {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

// fields tokenizes the record's line and returns the fields of two kinds.
func (r Record) fields(kind1, kind2 fieldKind) []Field {
	line := r.Text()
	var t tokenizer
	t.body([]byte(line), int(r.body))
	var out []Field
	for _, f := range t.fields {
		if f.kind == kind1 || f.kind == kind2 {
			out = append(out, fieldAt(line, r.Type, f))
		}
	}
	return out
}

// fieldAt makes a Field of a span of text, decoding a hex-encoded value.
func fieldAt(text, typ string, f fieldSpan) Field {
	out := Field{Key: text[f.k0:f.k1], Value: text[f.v0:f.v1], Inner: f.kind == innerField}
	unquoted := f.v0 == f.k1+1
	if unquoted && f.kind != enrichedField && encoded(typ, out.Key) {
		if v, ok := decodeHex(out.Value); ok {
			out.Value, out.Encoded = v, true
		}
	}
	return out
}

// header is what a record line says before its fields.
type header struct {
	node, typ []byte
	typStart  int // offset of typ in the line
	sec, nsec int64
	serial    uint64
	body      int // offset of the fields in the line
}

var (
	errNotRecord = errors.New("not an audit record: no type= at the start")
	errNoStamp   = errors.New("audit record without msg=audit(TIME:SERIAL)")
	errBadStamp  = errors.New("audit record with a damaged msg=audit(TIME:SERIAL)")
)

// parseHeader reads "[node=N ]type=T msg=audit(S.MMM:SERIAL):".
func parseHeader(line []byte) (header, error) {
	var h header
	i := 0
	if bytes.HasPrefix(line, []byte("node=")) {
		end := bytes.IndexByte(line, ' ')
		if end < 0 {
			return h, errNotRecord
		}
		h.node = line[len("node="):end]
		i = skipSpaces(line, end)
	}
	if !bytes.HasPrefix(line[i:], []byte("type=")) {
		return h, errNotRecord
	}
	i += len("type=")
	h.typStart = i
	for i < len(line) && line[i] != ' ' {
		i++
	}
	h.typ = line[h.typStart:i]
	i = skipSpaces(line, i)
	const stamp = "msg=audit("
	if !bytes.HasPrefix(line[i:], []byte(stamp)) {
		return h, errNoStamp
	}
	i += len(stamp)
	end := bytes.IndexByte(line[i:], ')')
	if end < 0 {
		return h, errBadStamp
	}
	if !parseStamp(line[i:i+end], &h) {
		return h, errBadStamp
	}
	i += end + 1
	if i < len(line) && line[i] == ':' {
		i++
	}
	h.body = i
	return h, nil
}

// parseStamp reads "SECONDS.FRACTION:SERIAL".
func parseStamp(b []byte, h *header) bool {
	dot := bytes.IndexByte(b, '.')
	colon := bytes.IndexByte(b, ':')
	if dot < 0 || colon < dot || colon-dot-1 > 9 {
		return false
	}
	sec, ok1 := input.ParseUint(b[:dot])
	frac, ok2 := input.ParseUint(b[dot+1 : colon])
	serial, ok3 := input.ParseUint(b[colon+1:])
	if !ok1 || !ok2 || !ok3 || sec > 1<<40 {
		return false
	}
	for range 9 - (colon - dot - 1) {
		frac *= 10
	}
	h.sec, h.nsec, h.serial = int64(sec), int64(frac), serial
	return true
}

func skipSpaces(b []byte, i int) int {
	for i < len(b) && b[i] == ' ' {
		i++
	}
	return i
}

// fieldKind says where a field stands in its record.
type fieldKind uint8

const (
	outerField fieldKind = iota
	innerField
	enrichedField
)

// fieldSpan is a field as offsets into an event's text.
type fieldSpan struct {
	k0, k1, v0, v1 int32
	kind           fieldKind
}

// enrichmentSep starts the ENRICHED format's translated fields.
const enrichmentSep = 0x1D

// tokenizer splits a record's body into fields; unterminated says a quoted
// value ran to the end of the record (a truncated line).
type tokenizer struct {
	fields       []fieldSpan
	unterminated bool
}

// body tokenizes text[from:], a record's fields, the ENRICHED part last.
func (t *tokenizer) body(text []byte, from int) {
	sep := bytes.IndexByte(text[from:], enrichmentSep)
	if sep < 0 {
		t.pairs(text, from, len(text), outerField)
		return
	}
	t.pairs(text, from, from+sep, outerField)
	t.pairs(text, from+sep+1, len(text), enrichedField)
}

// pairs appends the key=value pairs of text[i:end]; words without "="
// (auditd's prose: "auditd normal halt, sending", "pam:") are skipped.
func (t *tokenizer) pairs(text []byte, i, end int, kind fieldKind) {
	for i < end {
		if text[i] == ' ' {
			i++
			continue
		}
		k0 := i
		for i < end && text[i] != '=' && text[i] != ' ' {
			i++
		}
		if i >= end || text[i] != '=' {
			continue // a bare word
		}
		k1 := i
		i++
		var v0, v1 int
		switch {
		case i < end && text[i] == '"':
			v0, v1, i = t.quoted(text, i+1, end, '"')
		case i < end && text[i] == '\'' && kind == outerField:
			// msg='...' holds the user-space message to the end of the
			// record; quotes inside it are its own.
			v0 = i + 1
			v1 = v0 + bytes.LastIndexByte(text[v0:end], '\'')
			if v1 < v0 {
				v1 = end
				t.unterminated = true
			}
			i = min(v1+1, end)
			t.add(k0, k1, v0, v1, kind)
			t.pairs(text, v0, v1, innerField)
			continue
		case i < end && text[i] == '{' && kind == enrichedField:
			v0 = i
			v1 = i + bytes.IndexByte(text[i:end], '}') + 1
			if v1 <= i {
				v1 = end
			}
			i = v1
		default:
			v0 = i
			if j := bytes.IndexByte(text[i:end], ' '); j >= 0 {
				i += j
			} else {
				i = end
			}
			v1 = i
		}
		t.add(k0, k1, v0, v1, kind)
	}
}

// quoted returns the value after an opening quote up to the closing one.
func (t *tokenizer) quoted(text []byte, v0, end int, quote byte) (int, int, int) {
	j := bytes.IndexByte(text[v0:end], quote)
	if j < 0 {
		t.unterminated = true
		return v0, end, end
	}
	return v0, v0 + j, v0 + j + 1
}

func (t *tokenizer) add(k0, k1, v0, v1 int, kind fieldKind) {
	t.fields = append(t.fields, fieldSpan{int32(k0), int32(k1), int32(v0), int32(v1), kind})
}
