package authlog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/latscope/latscope/input"
)

// journalEntry holds the fields of one journal entry that a Record keeps.
type journalEntry struct {
	line                            int // first line, 0: no field yet
	realtime, message, pid          string
	syslogPID, identifier, comm     string
	hostname, auditSession, loginID string
}

// set keeps a field's value; it reports false for a field the entry
// already has that starts entries (a new entry without the blank line).
func (e *journalEntry) set(key, value string) bool {
	switch key {
	case "__CURSOR":
		return e.line == 0
	case "__REALTIME_TIMESTAMP":
		if e.realtime != "" {
			return false
		}
		e.realtime = value
	case "MESSAGE":
		e.message = value
	case "_PID":
		e.pid = value
	case "SYSLOG_PID":
		e.syslogPID = value
	case "SYSLOG_IDENTIFIER":
		e.identifier = value
	case "_COMM":
		e.comm = value
	case "_HOSTNAME":
		e.hostname = value
	case "_AUDIT_SESSION":
		e.auditSession = value
	case "_AUDIT_LOGINUID":
		e.loginID = value
	}
	return true
}

// record makes the entry a Record; one without a __REALTIME_TIMESTAMP of
// microseconds is kept without a time, and warned about once.
func (e *journalEntry) record(name string, format Format, warn *input.OnceWarnings) Record {
	rec := Record{Source: name, Line: e.line, Format: format, Host: e.hostname, Program: e.identifier, Message: e.message,
		AuditSession: e.auditSession, LoginUID: e.loginID}
	if rec.Program == "" {
		rec.Program = e.comm
	}
	pid := e.syslogPID
	if pid == "" {
		pid = e.pid
	}
	rec.PID, _ = strconv.Atoi(pid)
	if us, err := strconv.ParseInt(e.realtime, 10, 64); err == nil {
		rec.Time = time.UnixMicro(us).UTC()
	} else {
		warn.Warn("time", "entry of line %d: __REALTIME_TIMESTAMP %q is not microseconds: kept without a time", e.line, clip(e.realtime))
	}
	classify(&rec)
	return rec
}

// exportReader reads `journalctl -o export`: KEY=VALUE lines, a field
// with binary data as KEY, a newline, its length as 64-bit little endian,
// the data and a newline; a blank line after each entry.
type exportReader struct {
	br     *bufio.Reader
	name   string
	maxLen int
	line   int // lines read so far (newlines in binary data count)
	diag   *input.Diagnostics
}

// readExport reads a journal export.
func (rd Reader) readExport(ctx context.Context, name string, r io.Reader, diag *input.Diagnostics, fn func(Record) error) error {
	x := exportReader{br: bufio.NewReaderSize(r, 16<<10), name: name, maxLen: rd.maxLine(), diag: diag}
	warn := input.NewOnceWarnings(diag, name)
	var e journalEntry
	flush := func() error {
		if e.line == 0 {
			return nil
		}
		rec := e.record(name, FormatJournalExport, warn)
		e = journalEntry{}
		return fn(rec)
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		key, value, start, err := x.field()
		if err == io.EOF {
			return flush()
		}
		if err != nil {
			return err
		}
		if key == "" {
			if err := flush(); err != nil { // blank line: the entry ends
				return err
			}
			continue
		}
		if !e.set(key, validText(value, start, warn)) {
			x.diag.Malformed(name, start, fmt.Sprintf("%s of a new entry without a blank line before it: the entry of line %d ends here", key, e.line))
			if err := flush(); err != nil {
				return err
			}
			e.set(key, value)
		}
		if e.line == 0 {
			e.line = start
		}
	}
}

var errSkipped = errors.New("field skipped")

// field reads the next field; key "" is a blank line. A damaged or too
// long field is reported and the next one read.
func (x *exportReader) field() (key, value string, start int, err error) {
	for {
		b, tooLong, err := x.readLine()
		start = x.line
		if err != nil {
			return "", "", start, err
		}
		if tooLong {
			x.diag.Malformed(x.name, start, fmt.Sprintf("field longer than %d bytes: skipped", x.maxLen))
			continue
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return "", "", start, nil
		}
		if k, v, ok := bytes.Cut(b, []byte("=")); ok {
			return string(k), string(v), start, nil
		}
		v, err := x.binary(string(b), start)
		if errors.Is(err, errSkipped) {
			continue
		}
		return string(b), v, start, err
	}
}

// readLine reads a line of at most maxLen bytes (the rest is discarded
// and tooLong set).
func (x *exportReader) readLine() ([]byte, bool, error) {
	var buf []byte
	tooLong := false
	for {
		chunk, err := x.br.ReadSlice('\n')
		if len(buf)+len(chunk) <= x.maxLen+1 {
			buf = append(buf, chunk...)
		} else {
			tooLong = true
		}
		switch {
		case err == nil:
			x.line++
			return bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r")), tooLong, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(buf) > 0:
			x.line++
			return buf, tooLong, nil
		case err == io.EOF:
			return nil, false, io.EOF
		default:
			return nil, false, fmt.Errorf("%s:%d: %w", x.name, x.line+1, err)
		}
	}
}

// binary reads a binary field's length and data after its name's line.
func (x *exportReader) binary(key string, start int) (string, error) {
	var size [8]byte
	if _, err := io.ReadFull(x.br, size[:]); err != nil {
		x.diag.Malformed(x.name, start, fmt.Sprintf("field %q has neither '=' nor a binary length: input ends", clip(key)))
		return "", io.EOF
	}
	n := binary.LittleEndian.Uint64(size[:])
	if n > uint64(x.maxLen) {
		x.diag.Malformed(x.name, start, fmt.Sprintf("binary field %q of %d bytes, longer than %d: skipped", clip(key), n, x.maxLen))
		return "", x.skip(n)
	}
	data := make([]byte, n+1)
	if _, err := io.ReadFull(x.br, data); err != nil {
		x.diag.Malformed(x.name, start, fmt.Sprintf("binary field %q truncated: input ends", clip(key)))
		return "", io.EOF
	}
	x.line += bytes.Count(data[:n], []byte("\n"))
	if data[n] != '\n' {
		x.diag.Malformed(x.name, start, fmt.Sprintf("binary field %q not followed by a newline: the rest of its line skipped", clip(key)))
		x.readLine()
		return "", errSkipped
	}
	x.line++
	return string(data[:n]), nil
}

// skip discards a too long binary field and its newline.
func (x *exportReader) skip(n uint64) error {
	for n > 0 {
		chunk := min(n, 1<<16)
		data := make([]byte, chunk)
		if _, err := io.ReadFull(x.br, data); err != nil {
			return io.EOF
		}
		x.line += bytes.Count(data, []byte("\n"))
		n -= chunk
	}
	x.readLine()
	return errSkipped
}

// readJSON reads `journalctl -o json`: one object a line, values strings,
// arrays of byte values (data that is not UTF-8) or arrays of strings (a
// field given more than once: the first kept).
func (rd Reader) readJSON(ctx context.Context, name string, r io.Reader, diag *input.Diagnostics, fn func(Record) error) error {
	warn := input.NewOnceWarnings(diag, name)
	return rd.eachLine(ctx, name, r, diag, func(n int, text string) error {
		var fields jsonEntry
		if err := json.Unmarshal([]byte(text), &fields); err != nil {
			diag.Malformed(name, n, fmt.Sprintf("not a journal JSON object (%v): skipped", err))
			return nil
		}
		value := func(raw json.RawMessage) string { return validText(jsonValue(raw), n, warn) }
		e := journalEntry{line: n, realtime: value(fields.Realtime), message: value(fields.Message), pid: value(fields.PID),
			syslogPID: value(fields.SyslogPID), identifier: value(fields.Identifier), comm: value(fields.Comm),
			hostname: value(fields.Hostname), auditSession: value(fields.AuditSession), loginID: value(fields.LoginUID)}
		return fn(e.record(name, FormatJournalJSON, warn))
	})
}

// jsonEntry holds the fields a Record keeps (decoding only these is four
// times faster than a map of every field).
type jsonEntry struct {
	Realtime     json.RawMessage `json:"__REALTIME_TIMESTAMP"`
	Message      json.RawMessage `json:"MESSAGE"`
	PID          json.RawMessage `json:"_PID"`
	SyslogPID    json.RawMessage `json:"SYSLOG_PID"`
	Identifier   json.RawMessage `json:"SYSLOG_IDENTIFIER"`
	Comm         json.RawMessage `json:"_COMM"`
	Hostname     json.RawMessage `json:"_HOSTNAME"`
	AuditSession json.RawMessage `json:"_AUDIT_SESSION"`
	LoginUID     json.RawMessage `json:"_AUDIT_LOGINUID"`
}

// jsonValue is a journal JSON field's value as text ("" when absent).
func jsonValue(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var bytesValue []byte
	var numbers []int
	if json.Unmarshal(raw, &numbers) == nil {
		for _, b := range numbers {
			bytesValue = append(bytesValue, byte(b))
		}
		return string(bytesValue)
	}
	var many []json.RawMessage
	if json.Unmarshal(raw, &many) == nil && len(many) > 0 {
		return jsonValue(many[0])
	}
	return ""
}
