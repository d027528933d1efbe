package oracleaud

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/input"
)

// Bounds on what one text record may hold; beyond them it is reported and
// skipped, so a damaged file cannot make the reader hold it whole.
const (
	maxLineBytes   = 1 << 20
	maxRecordBytes = 4 << 20
)

// DetectText recognises a text `.aud` file by its first line: the
// header's "Audit file", or (records cut out of a file) a timestamp line
// followed by LENGTH.
func DetectText(prefix []byte) input.Verdict {
	scan := input.LineScan{SkipBOM: true}
	stamp := false
	for l := range scan.Lines(prefix) {
		switch {
		case stamp:
			if bytes.HasPrefix(l.Text, []byte("LENGTH")) {
				return input.Yes
			}
			return input.No
		case l.Blank():
		case bytes.HasPrefix(l.Text, []byte("Audit file ")):
			return input.Yes
		default:
			if _, _, stamp = parseStamp(string(l.Text)); !stamp {
				return input.No
			}
		}
	}
	return scan.Undecided(prefix)
}

// ReadText reads a traditional text audit file: a header naming the
// instance and process, then records that each start with a timestamp
// line and a LENGTH line, followed by `NAME :[n] 'value'` fields, one a
// line (values may span lines: n is their length in bytes), or all on one
// line in the OS-audit layout (`LENGTH: "385"`, `SESSIONID:[5] "…" …`).
// Files concatenated with cat read too: each "Audit file" header starts
// a new process.
func ReadText(ctx context.Context, name string, r io.Reader, diag *input.Diagnostics, fn func(Record) error) error {
	tr := &textReader{name: name, diag: diag, warn: input.NewOnceWarnings(diag, name), fn: fn}
	tr.proc, _ = processFromFileName(name)
	if err := input.EachLine(ctx, name, r, maxLineBytes, tr.line); err != nil {
		return err
	}
	return tr.end()
}

// textReader is the state of one text file being read.
type textReader struct {
	name string
	diag *input.Diagnostics
	warn *input.OnceWarnings
	fn   func(Record) error

	proc     Process // of the last header (or the file name)
	inHeader bool
	// stamp is a timestamp line held back until the next line says
	// whether it starts a record (LENGTH follows) or is text.
	stamp *stampLine
	rec   *textRecord
	// the storage stamp and rec point to, reused from record to record
	stampBuf stampLine
	recBuf   textRecord
	// the last timestamp parsed: records of one second share it
	lastStamp stampLine
}

type stampLine struct {
	n     int
	text  string
	t     time.Time
	zoned bool
}

// textRecord is a record being collected: its lines after LENGTH.
type textRecord struct {
	line    int // of the timestamp
	t       time.Time
	length  int
	body    []byte
	bodyAt  int // line number of body's first line
	skipped bool
}

func (tr *textReader) line(n int, text string, tooLong bool) error {
	if tr.stamp != nil {
		s := tr.stamp
		tr.stamp = nil
		if strings.HasPrefix(text, "LENGTH") && !tooLong {
			return tr.startRecord(s, n, text)
		}
		tr.content(s.n, s.text)
	}
	if tooLong {
		tr.diag.Malformed(tr.name, n, fmt.Sprintf("line longer than %d bytes", maxLineBytes)+tr.skipReason())
		if tr.rec != nil {
			tr.rec.skipped = true
		}
		return nil
	}
	if tr.isStamp(n, text) {
		return nil
	}
	if path, ok := strings.CutPrefix(text, "Audit file "); ok {
		if err := tr.flush(); err != nil {
			return err
		}
		path, _ = validText(path)
		tr.proc = Process{AuditFile: strings.TrimSpace(path)}
		if p, ok := processFromFileName(tr.proc.AuditFile); ok {
			tr.proc.Instance, tr.proc.Name, tr.proc.PID = p.Instance, p.Name, p.PID
		} else if p, ok := processFromFileName(tr.name); ok {
			tr.proc.Instance, tr.proc.Name, tr.proc.PID = p.Instance, p.Name, p.PID
		}
		tr.inHeader = true
		return nil
	}
	tr.content(n, text)
	return nil
}

// isStamp holds a timestamp line back (tr.stamp) and says whether text
// was one.
func (tr *textReader) isStamp(n int, text string) bool {
	if text != tr.lastStamp.text || text == "" {
		t, zoned, ok := parseStamp(text)
		if !ok {
			return false
		}
		tr.lastStamp = stampLine{text: text, t: t, zoned: zoned}
	}
	tr.stampBuf = tr.lastStamp
	tr.stampBuf.n = n
	tr.stamp = &tr.stampBuf
	return true
}

// skipReason says what a bad line costs: its record, or nothing more.
func (tr *textReader) skipReason() string {
	if tr.rec != nil {
		return fmt.Sprintf(": record of line %d skipped", tr.rec.line)
	}
	return ""
}

// content takes a line that is neither a record start nor a header start.
func (tr *textReader) content(n int, text string) {
	switch {
	case tr.rec != nil:
		tr.rec.add(tr, n, text)
	case tr.inHeader:
		tr.headerLine(text)
	case strings.TrimSpace(text) != "":
		tr.diag.Malformed(tr.name, n, fmt.Sprintf("not in an audit record nor a header: %q", clip(text)))
	}
}

func (r *textRecord) add(tr *textReader, n int, text string) {
	if r.skipped {
		return
	}
	if len(r.body)+len(text)+1 > maxRecordBytes {
		tr.diag.Malformed(tr.name, r.line, fmt.Sprintf("record longer than %d bytes: skipped", maxRecordBytes))
		r.skipped = true
		r.body = r.body[:0]
		return
	}
	if r.bodyAt == 0 {
		r.bodyAt = n
	} else {
		r.body = append(r.body, '\n')
	}
	r.body = append(r.body, text...)
}

func (tr *textReader) startRecord(s *stampLine, n int, lengthLine string) error {
	if err := tr.flush(); err != nil {
		return err
	}
	tr.inHeader = false
	if !s.zoned {
		tr.warn.Warn("zone", "timestamps without a zone offset (line %d): read as UTC", s.n)
	}
	length, ok := parseLength(lengthLine)
	if !ok {
		tr.diag.Malformed(tr.name, n, fmt.Sprintf("LENGTH line without a number: %q (record kept)", clip(lengthLine)))
	}
	tr.recBuf = textRecord{line: s.n, t: s.t, length: length, body: tr.recBuf.body[:0]}
	tr.rec = &tr.recBuf
	return nil
}

// end finishes the file: a timestamp line with nothing after it is a
// record cut off while being written.
func (tr *textReader) end() error {
	if err := tr.flush(); err != nil {
		return err
	}
	if tr.stamp != nil {
		tr.diag.Malformed(tr.name, tr.stamp.n, "truncated record: a timestamp line with no LENGTH after it at the end of the input")
	}
	return nil
}

// flush parses and hands on the record being collected, if any.
func (tr *textReader) flush() error {
	r := tr.rec
	tr.rec = nil
	if r == nil || r.skipped {
		return nil
	}
	rec := Record{Source: tr.name, Line: r.line, Format: FormatText, Time: r.t, Process: tr.proc, Length: r.length}
	body := string(bytes.TrimRight(r.body, " \t\r\n"))
	if body == "" {
		tr.diag.Malformed(tr.name, r.line, "truncated record: no fields after LENGTH")
		return nil
	}
	setFields(&rec, body, r.bodyAt, tr.name, tr.diag, tr.warn)
	rec.inUTC()
	return tr.fn(rec)
}

// setFields reads a record's `NAME :[n] 'value'` fields from body, whose
// first line is line firstLine of the input, reports what it cannot read
// and classifies the record.
func setFields(rec *Record, body string, firstLine int, name string, diag *input.Diagnostics, warn *input.OnceWarnings) {
	fp := fieldParser{text: body, firstLine: firstLine}
	for {
		f, ok := fp.next()
		if !ok {
			break
		}
		setField(rec, f, warn)
	}
	for _, p := range fp.problems {
		diag.Malformed(name, p.line, p.reason)
	}
	if fp.lengthMismatches > 0 {
		warn.Warn("length", "field lengths [n] that do not match their values (first in the record of line %d): read to the closing quote", rec.Line)
	}
	rec.Kind = Classify(rec.Action, rec.ActionNumber)
}

// setField stores a field where the Record keeps it.
func setField(rec *Record, f field, warn *input.OnceWarnings) {
	v := recordText(f.value, rec.Line, warn)
	switch f.name {
	case "ACTION":
		// The OS-audit layout's ACTION is the action code.
		if allDigits(v) {
			rec.ActionNumber = atoi(v)
		} else {
			rec.Action = v
		}
	case "ACTION NUMBER":
		rec.ActionNumber = atoi(v)
	case "DATABASE USER", "USERID":
		rec.DBUser = v
	case "PRIVILEGE":
		rec.Privilege = v
	case "CLIENT USER", "OS$USERID":
		rec.ClientUser = v
	case "CLIENT TERMINAL", "TERMINAL":
		rec.ClientTerminal = v
	case "STATUS", "RETURNCODE":
		rec.Status = v
	case "DBID":
		rec.DBID = v
	case "SESSIONID":
		rec.SessionID = v
	case "USERHOST":
		rec.Userhost = v
	case "CLIENT ADDRESS":
		rec.ClientAddress = v
	default:
		rec.setExtra(f.name, v)
	}
}

// headerLine reads the lines between "Audit file" and the first record.
func (tr *textReader) headerLine(text string) {
	text, _ = validText(text)
	key, value, ok := strings.Cut(text, ":")
	if !ok {
		key, value, ok = strings.Cut(text, " = ")
	}
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	switch {
	case strings.HasPrefix(text, "Oracle Database ") && tr.proc.Version == "":
		if _, rel, found := strings.Cut(text, " Release "); found {
			tr.proc.Version, _, _ = strings.Cut(rel, " ")
		}
	case strings.HasPrefix(text, "Version ") && !ok:
		tr.proc.Version = strings.TrimSpace(strings.TrimPrefix(text, "Version "))
	case !ok:
	case key == "Node name":
		tr.proc.Host = value
	case key == "Instance name":
		tr.proc.Instance = value
	case key == "Oracle process number":
		tr.proc.OracleProcess = atoi(value)
	case key == "Unix process pid" || key == "Windows thread id":
		tr.processLine(value)
	}
}

// processLine reads "9545, image: oracle@testlab.local (TNS V1-V3)".
func (tr *textReader) processLine(value string) {
	pid, image, _ := strings.Cut(value, ",")
	if n := atoi(pid); n > 0 {
		tr.proc.PID = n
	}
	image = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(image), "image:"))
	tr.proc.Image = image
	if tr.proc.Host == "" {
		if _, host, ok := strings.Cut(image, "@"); ok {
			tr.proc.Host, _, _ = strings.Cut(host, " ")
		}
	}
	if tr.proc.Name == "" {
		tr.proc.Name = processNameFromImage(image)
	}
}

// processNameFromImage reads the process kind from an image such as
// "oracle@host (M000)"; a dedicated server's "(TNS V1-V3)" is "ora".
func processNameFromImage(image string) string {
	open := strings.LastIndexByte(image, '(')
	if open < 0 || !strings.HasSuffix(image, ")") {
		return ""
	}
	inner := image[open+1 : len(image)-1]
	if strings.HasPrefix(inner, "TNS ") {
		return "ora"
	}
	if strings.ContainsAny(inner, " \t") {
		return ""
	}
	return strings.ToLower(inner)
}

// Layouts of a record's timestamp line: 10g–19c write the zone offset,
// some older files none.
const (
	stampLayout       = "Mon Jan _2 15:04:05 2006 -07:00"
	stampLayoutNoZone = "Mon Jan _2 15:04:05 2006"
)

// parseStamp reads a record's timestamp line ("Wed Oct  7 13:05:33 2020
// -04:00"); zoned says the line gave the zone offset.
func parseStamp(line string) (t time.Time, zoned, ok bool) {
	if len(line) < len(stampLayoutNoZone) || line[3] != ' ' || line[7] != ' ' || line[13] != ':' || line[16] != ':' || line[19] != ' ' {
		return time.Time{}, false, false
	}
	line = strings.TrimRight(line, " \t")
	if len(line) == len(stampLayoutNoZone) {
		t, err := time.Parse(stampLayoutNoZone, line)
		return t, false, err == nil
	}
	t, err := time.Parse(stampLayout, line)
	return t, true, err == nil
}

// parseLength reads `LENGTH : '245'` or `LENGTH: "385"`.
func parseLength(line string) (int, bool) {
	v := strings.TrimSpace(strings.TrimPrefix(line, "LENGTH"))
	v, ok := strings.CutPrefix(v, ":")
	if !ok {
		return 0, false
	}
	v = strings.Trim(strings.TrimSpace(v), `'"`)
	n, err := strconv.Atoi(v)
	return n, err == nil
}

// clip shortens a line quoted in a message.
func clip(s string) string {
	const most = 80
	if len(s) <= most {
		return s
	}
	return s[:most] + "…"
}
