package linuxaudit

import (
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// TestSameEventsAsAusearch holds the reader to ausearch (Debian's auditd):
// `ausearch -if FILE --format csv` over every real file gives one row per
// event; the same events (node, first type, date, time, serial) come out
// of Read, with the same session, subject ids, result, object and "how".
// Every deliberate difference is a documented rule of ausearchRow and is
// listed in docs/audit.md.
func TestSameEventsAsAusearch(t *testing.T) {
	bin, err := exec.LookPath("ausearch")
	if err != nil {
		testenv.SkipOrFail(t, "ausearch not installed (apt-get install -y auditd)")
	}
	for _, rel := range realFiles(t) {
		t.Run(rel, func(t *testing.T) {
			file := testenv.DataFile(t, rel)
			want := ausearchRows(t, bin, file)
			events, _ := readAll(t, file)
			var got []string
			for _, e := range events {
				got = append(got, ourRow(e))
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("events differ from ausearch's:\n%s", lineDiff(want, got))
			}
			t.Logf("%d events equal ausearch's", len(got))
		})
	}
}

// compared are the ausearch CSV columns compared, in this order.
var compared = []string{"NODE", "EVENT", "DATE", "TIME", "SERIAL_NUM", "SESSION", "SUBJ_PRIME", "SUBJ_SEC", "RESULT", "OBJ_PRIME", "HOW"}

// ausearchRows returns the compared columns of ausearch's rows for file.
func ausearchRows(t *testing.T, bin, file string) []string {
	t.Helper()
	var want []string
	for _, row := range ausearchCSV(t, bin, "-if", file) {
		want = append(want, ausearchRow(func(name string) string { return row[name] }))
	}
	return want
}

// ausearchRow is a row of ausearch's CSV in the terms Read gives: the
// columns ausearch fills from its own reading of an event kind are blanked
// (docs/audit.md, "Compared with ausearch", lists each rule).
func ausearchRow(get func(string) string) string {
	col := map[string]string{}
	for _, name := range compared {
		col[name] = get(name)
	}
	typ := col["EVENT"]
	if _, ok := objectField[typ]; !ok {
		col["OBJ_PRIME"] = "" // a column ausearch derives per kind: not a field of Event
	}
	switch typ {
	case "LOGIN":
		// ausearch's subject is the login uid before the login (old-auid),
		// its object the new one; Event.AUID is the new one.
		col["SUBJ_PRIME"] = get("OBJ_PRIME")
	case "USER_LOGIN":
		col["SUBJ_SEC"] = "" // ausearch leaves the uid out of a login
	case "DAEMON_START", "DAEMON_END", "DAEMON_CONFIG":
		col["HOW"] = "" // "init" or "signal": ausearch's guess, no field of the record
		if typ == "DAEMON_END" {
			col["SUBJ_PRIME"] = "" // auid=?: ausearch names root
		}
	case "TTY", "USER_TTY":
		col["HOW"] = "" // keystrokes, with commas ausearch does not quote
	}
	return joinRow(col)
}

// objectField is, per event type, the Event field ausearch shows as the
// object (OBJ_PRIME); other types' objects are not compared.
var objectField = map[string]func(Event) string{
	"USER_AUTH": acct, "USER_ACCT": acct, "CRED_ACQ": acct, "CRED_DISP": acct, "CRED_REFR": acct,
	"USER_START": terminal, "USER_END": terminal, "USER_LOGIN": terminal, "USER_LOGOUT": terminal,
	"USER_CMD":      func(e Event) string { return e.Cmd },
	"SERVICE_START": unit, "SERVICE_STOP": unit,
}

func acct(e Event) string     { return e.Acct }
func terminal(e Event) string { return e.Terminal }
func unit(e Event) string     { return e.Unit }

func joinRow(col map[string]string) string {
	vals := make([]string, len(compared))
	for i, name := range compared {
		vals[i] = col[name]
	}
	return strings.Join(vals, "|")
}

// ourRow is an event as ausearch's CSV shows it.
func ourRow(e Event) string {
	typ := e.Types[0]
	col := map[string]string{
		"NODE": e.Node, "EVENT": typ, "DATE": e.Time.Format("01/02/06"), "TIME": e.Time.Format("15:04:05"),
		"SERIAL_NUM": strconv.FormatUint(e.Serial, 10), "SESSION": e.Session,
		"SUBJ_PRIME": userName(e.AUID), "SUBJ_SEC": userName(e.UID), "RESULT": e.Outcome(), "HOW": how(e),
	}
	if obj, ok := objectField[typ]; ok {
		col["OBJ_PRIME"] = obj(e)
	}
	switch typ {
	case "USER_LOGIN":
		col["SUBJ_SEC"] = ""
	case "DAEMON_START", "DAEMON_END", "DAEMON_CONFIG":
		col["HOW"] = ""
	case "CONFIG_CHANGE":
		if e.Key == "" && e.Op == "add_rule" {
			col["RESULT"] = "" // ausearch drops res=1 of a rule added without a key
		}
	case "TTY", "USER_TTY":
		col["HOW"] = ""
	}
	return joinRow(col)
}

// userName is an id as ausearch names it with this machine's users.
func userName(id string) string {
	switch id {
	case "":
		return ""
	case Unset:
		return "system"
	}
	if u, err := user.LookupId(id); err == nil {
		return u.Username
	}
	return fmt.Sprintf("unknown(%s)", id)
}

// interpreters are the programs whose comm ausearch shows rather than exe.
var interpreters = []string{"bash", "sh", "dash", "python", "perl", "ruby", "php", "tclsh", "lua", "node"}

// how is ausearch's HOW: the executable, or the command name for an
// interpreter (the script's name says more).
func how(e Event) string {
	base := path.Base(e.Exe)
	for _, in := range interpreters {
		if base == in || strings.HasPrefix(base, "python") && in == "python" {
			return e.Comm
		}
	}
	return e.Exe
}

// lineDiff lists the rows only one side has.
func lineDiff(want, got []string) string {
	var b strings.Builder
	for _, w := range want {
		if !slices.Contains(got, w) {
			fmt.Fprintf(&b, "- ausearch: %s\n", w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			fmt.Fprintf(&b, "+ read:     %s\n", g)
		}
	}
	return b.String()
}

// TestSameKeysAsAusearch: for every rule key the files hold, `ausearch -k
// KEY` finds the events Read gives that key (the execute watch on srvctl
// and crsctl is found this way).
func TestSameKeysAsAusearch(t *testing.T) {
	bin, err := exec.LookPath("ausearch")
	if err != nil {
		testenv.SkipOrFail(t, "ausearch not installed (apt-get install -y auditd)")
	}
	keys := 0
	for _, rel := range realFiles(t) {
		file := testenv.DataFile(t, rel)
		events, _ := readAll(t, file)
		byKey := map[string][]string{}
		for _, e := range events {
			if e.Key != "" {
				byKey[e.Key] = append(byKey[e.Key], strconv.FormatUint(e.Serial, 10))
			}
		}
		for key, got := range byKey {
			keys++
			var want []string
			for _, row := range ausearchCSV(t, bin, "-if", file, "-k", key) {
				want = append(want, row["SERIAL_NUM"])
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s: key %q: events %q, ausearch -k finds %q", rel, key, got, want)
			}
		}
	}
	if keys < 3 { // the repository's files alone have 3
		t.Errorf("only %d keys compared", keys)
	}
}

// TestSameDecodedValuesAsAusearch: the decoded working directories,
// process titles and EXECVE arguments equal what `ausearch -i` prints
// (which escapes control bytes as \ooo).
func TestSameDecodedValuesAsAusearch(t *testing.T) {
	bin, err := exec.LookPath("ausearch")
	if err != nil {
		testenv.SkipOrFail(t, "ausearch not installed (apt-get install -y auditd)")
	}
	compared := 0
	for _, rel := range realFiles(t) {
		file := testenv.DataFile(t, rel)
		cmd := exec.Command(bin, "-if", file, "-i")
		cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
		out, _ := cmd.Output() // exit status 1 when nothing matched
		var want []string
		for line := range strings.SplitSeq(string(out), "\n") {
			if v, ok := interpretedValue(line); ok {
				want = append(want, v)
			}
		}
		events, _ := readAll(t, file)
		var got []string
		for _, e := range events {
			for _, r := range e.Records {
				if v, ok := ourDecodedValue(r); ok {
					got = append(got, v)
				}
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: decoded values differ from ausearch -i's:\n%s", rel, lineDiff(want, got))
		}
		compared += len(got)
	}
	if compared < 10 { // the repository's files alone have 11
		t.Errorf("only %d values compared", compared)
	}
}

var (
	interpretedStamp = regexp.MustCompile(`type=(CWD|PROCTITLE|EXECVE) msg=audit\([^)]*:(\d+)\) : +`)
	execveArg        = regexp.MustCompile(`(?:^| )a\d+=`)
)

// interpretedValue reads a CWD, PROCTITLE or EXECVE line of ausearch -i as
// "TYPE serial value".
func interpretedValue(line string) (string, bool) {
	m := interpretedStamp.FindStringSubmatchIndex(line)
	if m == nil {
		return "", false
	}
	typ, serial, rest := line[m[2]:m[3]], line[m[4]:m[5]], strings.TrimSuffix(line[m[1]:], " ")
	switch typ {
	case "CWD":
		rest = strings.TrimPrefix(rest, "cwd=")
	case "PROCTITLE":
		rest = strings.TrimPrefix(rest, "proctitle=")
	case "EXECVE":
		var args []string
		bounds := execveArg.FindAllStringIndex(rest, -1)
		for i, b := range bounds {
			end := len(rest)
			if i+1 < len(bounds) {
				end = bounds[i+1][0]
			}
			args = append(args, rest[b[1]:end])
		}
		rest = strings.Join(args, "\x00")
	}
	return typ + " " + serial + " " + rest, true
}

// ourDecodedValue is a record's value as interpretedValue reads it.
func ourDecodedValue(r Record) (string, bool) {
	var v string
	switch r.Type {
	case "CWD":
		v, _ = r.Get("cwd")
	case "PROCTITLE":
		v, _ = r.Get("proctitle")
		v = strings.ReplaceAll(strings.TrimRight(v, "\x00"), "\x00", " ")
	case "EXECVE":
		var args []string
		for _, f := range r.Fields() {
			if _, _, ok := argIndex(f.Key); ok {
				args = append(args, f.Value)
			}
		}
		return "EXECVE " + strconv.FormatUint(r.Serial, 10) + " " + strings.Join(escapeAll(args), "\x00"), true
	default:
		return "", false
	}
	return r.Type + " " + strconv.FormatUint(r.Serial, 10) + " " + escapeControl(v), true
}

func escapeAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = escapeControl(a)
	}
	return out
}

// escapeControl writes control bytes as ausearch -i does: \ooo.
func escapeControl(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			fmt.Fprintf(&b, "\\%03o", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// ausearchCSV runs ausearch with args in the C locale and UTC and returns
// its CSV rows as column maps.
func ausearchCSV(t *testing.T, bin string, args ...string) []map[string]string {
	t.Helper()
	cmd := exec.Command(bin, append(args, "--format", "csv")...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && len(out) > 0) {
		t.Fatalf("ausearch %q: %v", args, err)
	}
	r := csv.NewReader(strings.NewReader(string(out)))
	r.FieldsPerRecord, r.LazyQuotes = -1, true
	rows, err := r.ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("ausearch's CSV: %v", err)
	}
	var maps []map[string]string
	for _, row := range rows[1:] {
		m := map[string]string{}
		for i, name := range rows[0] {
			if i < len(row) {
				m[name] = row[i]
			}
		}
		maps = append(maps, m)
	}
	return maps
}
