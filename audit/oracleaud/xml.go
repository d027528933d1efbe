package oracleaud

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/latscope/latscope/input"
)

// DetectXML recognises an XML audit file: an XML document whose prefix
// holds the <Audit> root of Oracle's audit-trail schema or an
// <AuditRecord>.
func DetectXML(prefix []byte) input.Verdict {
	p := bytes.TrimLeft(bytes.TrimPrefix(prefix, []byte("\xef\xbb\xbf")), " \t\r\n")
	switch {
	case len(p) == 0:
		return input.NeedMore
	case p[0] != '<':
		return input.No
	case bytes.Contains(p, []byte("dbserver_audittrail")), bytes.Contains(p, []byte("<AuditRecord>")),
		bytes.Contains(p, []byte("<Audit>")):
		return input.Yes
	case len(prefix) >= 8<<10:
		return input.No
	}
	return input.NeedMore
}

// ReadXML reads an XML audit file (AUDIT_TRAIL=XML or XML,EXTENDED) with
// encoding/xml's streaming decoder, one <AuditRecord> at a time. A file
// still being written has no closing </Audit>: what is there is read and
// the truncation reported once. After a syntax error (reported with its
// line) reading goes on at the next <AuditRecord>, with a new decoder.
func ReadXML(ctx context.Context, name string, r io.Reader, diag *input.Diagnostics, fn func(Record) error) error {
	xr := xmlReader{name: name, diag: diag, warn: input.NewOnceWarnings(diag, name), fn: fn}
	xr.proc, _ = processFromFileName(name)
	guard := newXMLGuard(r, maxLineBytes)
	defer func() {
		if guard.replaced > 0 {
			xr.warn.Warn("utf8", "%d byte(s) that are not UTF-8 replaced by '?'", guard.replaced)
		}
	}()
	xr.newDecoder(guard)
	for {
		err := xr.decode(ctx)
		if err == nil || ctx.Err() != nil || !xr.resumable(err) {
			return err
		}
		xr.inRecord, xr.element = false, ""
		if !guard.skipTo(auditRecordTag) {
			return nil
		}
		// The decoder starts again inside a document of its own; the
		// <Audit> given before the record matches the file's </Audit>.
		xr.lineOffset = guard.lines
		guard.pending = []byte("<Audit>" + auditRecordTag)
		xr.newDecoder(guard)
	}
}

const auditRecordTag = "<AuditRecord>"

type xmlReader struct {
	name string
	diag *input.Diagnostics
	warn *input.OnceWarnings
	fn   func(Record) error
	proc Process

	dec *xml.Decoder
	// lineOffset is the file line before the decoder's first: a decoder
	// started again after an error counts from 1.
	lineOffset int

	inAudit, closed bool
	records         int
	// the record being read
	inRecord bool
	recLine  int
	fields   map[string]string
	element  string
	text     strings.Builder
}

func (xr *xmlReader) newDecoder(guard *xmlGuard) {
	xr.dec = xml.NewDecoder(guard)
	xr.dec.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		xr.warn.Warn("charset", "declared encoding %q read as UTF-8", label)
		return in, nil
	}
}

// line returns the file line the decoder is at.
func (xr *xmlReader) line() int {
	n, _ := xr.dec.InputPos()
	return xr.lineOffset + n
}

// decode reads tokens until the decoder fails; it returns nil at the end
// of the input, the caller's or the context's error, or the decoder's.
func (xr *xmlReader) decode(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		tok, err := xr.dec.Token()
		if err != nil {
			return xr.decoderError(err)
		}
		if err := xr.token(tok); err != nil {
			return &callerError{err}
		}
	}
}

// callerError carries the caller's error past decoder errors.
type callerError struct{ err error }

func (e *callerError) Error() string { return e.err.Error() }
func (e *callerError) Unwrap() error { return e.err }

// resumable says whether reading can go on after err: not after the
// caller's error.
func (xr *xmlReader) resumable(err error) bool {
	var ce *callerError
	return !errors.As(err, &ce)
}

func (xr *xmlReader) token(tok xml.Token) error {
	switch t := tok.(type) {
	case xml.StartElement:
		switch {
		case t.Name.Local == "AuditRecord":
			xr.inRecord, xr.fields = true, map[string]string{}
			xr.recLine = xr.line()
		case t.Name.Local == "Audit" && !xr.inRecord:
			xr.inAudit = true
		default:
			xr.element = t.Name.Local
			xr.text.Reset()
		}
	case xml.CharData:
		if xr.element != "" {
			xr.text.Write(t)
		}
	case xml.EndElement:
		switch {
		case t.Name.Local == "AuditRecord" && xr.inRecord:
			xr.inRecord = false
			xr.records++
			return xr.fn(xr.record())
		case t.Name.Local == "Audit" && !xr.inRecord:
			xr.closed = true
		case t.Name.Local == xr.element:
			if xr.inRecord {
				xr.fields[xr.element] = xr.text.String()
			} else if xr.element == "Version" {
				xr.proc.Version = strings.TrimSpace(xr.text.String())
			}
			xr.element = ""
		}
	}
	return nil
}

// decoderError handles the decoder's error: the end of the document or a
// file cut short end the reading (nil); a syntax error is reported and
// returned, to be read past.
func (xr *xmlReader) decoderError(err error) error {
	var syntax *xml.SyntaxError
	cut := errors.Is(err, io.EOF) || errors.As(err, &syntax) && syntax.Msg == "unexpected EOF"
	switch {
	case !cut:
		lost := ""
		if xr.inRecord {
			lost = fmt.Sprintf(", the <AuditRecord> of line %d skipped", xr.recLine)
		}
		xr.diag.Malformed(xr.name, xr.line(), fmt.Sprintf("bad XML (%s)%s: reading goes on at the next <AuditRecord>", xmlReason(err), lost))
		return err
	case xr.inRecord:
		xr.diag.Malformed(xr.name, xr.recLine, "truncated <AuditRecord> at the end of the input: skipped")
		fallthrough
	case xr.inAudit && !xr.closed:
		xr.warn.Warn("unterminated", "no closing </Audit> (the file is still being written or was cut): %d record(s) read", xr.records)
	}
	return nil
}

// xmlReason is a decoder error without its own (decoder-relative) line.
func xmlReason(err error) string {
	var syntax *xml.SyntaxError
	if errors.As(err, &syntax) {
		return syntax.Msg
	}
	return err.Error()
}

// record maps an <AuditRecord>'s elements onto a Record.
func (xr *xmlReader) record() Record {
	rec := Record{Source: xr.name, Line: xr.recLine, Format: FormatXML, Process: xr.proc}
	for k, v := range xr.fields {
		switch k {
		case "Extended_Timestamp":
			t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(v))
			if err != nil {
				xr.diag.Malformed(xr.name, xr.recLine, fmt.Sprintf("Extended_Timestamp %q is not a time (record kept)", clip(v)))
			}
			rec.Time = t
		case "Session_Id":
			rec.SessionID = v
		case "DB_User":
			rec.DBUser = v
		case "OS_User":
			rec.ClientUser = v
		case "Userhost":
			rec.Userhost, rec.Process.Host = v, v
		case "OS_Process":
			if pid := atoi(v); pid > 0 {
				rec.Process.PID = pid
			}
		case "Terminal":
			rec.ClientTerminal = v
		case "Action":
			rec.ActionNumber = atoi(v)
		case "Returncode":
			rec.Status = v
		case "OSPrivilege":
			rec.Privilege = v
		case "DBID":
			rec.DBID = v
		case "Sql_Text":
			rec.Action, rec.SQLText = v, v
		default:
			rec.setExtra(k, v)
		}
	}
	if c, ok := rec.Extra["Comment_Text"]; ok {
		rec.ClientAddress = hostOfAddress(c)
	}
	rec.Kind = Classify(rec.Action, rec.ActionNumber)
	rec.inUTC()
	return rec
}

// hostOfAddress finds the client's address in an Oracle Net description
// such as "…(ADDRESS=(PROTOCOL=tcp)(HOST=10.1.2.3)(PORT=5040))…", as the
// logon records' Comment_Text and AUTHENTICATION_TYPE write it.
func hostOfAddress(s string) string {
	i := strings.Index(s, "(HOST=")
	if i < 0 {
		if i = strings.Index(s, "(host="); i < 0 {
			return ""
		}
	}
	host, _, _ := strings.Cut(s[i+len("(HOST="):], ")")
	return strings.TrimSpace(host)
}

// xmlGuard stands between the file and the XML decoder, which reads it
// byte by byte (an io.ByteReader is not buffered again, so after an error
// the guard is exactly where the decoder stopped). It replaces bytes that
// are not UTF-8 by '?' (the decoder would stop at the first one; one byte
// for one keeps line numbers), fails on a run of more than maxRun bytes
// without a '<' (a text or tag the decoder would hold whole), and counts
// lines.
type xmlGuard struct {
	r      io.Reader
	buf    []byte
	pos    int
	err    error
	maxRun int
	run    int
	// tail is an incomplete UTF-8 sequence held for the next chunk.
	tail []byte
	// pending is read before the file's bytes (a restart's opening tags).
	pending  []byte
	lines    int
	replaced int
}

func newXMLGuard(r io.Reader, maxRun int) *xmlGuard {
	return &xmlGuard{r: r, buf: make([]byte, 0, 32<<10), maxRun: maxRun}
}

// errHugeToken is the guard's error for an element text or tag too long.
var errHugeToken = errors.New("an element or its text longer than the reader's bound")

func (g *xmlGuard) ReadByte() (byte, error) {
	if len(g.pending) > 0 {
		c := g.pending[0]
		g.pending = g.pending[1:]
		return c, nil
	}
	c, err := g.next()
	if err != nil {
		return 0, err
	}
	if c == '<' {
		g.run = 0
	} else if g.run++; g.run > g.maxRun {
		g.run = 0
		return 0, errHugeToken
	}
	return c, nil
}

// next returns the file's next byte, counting lines.
func (g *xmlGuard) next() (byte, error) {
	if g.pos == len(g.buf) {
		if err := g.refill(); err != nil {
			return 0, err
		}
	}
	c := g.buf[g.pos]
	g.pos++
	if c == '\n' {
		g.lines++
	}
	return c, nil
}

func (g *xmlGuard) Read(p []byte) (int, error) {
	for i := range p {
		c, err := g.ReadByte()
		if err != nil {
			return i, err
		}
		p[i] = c
	}
	return len(p), nil
}

// refill reads the next chunk, holding an incomplete UTF-8 sequence at
// its end back for the read after, and replaces what is not UTF-8.
func (g *xmlGuard) refill() error {
	g.buf, g.pos = g.buf[:copy(g.buf[:cap(g.buf)], g.tail)], 0
	g.tail = g.tail[:0]
	for {
		if g.err != nil {
			if len(g.buf) == 0 {
				return g.err
			}
			g.replaced += sanitizeUTF8(g.buf)
			return nil
		}
		n, err := g.r.Read(g.buf[len(g.buf):cap(g.buf)])
		g.buf, g.err = g.buf[:len(g.buf)+n], err
		keep := 0
		if err == nil {
			keep = incompleteTail(g.buf)
		}
		if ready := len(g.buf) - keep; ready > 0 {
			g.tail = append(g.tail, g.buf[ready:]...)
			g.buf = g.buf[:ready]
			g.replaced += sanitizeUTF8(g.buf)
			return nil
		}
	}
}

// skipTo reads past the file's bytes up to and including marker, and says
// whether it was found.
func (g *xmlGuard) skipTo(marker string) bool {
	g.pending, g.run = nil, 0
	for matched := 0; matched < len(marker); {
		c, err := g.next()
		if err != nil {
			return false
		}
		switch {
		case c == marker[matched]:
			matched++
		case c == marker[0]:
			matched = 1
		default:
			matched = 0
		}
	}
	return true
}

// incompleteTail returns how many bytes at the end of data begin a UTF-8
// sequence that the next read may complete.
func incompleteTail(data []byte) int {
	for k := 1; k < utf8.UTFMax && k <= len(data); k++ {
		c := data[len(data)-k]
		if c < 0x80 {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(data[len(data)-k:]) {
				return 0
			}
			return k
		}
	}
	return 0
}

// sanitizeUTF8 replaces, in place, each byte that is not part of valid
// UTF-8 by '?', and returns how many it replaced.
func sanitizeUTF8(data []byte) int {
	replaced := 0
	for i := 0; i < len(data); {
		if data[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			data[i] = '?'
			replaced++
		}
		i += size
	}
	return replaced
}
