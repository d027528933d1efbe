// Package correlate answers "who started or stopped this database, from which
// login and address" (issue 21): it reads Oracle audit files, Linux audit logs
// and login logs (each file's format detected), picks the subjects (Oracle
// STARTUP, SHUTDOWN, MOUNT, OPEN and SYSDBA/SYSOPER connections; clusterware
// commands under the execute watch key oracrs) and builds, for each, the chain
// of links that explains it, every link with its confidence.
package correlate

import (
	"fmt"
	"io"
	"net"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/latscope/latscope/audit/authlog"
	"github.com/latscope/latscope/audit/linuxaudit"
	"github.com/latscope/latscope/audit/oracleaud"
	"github.com/latscope/latscope/input"
)

// Confidence says what a link rests on.
type Confidence string

const (
	Exact         Confidence = "exact: same ses"
	ExactProcess  Confidence = "exact: same process"
	ByProcessID   Confidence = "by process id"
	ByTerminal    Confidence = "by terminal and time"
	ByWatch       Confidence = "by execute watch and time"
	ByAddressTime Confidence = "by address and time"
	// Ambiguous: several candidates fit and none is preferred; the link
	// names them all and the chain follows none.
	Ambiguous Confidence = "ambiguous"
	Unknown   Confidence = "unknown"
)

// Options tune loading and the time windows of the links.
type Options struct {
	// Year of classic syslog stamps in login logs (0: authlog's policy).
	Year int
	// WatchWindow: how long before a database record without a terminal a
	// clusterware command may be (default 2 minutes).
	WatchWindow time.Duration
	// LoginSlack: the time allowed between an audit USER_LOGIN and the sshd
	// line of the same login (default 2 s).
	LoginSlack time.Duration
	// InputFormat, when set, is every input's format (one of
	// InputFormats); "": detected per input.
	InputFormat string
	// Stdin is read for the file name "-".
	Stdin io.Reader
	// MaxAge: how long before a database record the exec of its process or
	// the last event on its terminal may be (default 12 hours): pids and
	// terminals are reused, and an audit log of another time or host must
	// not explain the record.
	MaxAge time.Duration
}

func (o Options) maxAge() time.Duration {
	if o.MaxAge > 0 {
		return o.MaxAge
	}
	return 12 * time.Hour
}

func (o Options) watchWindow() time.Duration {
	if o.WatchWindow > 0 {
		return o.WatchWindow
	}
	return 2 * time.Minute
}

func (o Options) loginSlack() time.Duration {
	if o.LoginSlack > 0 {
		return o.LoginSlack
	}
	return 2 * time.Second
}

// InputFormats are the names Options.InputFormat takes: the readers' own.
func InputFormats() []string {
	return []string{string(oracleaud.FormatText), string(oracleaud.FormatXML), string(oracleaud.FormatUnifiedCSV),
		string(oracleaud.FormatSyslog), linuxAuditFormat, string(authlog.FormatSyslog),
		string(authlog.FormatJournalExport), string(authlog.FormatJournalJSON)}
}

// linuxAuditFormat names the Linux audit log's format.
const linuxAuditFormat = "linux-audit"

// detectFormat is the format of an input by its first bytes (and, for
// Oracle's files, its name), or "".
func detectFormat(prefix []byte, name string) string {
	if f := oracleaud.Kind(prefix, strings.TrimSuffix(name, ".gz")); f != "" {
		return string(f)
	}
	if linuxaudit.Detect(prefix) == input.Yes {
		return linuxAuditFormat
	}
	if f, v := authlog.DetectFormat(prefix); v == input.Yes {
		return string(f)
	}
	return ""
}

// Filter selects subjects.
type Filter struct {
	Since, Until time.Time // zero: open
	// DB: instance name or DBID (case-insensitive); for clusterware commands
	// the -d/-db argument.
	DB string
}

// Subject is what a chain explains.
type Subject struct {
	Time time.Time `json:"time"`
	Host string    `json:"host,omitempty"`
	// ClientHost: an Oracle record's USERHOST, the host of the client
	// (and of its terminal); the server's own for a local connection.
	ClientHost string `json:"client_host,omitempty"`
	DB         string `json:"db,omitempty"`
	DBID       string `json:"dbid,omitempty"`
	Action     string `json:"action"`
	Kind       string `json:"kind"` // "oracle" or "clusterware"
	Privilege  string `json:"privilege,omitempty"`
	OSUser     string `json:"os_user,omitempty"`
	Terminal   string `json:"terminal,omitempty"`
	PID        int    `json:"pid,omitempty"`
	Command    string `json:"command,omitempty"`
	Status     string `json:"status,omitempty"`
	Source     string `json:"source"`
	Line       int    `json:"line"`
}

// Link is one step of a chain.
type Link struct {
	Confidence Confidence `json:"confidence"`
	Time       time.Time  `json:"time,omitzero"`
	What       string     `json:"what"`
	Source     string     `json:"source,omitempty"`
	Line       int        `json:"line,omitempty"`
}

// Login is where a chain ends: the login that explains the subject.
type Login struct {
	Time    time.Time `json:"time"`
	User    string    `json:"user,omitempty"`
	AUID    string    `json:"auid,omitempty"`
	Session string    `json:"ses,omitempty"`
	Addr    string    `json:"addr,omitempty"`
	Port    int       `json:"port,omitempty"`
	Method  string    `json:"method,omitempty"`
}

// Chain explains one subject. Confidence is the weakest link's; a chain
// whose link is ambiguous follows none of its candidates (it has no Login)
// and lists each with the login it leads to.
type Chain struct {
	Subject    Subject     `json:"subject"`
	Links      []Link      `json:"links"`
	Steps      []string    `json:"steps,omitempty"` // sudo/su steps in the session
	Login      *Login      `json:"login,omitempty"`
	Candidates []Candidate `json:"candidates,omitempty"`
	Confidence Confidence  `json:"confidence"`
}

// Candidate is one of the events an ambiguous link could rest on, followed
// through its session to its login.
type Candidate struct {
	Link  Link   `json:"link"`
	Login *Login `json:"login,omitempty"`
}

var rank = map[Confidence]int{Exact: 5, ExactProcess: 5, ByProcessID: 4, ByTerminal: 3, ByWatch: 3, ByAddressTime: 3, Ambiguous: 1, Unknown: 0}

// Chains returns the chain of every subject the filter selects, in time
// order, explaining those not explained yet.
func (m *Model) Chains(f Filter) []Chain {
	m.settle(time.Unix(1<<62, 0))
	var out []Chain
	for _, c := range m.done {
		if f.match(c.Subject, c.Subject.DBID) {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Subject.Time.Before(out[j].Subject.Time) })
	return out
}

// dbSubject is what an Oracle record says of itself.
func dbSubject(r oracleaud.Record) Subject {
	s := Subject{Time: r.Time, Host: r.Process.Host, DB: r.Process.Instance, DBID: r.DBID,
		Action: string(r.Kind), Kind: "oracle", Privilege: r.Privilege, OSUser: r.ClientUser,
		Terminal: r.ClientTerminal, PID: r.Process.PID, Status: r.Status, Source: r.Source, Line: r.Line,
		ClientHost: r.Userhost}
	if s.Host == "" {
		s.Host = r.Userhost
	}
	return s
}

// explainWatch is the chain of a clusterware command under the execute watch.
func (m *Model) explainWatch(e *linuxaudit.Event) Chain {
	tool, verb, db := clusterware(e)
	s := Subject{Time: e.Time, Host: e.Node, DB: db, Action: tool + " " + verb, Kind: "clusterware",
		OSUser: e.UID, Terminal: e.TTY, Command: strings.Join(e.Command, " "), Status: e.Outcome(),
		Source: e.Source, Line: e.Line}
	c := Chain{Subject: s}
	c.Links = append(c.Links, Link{Confidence: Exact, Time: e.Time, Source: e.Source, Line: e.Line,
		What: fmt.Sprintf("execute watch (key %s): pid %s auid %s ses %s", e.Key, e.PID, e.AUID, e.Session)})
	m.session(&c, e.Node, e.Session)
	return finish(c)
}

// Match says the filter selects the subject.
func (f Filter) Match(s Subject) bool { return f.match(s, s.DBID) }

func (f Filter) match(s Subject, dbid string) bool {
	if !f.Since.IsZero() && s.Time.Before(f.Since) {
		return false
	}
	if !f.Until.IsZero() && s.Time.After(f.Until) {
		return false
	}
	if f.DB != "" && !strings.EqualFold(f.DB, s.DB) && f.DB != dbid {
		return false
	}
	return true
}

func finish(c Chain) Chain {
	c.Confidence = Exact
	if c.Login == nil {
		c.Confidence = Unknown
		if len(c.Candidates) > 0 {
			c.Confidence = Ambiguous
		}
	}
	for _, l := range c.Links {
		if rank[l.Confidence] < rank[c.Confidence] {
			c.Confidence = l.Confidence
		}
	}
	return c
}

// clusterware returns the tool (srvctl, crsctl), its verb and the database
// an exec event runs, or "" when it runs neither. A script's exec names the
// interpreter first: the tool is looked for in the first two arguments.
func clusterware(e *linuxaudit.Event) (tool, verb, db string) {
	if !hasType(e, "EXECVE") {
		return "", "", ""
	}
	for i, a := range e.Command {
		if i > 1 {
			break
		}
		if b := path.Base(a); b == "srvctl" || b == "crsctl" {
			rest := e.Command[i+1:]
			tool = b
			var words []string
			for j, w := range rest {
				if (w == "-d" || w == "-db" || w == "-database") && j+1 < len(rest) {
					db = rest[j+1]
				}
				if !strings.HasPrefix(w, "-") && len(words) < 2 && (j == 0 || !strings.HasPrefix(rest[j-1], "-")) {
					words = append(words, w)
				}
			}
			return tool, strings.Join(words, " "), db
		}
	}
	return "", "", ""
}

// explainDB links an Oracle record to a process, a terminal or a
// clusterware command, then to its audit session.
func (m *Model) explainDB(s Subject) Chain {
	c := Chain{Subject: s}
	const slack = 2 * time.Second
	// 1. By process id: the exec of the server process (pid of the file name).
	if s.PID != 0 {
		pid := fmt.Sprint(s.PID)
		if e := m.lastAudit(s.Time.Add(slack), m.index().execs(pid), func(e *linuxaudit.Event) bool {
			return e.PID == pid && hasType(e, "EXECVE") && sameHost(s.Host, e.Node)
		}); e != nil && s.Time.Sub(e.Time) <= m.opts.maxAge() {
			what := fmt.Sprintf("server process %s: exec of %s by pid %s (%s)", pid, first(e.Command), e.PPID, e.Comm)
			if p := m.lastAudit(e.Time.Add(slack), m.index().execs(e.PPID), func(x *linuxaudit.Event) bool { return x.PID == e.PPID && x.Node == e.Node && hasType(x, "EXECVE") }); p != nil {
				what += fmt.Sprintf(", itself `%s`", strings.Join(p.Command, " "))
			}
			c.Links = append(c.Links, Link{Confidence: ByProcessID, Time: e.Time, Source: e.Source, Line: e.Line, What: what + fmt.Sprintf(", ses %s", e.Session)})
			m.session(&c, e.Node, e.Session)
			return finish(c)
		}
	}
	// 2. By terminal and time: the latest event of that terminal before it.
	if tty := ttyName(s.Terminal); tty != "" {
		if e := m.lastAudit(s.Time.Add(slack), m.index().byTTY[tty], func(e *linuxaudit.Event) bool {
			return e.Session != "" && e.Session != linuxaudit.Unset && (ttyName(e.TTY) == tty || ttyName(e.Terminal) == tty) &&
				sameHost(s.terminalHost(), e.Node)
		}); e != nil && s.Time.Sub(e.Time) <= m.opts.maxAge() {
			c.Links = append(c.Links, Link{Confidence: ByTerminal, Time: e.Time, Source: e.Source, Line: e.Line,
				What: fmt.Sprintf("terminal %s: last audit event %s on it, ses %s", s.Terminal, strings.Join(e.Types, ","), e.Session)})
			m.session(&c, e.Node, e.Session)
			return finish(c)
		}
		if a := m.lastAuth(s.Time.Add(slack), m.authIndex().byTTY[tty], func(a *authlog.Record) bool {
			return (a.Kind == authlog.KindSudo || a.Kind == authlog.KindSu) && ttyName(a.TTY) == tty && sameHost(s.terminalHost(), a.Host)
		}); a != nil && s.Time.Sub(a.Time) <= m.opts.maxAge() {
			c.Links = append(c.Links, Link{Confidence: ByTerminal, Time: a.Time, Source: a.Source, Line: a.Line,
				What: fmt.Sprintf("terminal %s: %s by %s to %s (no audit session)", s.Terminal, a.Kind, a.User, a.TargetUser)})
			c.Steps = append(c.Steps, fmt.Sprintf("%s %s → %s", a.Kind, a.User, a.TargetUser))
			return finish(c)
		}
	}
	// 3. By execute watch: a clusterware command of this database just before.
	if tty := ttyName(s.Terminal); tty == "" {
		if cands := m.watchCandidates(s); len(cands) == 1 {
			e := cands[0]
			c.Links = append(c.Links, m.watchLink(s, e, ByWatch))
			m.session(&c, e.Node, e.Session)
			return finish(c)
		} else if len(cands) > 1 {
			c.Links = append(c.Links, Link{Confidence: Ambiguous,
				What: fmt.Sprintf("%d clusterware commands of different sessions or databases within %s before it: none taken", len(cands), m.opts.watchWindow())})
			for _, e := range cands {
				alt := Chain{Subject: s}
				m.session(&alt, e.Node, e.Session)
				c.Candidates = append(c.Candidates, Candidate{Link: m.watchLink(s, e, Ambiguous), Login: alt.Login})
			}
			return finish(c)
		}
	}
	c.Links = append(c.Links, Link{Confidence: Unknown, What: "no process, terminal or execute watch matches"})
	return finish(c)
}

// terminalHost is the host of a record's CLIENT TERMINAL: the client's
// (USERHOST), else the server's. The process and the clusterware command
// are the server's (Host).
func (s Subject) terminalHost() string {
	if s.ClientHost != "" {
		return s.ClientHost
	}
	return s.Host
}

// ttyName normalises /dev/pts/1, pts/1 and pts1 to pts/1; "" for none.
func ttyName(t string) string {
	t = strings.TrimPrefix(t, "/dev/")
	switch strings.ToUpper(t) {
	case "", "UNKNOWN", "(NONE)", "?", "SSH", "CRON":
		return ""
	}
	if strings.HasPrefix(t, "pts") && !strings.HasPrefix(t, "pts/") {
		t = "pts/" + t[3:]
	}
	return t
}

func first(s []string) string {
	if len(s) == 0 {
		return "?"
	}
	return s[0]
}

// session follows an audit session id to its sudo/su steps and its login.
func (m *Model) session(c *Chain, node, ses string) {
	if ses == "" || ses == linuxaudit.Unset {
		c.Links = append(c.Links, Link{Confidence: Unknown, What: "no audit session (ses unset)"})
		return
	}
	var login *linuxaudit.Event
	for _, i := range m.sessionEvents(node, ses) {
		e := &m.audit[i]
		if e.Node != node || e.Session != ses || e.Time.After(c.Subject.Time) {
			continue
		}
		switch {
		case hasType(e, "USER_LOGIN") && e.Outcome() != "failed":
			login = e
		case hasType(e, "USER_CMD"):
			c.Steps = append(c.Steps, fmt.Sprintf("%s sudo %s (auid %s, %s)", e.Time.Format("15:04:05"), e.Cmd, e.AUID, e.Terminal))
		case hasType(e, "USER_START") && (strings.HasSuffix(e.Exe, "/su") || strings.HasSuffix(e.Exe, "/sudo")):
			c.Steps = append(c.Steps, fmt.Sprintf("%s %s session opened as %s (auid %s, %s)", e.Time.Format("15:04:05"), path.Base(e.Exe), e.Acct, e.AUID, e.Terminal))
		}
	}
	if login == nil {
		c.Links = append(c.Links, Link{Confidence: Unknown, What: fmt.Sprintf("ses %s: no USER_LOGIN in the audit log read", ses)})
		return
	}
	l := &Login{Time: login.Time, AUID: login.AUID, Session: ses, Addr: login.Addr, User: login.Acct}
	c.Links = append(c.Links, Link{Confidence: Exact, Time: login.Time, Source: login.Source, Line: login.Line,
		What: fmt.Sprintf("ses %s: USER_LOGIN auid %s from %s on %s by %s pid %s", ses, login.AUID, login.Addr, login.Terminal, path.Base(login.Exe), login.PID)})
	slack := m.opts.loginSlack()
	if a := m.lastAuth(login.Time.Add(slack), m.authIndex().byAddr[login.Addr], func(a *authlog.Record) bool {
		return a.Kind == authlog.KindSSHAccepted && a.Addr == login.Addr && login.Time.Sub(a.Time) <= slack && sameHost(node, a.Host)
	}); a != nil {
		conf := ByAddressTime
		if fmt.Sprint(a.PID) == login.PID {
			conf = ExactProcess
		}
		l.User, l.Port, l.Method, l.Time = a.User, a.Port, a.Method, a.Time
		c.Links = append(c.Links, Link{Confidence: conf, Time: a.Time, Source: a.Source, Line: a.Line,
			What: fmt.Sprintf("sshd[%d] Accepted %s for %s from %s port %d", a.PID, a.Method, a.User, a.Addr, a.Port)})
	}
	c.Login = l
}

// watchCandidates returns the clusterware commands under the execute watch
// that may explain s: within the watch window before it, on its host, for
// its database (-d) or none named. When some have the verb of s's action
// (stop for SHUTDOWN, start for STARTUP, MOUNT, OPEN), only those are kept.
// Of each session, database and host only the latest is kept: the same
// person's retry is one candidate, two sessions or two databases are two.
func (m *Model) watchCandidates(s Subject) []*linuxaudit.Event {
	var all []*linuxaudit.Event
	from := s.Time.Add(-m.opts.watchWindow())
	to := s.Time.Add(2 * time.Second)
	i := sort.Search(len(m.audit), func(i int) bool { return m.audit[i].Time.After(to) })
	for i--; i >= 0 && m.audit[i].Time.After(from); i-- {
		e := &m.audit[i]
		tool, _, db := clusterware(e)
		if tool != "" && strings.Contains(e.Key, "oracrs") && sameHost(s.Host, e.Node) &&
			(db == "" || strings.EqualFold(db, s.DB) || strings.HasPrefix(strings.ToUpper(s.DB), strings.ToUpper(db))) {
			all = append(all, e)
		}
	}
	var fitting []*linuxaudit.Event
	for _, e := range all {
		if _, verb, _ := clusterware(e); verbFits(verb, s.Action) {
			fitting = append(fitting, e)
		}
	}
	if len(fitting) > 0 {
		all = fitting
	}
	seen := map[string]bool{}
	var out []*linuxaudit.Event // latest first
	for _, e := range all {
		_, _, db := clusterware(e)
		key := strings.ToLower(e.Node) + "\x00" + e.Session + "\x00" + strings.ToUpper(db)
		if !seen[key] {
			seen[key] = true
			out = append(out, e)
		}
	}
	return out
}

// verbFits says whether a clusterware verb (stop database, start instance)
// does what a database record shows.
func verbFits(verb, action string) bool {
	switch oracleaud.ActionKind(action) {
	case oracleaud.KindShutdown:
		return strings.HasPrefix(verb, "stop")
	case oracleaud.KindStartup, oracleaud.KindAlterMount, oracleaud.KindAlterOpen:
		return strings.HasPrefix(verb, "start")
	}
	return false
}

func (m *Model) watchLink(s Subject, e *linuxaudit.Event, conf Confidence) Link {
	return Link{Confidence: conf, Time: e.Time, Source: e.Source, Line: e.Line,
		What: fmt.Sprintf("execute watch (key %s) %s before: `%s`, pid %s ses %s%s", e.Key, s.Time.Sub(e.Time).Round(time.Second),
			strings.Join(e.Command, " "), e.PID, e.Session, onNode(e.Node))}
}

func onNode(node string) string {
	if node == "" {
		return ""
	}
	return " on " + node
}

// sameHost says whether two host names may be one host: an empty name (the
// file did not say) may be any; names compare case-insensitively, a short
// name and a fully qualified one by the first label; addresses whole.
func sameHost(a, b string) bool {
	if a == "" || b == "" || strings.EqualFold(a, b) {
		return true
	}
	if net.ParseIP(a) != nil || net.ParseIP(b) != nil {
		return false
	}
	if strings.Contains(a, ".") && strings.Contains(b, ".") {
		return false
	}
	a, _, _ = strings.Cut(a, ".")
	b, _, _ = strings.Cut(b, ".")
	return strings.EqualFold(a, b)
}
