package linuxaudit

import (
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/input"
)

// Unset is how an id the kernel writes as 4294967295 or -1 (no login
// user, no session) reads in an Event.
const Unset = "unset"

// Event is the records of one audit event (one syscall, one PAM step, one
// service start...) and the fields the correlation reads. A field the
// records do not have, or have as "?", "(none)" or "(null)", is "".
type Event struct {
	// Source is the input's name; Line the first record's line.
	Source string
	Line   int
	Node   string
	Serial uint64
	Time   time.Time // UTC, of the first record
	// Types are the records' types in the order read.
	Types   []string
	Records []Record

	// Login user, user and effective user ids ("unset" when none), and the
	// login session (ses=, which survives sudo and su).
	AUID, UID, EUID, Session string
	PID, PPID                string
	Exe, Comm                string
	// Key is the audit rule's key (-k), several joined by ",".
	Key string
	// Terminal is a user-space record's terminal= (ssh, /dev/pts/0, cron);
	// TTY is a syscall's tty= (pts0).
	Terminal, TTY  string
	Addr, Hostname string
	// Acct is the account a PAM step or user-management record is about.
	Acct string
	// Op is a user-space record's op= (PAM:session_open, login, ...).
	Op string
	// Result is res= (success, failed, 1, 0); Success and Exit are a
	// syscall's success= and exit=; Outcome condenses them.
	Result, Success, Exit string
	// Syscall is the syscall number as written (arch-specific).
	Syscall string
	Cwd     string
	// Command is the EXECVE argument vector, long arguments reassembled.
	Command []string
	// Cmd is USER_CMD's cmd= (what sudo ran); Unit a SERVICE_START/STOP's
	// unit=; Proctitle the PROCTITLE command line (NULs as spaces).
	Cmd, Unit, Proctitle string
	// Paths are the PATH records' names in order.
	Paths []string
}

// Outcome returns "success", "failed" or "" (not said), from success=
// (syscalls) or res= (user-space records: success/failed, or 1/0).
func (e *Event) Outcome() string {
	v := e.Success
	if v == "" {
		v = e.Result
	}
	switch v {
	case "yes", "success", "1":
		return "success"
	case "no", "failed", "0":
		return "failed"
	}
	return ""
}

// absent are the values auditd writes for "no value".
func absent(v string) bool { return v == "" || v == "?" || v == "(none)" || v == "(null)" }

// id reads an id field: the kernel's -1 as "unset".
func id(v string) string {
	if v == "4294967295" || v == "-1" {
		return Unset
	}
	return v
}

// warner takes warnings about a line of the input.
type warner interface {
	warnAt(line int, format string, args ...any)
}

// fill sets the correlation fields from the records (spans[i] are the
// fields of record i, offsets into the records' text): a SYSCALL record's
// values first, then the others' in order, the first value of each kept.
func (e *Event) fill(text string, spans [][]fieldSpan, w warner) {
	for pass := range 2 {
		for i, r := range e.Records {
			if (r.Type == "SYSCALL") != (pass == 0) {
				continue
			}
			switch r.Type {
			case "EXECVE":
				continue // reassembled below
			case "PATH":
				for _, f := range spans[i] {
					if text[f.k0:f.k1] == "name" {
						if v := value(text, f, true); v != "" {
							e.Paths = append(e.Paths, v)
						}
						break
					}
				}
				continue
			}
			for _, f := range spans[i] {
				if dst, decode := e.slot(text[f.k0:f.k1]); dst != nil && *dst == "" {
					*dst = value(text, f, decode)
				}
			}
		}
	}
	e.Command = command(e.Records, text, spans, w)
}

// slot returns the Event field a record field named key fills (nil: none)
// and whether its value may be hex-encoded. Reading only these, and
// decoding only them, is what keeps events cheap.
func (e *Event) slot(key string) (dst *string, decode bool) {
	switch key {
	case "auid":
		return &e.AUID, false
	case "uid":
		return &e.UID, false
	case "euid":
		return &e.EUID, false
	case "ses":
		return &e.Session, false
	case "pid":
		return &e.PID, false
	case "ppid":
		return &e.PPID, false
	case "exe":
		return &e.Exe, true
	case "comm":
		return &e.Comm, true
	case "key":
		return &e.Key, true
	case "terminal":
		return &e.Terminal, false
	case "tty":
		return &e.TTY, false
	case "addr":
		return &e.Addr, false
	case "hostname":
		return &e.Hostname, false
	case "acct":
		return &e.Acct, true
	case "op":
		return &e.Op, false
	case "res":
		return &e.Result, false
	case "success":
		return &e.Success, false
	case "exit":
		return &e.Exit, false
	case "syscall":
		return &e.Syscall, false
	case "cwd":
		return &e.Cwd, true
	case "cmd":
		return &e.Cmd, true
	case "unit":
		return &e.Unit, false
	case "proctitle":
		return &e.Proctitle, true
	}
	return nil, false
}

// value is a field's value as an Event holds it: "" for auditd's "no
// value" marks, ids' -1 as "unset", hex decoded, a process title's NULs
// and a key list's 0x01 separators made readable.
func value(text string, f fieldSpan, decode bool) string {
	key, v := text[f.k0:f.k1], text[f.v0:f.v1]
	if absent(v) {
		return ""
	}
	if decode && f.v0 == f.k1+1 {
		if d, ok := decodeHex(v); ok {
			v = d
		}
	}
	switch key {
	case "auid", "uid", "euid", "ses":
		return id(v)
	case "key":
		return strings.ReplaceAll(v, "\x01", ",")
	case "proctitle":
		return strings.ReplaceAll(strings.TrimRight(v, "\x00"), "\x00", " ")
	}
	return v
}

// maxArgGap bounds how far past the arguments read so far an argument's
// index may jump: the kernel writes a0, a1, ... in order, so a bigger jump
// is damage, and must not make a huge vector.
const maxArgGap = 64

// command reassembles the EXECVE records' argc= and a0..aN, long
// arguments being written in pieces aN[0], aN[1], ... (after aN_len=).
// It holds the arguments present; a count short of argc= is warned about.
func command(records []Record, text string, spans [][]fieldSpan, w warner) []string {
	var args []string
	argc, line, seen := -1, 0, false
	for k, r := range records {
		if r.Type != "EXECVE" {
			continue
		}
		if !seen {
			line, seen = r.Line, true
		}
		for _, span := range spans[k] {
			f := fieldAt(text, r.Type, span)
			if f.Key == "argc" {
				if n, err := strconv.Atoi(f.Value); err == nil {
					argc = n
				}
				continue
			}
			i, piece, ok := argIndex(f.Key)
			if !ok {
				continue
			}
			if i >= len(args)+maxArgGap {
				w.warnAt(r.Line, "EXECVE argument %s after %d arguments: skipped", f.Key, len(args))
				continue
			}
			for len(args) <= i {
				args = append(args, "")
			}
			if piece {
				args[i] += f.Value
			} else {
				args[i] = f.Value
			}
		}
	}
	if !seen {
		return nil
	}
	if argc >= 0 && len(args) != argc {
		w.warnAt(line, "EXECVE has %d arguments, argc=%d", len(args), argc)
	}
	return args
}

// argIndex reads an EXECVE argument key: "a12" or the piece "a12[3]".
func argIndex(key string) (i int, piece, ok bool) {
	if len(key) < 2 || key[0] != 'a' {
		return 0, false, false
	}
	digits := key[1:]
	if b := strings.IndexByte(digits, '['); b >= 0 {
		if !strings.HasSuffix(digits, "]") {
			return 0, false, false
		}
		if _, ok := input.ParseUint([]byte(digits[b+1 : len(digits)-1])); !ok {
			return 0, false, false
		}
		digits, piece = digits[:b], true
	}
	n, ok := input.ParseUint([]byte(digits))
	return int(n), piece, ok && n < 1<<20
}

// encoded reports whether a field of a record of type typ may be
// hex-encoded (the kernel and PAM encode a value holding a space, a quote,
// a control or a non-ASCII byte): EXECVE's arguments, and these fields
// everywhere.
func encoded(typ, key string) bool {
	switch key {
	case "proctitle", "name", "cwd", "comm", "exe", "cmd", "acct", "path", "data", "key", "ocomm", "watch":
		return true
	}
	if typ == "EXECVE" {
		_, _, ok := argIndex(key)
		return ok
	}
	return false
}

// decodeHex decodes an unquoted value of an even number of hex digits.
func decodeHex(v string) (string, bool) {
	if len(v) == 0 || len(v)%2 != 0 {
		return "", false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'F' || 'a' <= c && c <= 'f') {
			return "", false
		}
	}
	b, err := hex.DecodeString(v)
	return string(b), err == nil
}
