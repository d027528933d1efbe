// Package oracleaud reads Oracle database audit trails as a DBA finds them
// on a host or copied off it: the traditional text `.aud` files
// (AUDIT_TRAIL=OS and the mandatory SYS audit), the same records sent to
// syslog (AUDIT_SYSLOG_LEVEL), the XML audit files (AUDIT_TRAIL=XML) and a
// CSV export of UNIFIED_AUDIT_TRAIL. Every format
// streams into the same Record, whose Kind says whether it started, stopped,
// mounted or opened the database or connected to it.
//
// Readers are memory bounded: they never hold more than one record, a huge
// line or record is reported with file:line and skipped, and bad input is
// reported through input.Diagnostics while the rest is kept.
package oracleaud

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/latscope/latscope/input"
)

// Format names one of the audit trail formats this package reads.
type Format string

// The formats, as `--input-format` would name them.
const (
	FormatText       Format = "oracle-aud"
	FormatXML        Format = "oracle-aud-xml"
	FormatUnifiedCSV Format = "oracle-unified-csv"
	FormatSyslog     Format = "oracle-audit-syslog"
)

// Process is the database process that wrote a record: from the header of
// a text file, the name of the file (`<instance>_<process>_<pid>_<stamp>.aud`)
// or, in XML and unified exports, the record itself.
type Process struct {
	// AuditFile is the path the header names (text files only).
	AuditFile string
	Instance  string
	// Host is the header's Node name (or the host of the image's
	// `oracle@host`); for XML and unified records the USERHOST.
	Host string
	// PID is the operating-system process id (0: unknown).
	PID int
	// Name is the kind of process, lower case as in the file name:
	// "ora" for a dedicated server, "j002", "m000", ...
	Name string
	// Image is the header's image, e.g. "oracle@testlab.local (TNS V1-V3)".
	Image string
	// OracleProcess is the header's "Oracle process number".
	OracleProcess int
	// Version is the database version the header gives ("19.3.0.0.0").
	Version string
}

// Record is one audit record.
type Record struct {
	// Source is the input's name and Line the 1-based line the record
	// starts on (its timestamp line, <AuditRecord> or CSV row).
	Source string
	Line   int
	Format Format
	// Time is when the record was written, in UTC, read with the zone
	// the file gives: text files the offset after the year, XML and
	// unified exports UTC, syslog the head's offset.
	Time time.Time
	// ZoneOffset is that zone's offset from UTC in seconds (0 where the
	// file gives none), for showing the time as the host wrote it.
	ZoneOffset int
	Process    Process

	// Action is the audited action as text: the ACTION field of a text
	// file (a statement, or CONNECT, STARTUP, SHUTDOWN...), an XML
	// record's Sql_Text, a unified record's ACTION_NAME.
	Action string
	// ActionNumber is the audit action code (ACTION NUMBER, XML Action),
	// 0 when the record has none.
	ActionNumber int
	// Kind classifies the action for correlation.
	Kind ActionKind

	DBUser         string // DATABASE USER, DB_User, DBUSERNAME
	Privilege      string // PRIVILEGE, OSPrivilege, SYSTEM_PRIVILEGE_USED
	ClientUser     string // CLIENT USER, OS_User, OS_USERNAME: the OS user
	ClientTerminal string // CLIENT TERMINAL, Terminal, TERMINAL
	Status         string // STATUS, Returncode, RETURN_CODE: "0" is success
	DBID           string
	SessionID      string // SESSIONID, Session_Id
	Userhost       string
	ClientAddress  string // CLIENT ADDRESS; unified: the HOST of AUTHENTICATION_TYPE
	// SQLText is the statement of XML and unified records (text files keep
	// it in Action).
	SQLText string

	// Length is a text record's LENGTH as written (0: none).
	Length int
	// Extra holds the record's other fields by the name the file gives.
	Extra map[string]string
}

// ActionKind classifies what a record did to the database.
type ActionKind string

// The kinds the correlation looks for; every other action is KindOther.
const (
	KindStartup    ActionKind = "STARTUP"
	KindShutdown   ActionKind = "SHUTDOWN"
	KindConnect    ActionKind = "CONNECT"
	KindAlterMount ActionKind = "ALTER DATABASE MOUNT"
	KindAlterOpen  ActionKind = "ALTER DATABASE OPEN"
	KindOther      ActionKind = "OTHER"
)

// Audit action codes (AUDIT_ACTIONS) the classification uses.
const (
	actionAlterDatabase = 35
	actionLogon         = 100
)

// Classify says what an action did. text is the action's text (ACTION,
// ACTION_NAME, or the SQL text), number its action code (0: none).
func Classify(text string, number int) ActionKind {
	text = strings.TrimSpace(text)
	switch {
	case strings.EqualFold(text, "STARTUP"):
		return KindStartup
	case strings.EqualFold(text, "SHUTDOWN"):
		return KindShutdown
	case strings.EqualFold(text, "CONNECT"), strings.EqualFold(text, "LOGON"), text == "" && number == actionLogon:
		return KindConnect
	case len(text) > len("ALTER") && strings.EqualFold(text[:len("ALTER")], "ALTER"):
		if number != 0 && number != actionAlterDatabase {
			return KindOther
		}
		return alterDatabaseKind(text)
	}
	return KindOther
}

// alterDatabaseKind looks for MOUNT or OPEN as the clause of an ALTER
// DATABASE, after an optional database name ("ALTER DATABASE orcl OPEN").
// Only the statement's first words are looked at.
func alterDatabaseKind(text string) ActionKind {
	words := strings.Fields(strings.ToUpper(text[:min(len(text), 80)]))
	if len(words) < 3 || words[0] != "ALTER" || words[1] != "DATABASE" {
		return KindOther
	}
	for _, w := range words[2:min(len(words), 4)] {
		switch strings.TrimSuffix(w, ";") {
		case "MOUNT":
			return KindAlterMount
		case "OPEN":
			return KindAlterOpen
		}
	}
	return KindOther
}

// Kind says which of the formats an input is, from its first bytes (up to
// input.DetectLimit) and, when those cannot tell, its name's extension;
// "" when it is none of them.
func Kind(first []byte, name string) Format {
	verdicts := map[Format]input.Verdict{}
	for _, d := range detectors {
		v := d.detect(first)
		if v == input.Yes {
			return d.format
		}
		verdicts[d.format] = v
	}
	// The name decides only for a format its detector could not rule out
	// (a prefix too short to tell).
	if f := formatByName(name); f != "" && verdicts[f] == input.NeedMore {
		return f
	}
	return ""
}

// formatByName is the format a file name suggests.
func formatByName(name string) Format {
	base := strings.ToLower(path.Base(name))
	switch {
	case strings.Contains(base, ".aud"):
		return FormatText
	case strings.HasSuffix(base, ".xml"):
		return FormatXML
	case strings.HasSuffix(base, ".csv"):
		return FormatUnifiedCSV
	}
	return ""
}

var detectors = []struct {
	format Format
	detect func([]byte) input.Verdict
}{
	{FormatText, DetectText},
	{FormatXML, DetectXML},
	{FormatUnifiedCSV, DetectUnifiedCSV},
	{FormatSyslog, DetectSyslog},
}

// Reader reads one format of audit trail, calling fn for each record.
type Reader func(ctx context.Context, name string, r io.Reader, diag *input.Diagnostics, fn func(Record) error) error

// ReaderFor returns the reader of a format (nil for an unknown one).
func ReaderFor(f Format) Reader {
	switch f {
	case FormatText:
		return ReadText
	case FormatXML:
		return ReadXML
	case FormatUnifiedCSV:
		return ReadUnifiedCSV
	case FormatSyslog:
		return ReadSyslog
	}
	return nil
}

// ErrUnknownFormat is Read's error for an input in none of the formats.
var ErrUnknownFormat = errors.New("not an Oracle audit trail (text .aud, XML audit, UNIFIED_AUDIT_TRAIL CSV or syslog)")

// Read detects the input's format (gzip unwrapped) and reads it.
func Read(ctx context.Context, name string, r io.Reader, diag *input.Diagnostics, fn func(Record) error) error {
	br, err := input.Decompressed(name, r, input.DetectLimit)
	if err != nil {
		return err
	}
	first, err := br.Peek(input.DetectLimit)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return fmt.Errorf("%s: %w", name, err)
	}
	read := ReaderFor(Kind(first, name))
	if read == nil {
		return fmt.Errorf("%s: %w", name, ErrUnknownFormat)
	}
	return read(ctx, name, br, diag, fn)
}

// processFromFileName reads `<instance>_<process>_<pid>_<stamp>.aud` (or
// .xml, with Elastic's .log or a .txt after it). Instance names may hold
// underscores, so the name is read from its end.
func processFromFileName(name string) (Process, bool) {
	base := path.Base(strings.ReplaceAll(name, `\`, "/"))
	for _, ext := range []string{".gz", ".txt", ".log", ".aud", ".xml"} {
		base = strings.TrimSuffix(base, ext)
	}
	parts := strings.Split(base, "_")
	if len(parts) < 4 || !allDigits(parts[len(parts)-1]) {
		return Process{}, false
	}
	pid, err := strconv.Atoi(parts[len(parts)-2])
	if err != nil || pid <= 0 {
		return Process{}, false
	}
	proc := strings.ToLower(parts[len(parts)-3])
	inst := strings.Join(parts[:len(parts)-3], "_")
	if proc == "" || inst == "" {
		return Process{}, false
	}
	return Process{Instance: inst, Name: proc, PID: pid}, true
}

// allDigits says s is a non-empty run of decimal digits (of any length:
// a file name's stamp has 26).
func allDigits(s string) bool {
	return s != "" && strings.TrimLeft(s, "0123456789") == ""
}

// validText returns s with invalid UTF-8 replaced, and whether it had any:
// audit values are in the database character set, which may not be UTF-8.
func validText(s string) (string, bool) {
	if utf8.ValidString(s) {
		return s, false
	}
	return strings.ToValidUTF8(s, "\uFFFD"), true
}

// inUTC moves Time to UTC, keeping its zone's offset in ZoneOffset.
func (r *Record) inUTC() {
	_, r.ZoneOffset = r.Time.Zone()
	r.Time = r.Time.UTC()
}

// setExtra keeps a field the Record has no place for.
func (r *Record) setExtra(name, value string) {
	if r.Extra == nil {
		r.Extra = map[string]string{}
	}
	r.Extra[name] = value
}

// recordText returns a value as valid UTF-8, warning once about a record
// that was not.
func recordText(v string, line int, warn *input.OnceWarnings) string {
	v, replaced := validText(v)
	if replaced {
		warn.Warn("utf8", "bytes that are not UTF-8 (first in the record of line %d): replaced by U+FFFD", line)
	}
	return v
}

// atoi reads a decimal field; 0 when it is empty or not a number.
func atoi(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0
	}
	return n
}
