package linuxaudit

import (
	"encoding/hex"
	"strconv"
	"strings"
	"time"
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

// fill sets the correlation fields from the records: a SYSCALL record's
// values first, then the others' in order, the first value of each kept.
func (e *Event) fill(warn func(line int, format string, args ...any)) {
	for pass := range 2 {
		for _, r := range e.Records {
			if (r.Type == "SYSCALL") != (pass == 0) {
				continue
			}
			switch r.Type {
			case "EXECVE":
				continue // reassembled below
			case "PATH":
				if v, ok := r.Get("name"); ok && !absent(v) {
					e.Paths = append(e.Paths, v)
				}
				continue
			}
			for _, f := range r.Fields {
				e.set(f)
			}
		}
	}
	e.Command = command(e.Records, warn)
}

func (e *Event) set(f Field) {
	if absent(f.Value) {
		return
	}
	first := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	switch f.Key {
	case "auid":
		first(&e.AUID, id(f.Value))
	case "uid":
		first(&e.UID, id(f.Value))
	case "euid":
		first(&e.EUID, id(f.Value))
	case "ses":
		first(&e.Session, id(f.Value))
	case "pid":
		first(&e.PID, f.Value)
	case "ppid":
		first(&e.PPID, f.Value)
	case "exe":
		first(&e.Exe, f.Value)
	case "comm":
		first(&e.Comm, f.Value)
	case "key":
		first(&e.Key, strings.ReplaceAll(f.Value, "\x01", ","))
	case "terminal":
		first(&e.Terminal, f.Value)
	case "tty":
		first(&e.TTY, f.Value)
	case "addr":
		first(&e.Addr, f.Value)
	case "hostname":
		first(&e.Hostname, f.Value)
	case "acct":
		first(&e.Acct, f.Value)
	case "op":
		first(&e.Op, f.Value)
	case "res":
		first(&e.Result, f.Value)
	case "success":
		first(&e.Success, f.Value)
	case "exit":
		first(&e.Exit, f.Value)
	case "syscall":
		first(&e.Syscall, f.Value)
	case "cwd":
		first(&e.Cwd, f.Value)
	case "cmd":
		first(&e.Cmd, f.Value)
	case "unit":
		first(&e.Unit, f.Value)
	case "proctitle":
		first(&e.Proctitle, strings.ReplaceAll(strings.TrimRight(f.Value, "\x00"), "\x00", " "))
	}
}

// maxArgGap bounds how far past the arguments read so far an argument's
// index may jump: the kernel writes a0, a1, ... in order, so a bigger jump
// is damage, and must not make a huge vector.
const maxArgGap = 64

// command reassembles the EXECVE records' argc= and a0..aN, long
// arguments being written in pieces aN[0], aN[1], ... (after aN_len=).
// It holds the arguments present; a count short of argc= is warned about.
func command(records []Record, warn func(line int, format string, args ...any)) []string {
	var args []string
	argc, line, seen := -1, 0, false
	for _, r := range records {
		if r.Type != "EXECVE" {
			continue
		}
		if !seen {
			line, seen = r.Line, true
		}
		for _, f := range r.Fields {
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
				warn(r.Line, "EXECVE argument %s after %d arguments: skipped", f.Key, len(args))
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
		warn(line, "EXECVE has %d arguments, argc=%d", len(args), argc)
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
		if !strings.HasSuffix(digits, "]") || !allDigits(digits[b+1:len(digits)-1]) {
			return 0, false, false
		}
		digits, piece = digits[:b], true
	}
	if !allDigits(digits) {
		return 0, false, false
	}
	n, err := strconv.Atoi(digits)
	return n, piece, err == nil && n < 1<<20
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// encodedKeys are the fields the kernel and PAM write hex-encoded when the
// value holds a space, a quote, a control byte or a non-ASCII byte.
var encodedKeys = map[string]bool{
	"proctitle": true, "name": true, "cwd": true, "comm": true, "exe": true, "cmd": true,
	"acct": true, "path": true, "data": true, "key": true, "ocomm": true, "watch": true,
}

// encoded reports whether a field of a record of type typ may be
// hex-encoded: EXECVE's arguments, and encodedKeys everywhere.
func encoded(typ, key string) bool {
	if typ == "EXECVE" {
		if _, _, ok := argIndex(key); ok {
			return true
		}
	}
	return encodedKeys[key]
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
