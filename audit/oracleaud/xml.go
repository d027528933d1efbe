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
// the truncation reported once. The decoder cannot find its way back into
// a document after a syntax error, so one ends the file, reported with its
// line; the records before it are kept.
func ReadXML(ctx context.Context, name string, r io.Reader, diag *input.Diagnostics, fn func(Record) error) error {
	warn := input.NewOnceWarnings(diag, name)
	guard := &xmlGuard{r: r, maxRun: maxLineBytes}
	dec := xml.NewDecoder(guard)
	dec.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		warn.Warn("charset", "declared encoding %q read as UTF-8", label)
		return in, nil
	}
	xr := xmlReader{name: name, diag: diag, fn: fn}
	xr.proc, _ = processFromFileName(name)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		tok, err := dec.Token()
		if err != nil {
			if guard.replaced > 0 {
				warn.Warn("utf8", "%d byte(s) that are not UTF-8 replaced by '?'", guard.replaced)
			}
			return xr.end(dec, err, warn)
		}
		if err := xr.token(dec, tok); err != nil {
			return err
		}
	}
}

type xmlReader struct {
	name string
	diag *input.Diagnostics
	fn   func(Record) error
	proc Process

	inAudit, closed bool
	records         int
	// the record being read
	inRecord bool
	recLine  int
	fields   map[string]string
	element  string
	text     strings.Builder
}

func (xr *xmlReader) token(dec *xml.Decoder, tok xml.Token) error {
	switch t := tok.(type) {
	case xml.StartElement:
		switch {
		case t.Name.Local == "AuditRecord":
			xr.inRecord, xr.fields = true, map[string]string{}
			xr.recLine, _ = dec.InputPos()
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

// end handles the decoder's last error: the end of the document, a file
// cut short, or a syntax error.
func (xr *xmlReader) end(dec *xml.Decoder, err error, warn *input.OnceWarnings) error {
	line, _ := dec.InputPos()
	var syntax *xml.SyntaxError
	cut := errors.Is(err, io.EOF) || errors.As(err, &syntax) && syntax.Msg == "unexpected EOF"
	switch {
	case !cut:
		xr.diag.Malformed(xr.name, line, fmt.Sprintf("XML audit file unreadable from here (%v): %d record(s) read before", err, xr.records))
	case xr.inRecord:
		xr.diag.Malformed(xr.name, xr.recLine, "truncated <AuditRecord> at the end of the input: skipped")
		fallthrough
	case xr.inAudit && !xr.closed:
		warn.Warn("unterminated", "no closing </Audit> (the file is still being written or was cut): %d record(s) read", xr.records)
	}
	return nil
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
			if rec.Extra == nil {
				rec.Extra = map[string]string{}
			}
			rec.Extra[k] = v
		}
	}
	if c, ok := rec.Extra["Comment_Text"]; ok {
		rec.ClientAddress = hostOfAddress(c)
	}
	rec.Kind = Classify(rec.Action, rec.ActionNumber)
	return rec
}

// hostOfAddress finds the client's address in an Oracle Net description
// such as "…(ADDRESS=(PROTOCOL=tcp)(HOST=10.1.2.3)(PORT=5040))…", as the
// logon records' Comment_Text and AUTHENTICATION_TYPE write it.
func hostOfAddress(s string) string {
	i := strings.Index(strings.ToUpper(s), "(HOST=")
	if i < 0 {
		return ""
	}
	host, _, _ := strings.Cut(s[i+len("(HOST="):], ")")
	return strings.TrimSpace(host)
}

// xmlGuard stands between the file and the XML decoder: it replaces bytes
// that are not UTF-8 by '?' (the decoder would stop at the first one; one
// byte for one keeps line numbers) and fails on a run of more than maxRun
// bytes without a '<' (a text or tag the decoder would hold whole).
type xmlGuard struct {
	r        io.Reader
	maxRun   int
	run      int
	carry    []byte // an incomplete UTF-8 sequence held for the next read
	replaced int
	eof      bool
}

// errHugeToken is the guard's error for an element text or tag too long.
var errHugeToken = errors.New("an element or its text longer than the reader's bound")

func (g *xmlGuard) Read(p []byte) (int, error) {
	if len(p) <= utf8.UTFMax {
		return 0, io.ErrShortBuffer
	}
	for {
		n, err := g.fill(p)
		if n > 0 || err != nil {
			return n, err
		}
		if g.eof && len(g.carry) == 0 {
			return 0, io.EOF
		}
	}
}

// fill reads once into p, after the bytes carried from the last read, and
// returns the checked bytes ready for the decoder.
func (g *xmlGuard) fill(p []byte) (int, error) {
	n := copy(p, g.carry)
	g.carry = g.carry[:0]
	var err error
	if !g.eof {
		var m int
		m, err = g.r.Read(p[n:])
		n += m
		if err == io.EOF {
			g.eof, err = true, nil
		}
	}
	data := p[:n]
	keep := 0
	if !g.eof {
		keep = incompleteTail(data)
	}
	g.carry = append(g.carry, data[len(data)-keep:]...)
	data = data[:len(data)-keep]
	g.replaced += sanitizeUTF8(data)
	if g.tooLong(data) {
		return 0, errHugeToken
	}
	return len(data), err
}

// tooLong follows the run of bytes since the last '<'.
func (g *xmlGuard) tooLong(data []byte) bool {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '<')
		if i < 0 {
			g.run += len(data)
			break
		}
		if g.run+i > g.maxRun {
			return true
		}
		g.run, data = 0, data[i+1:]
	}
	return g.run > g.maxRun
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
