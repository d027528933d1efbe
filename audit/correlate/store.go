package correlate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/latscope/latscope/audit/authlog"
	"github.com/latscope/latscope/audit/linuxaudit"
	"github.com/latscope/latscope/audit/oracleaud"
	"github.com/latscope/latscope/input"
)

// Model holds what the chains need of the files read. Memory is bounded
// when the audit logs are read as one stream (Load, Follow): subjects are
// explained once the stream is past them, and kept audit events older than
// the horizon (MaxAge + WatchWindow + a margin) drop out, but for the
// login and sudo/su steps of sessions still open or seen within it.
type Model struct {
	opts  Options
	db    []oracleaud.Record // subjects not explained yet
	watch []linuxaudit.Event // clusterware subjects not explained yet
	audit []linuxaudit.Event // kept events only, in time order
	auth  []authlog.Record   // kept records only, in time order
	// Counts of records read and kept, per kind of file.
	Files []FileSummary

	done     []Chain     // explained subjects (when emit is nil)
	emit     func(Chain) // follow mode: explained subjects handed on
	sessions map[sesKey]*sesState
	idx      *auditIndex // nil: to be built
	aidx     *authIndex
	dbSorted bool
	authDirt bool
	// now is the latest audit event time read; kept counts kept events
	// since the last settle.
	now        time.Time
	kept       int
	afterPrune int // kept events left by the last prune
	// Pruned counts the kept events dropped for being past the horizon;
	// Peak is the most kept events held at once.
	Pruned, Peak int
}

// FileSummary says how a file was read.
type FileSummary struct {
	Name   string `json:"name"`
	Format string `json:"format"`
	Read   int    `json:"read"`
	Kept   int    `json:"kept"`
}

// sesKey is an audit session: ses= is per host.
type sesKey struct{ node, ses string }

// sesState is what pruning needs of a session: the last time one of its
// events was read and whether its login ended (USER_LOGOUT, or sshd's or
// login's USER_END).
type sesState struct {
	last   time.Time
	closed bool
}

// settleMargin is how far the audit stream must be past a subject (beyond
// the 2 s a link may follow it) before the subject is explained: auditd
// writes events nearly in order, the reader joins them within 2 s.
const settleMargin = 10 * time.Second

// settleEvery is how many kept events are read between two settles.
const settleEvery = 8192

// linkSlack is how far after a subject a link's event may be (explainDB's).
const linkSlack = 2 * time.Second

func newModel(opts Options) *Model {
	return &Model{opts: opts, sessions: map[sesKey]*sesState{}}
}

// horizon is how old a kept event may be and still be a link of a subject
// not explained yet.
func (m *Model) horizon() time.Duration {
	return m.opts.maxAge() + m.opts.watchWindow() + linkSlack + settleMargin
}

// inputFile is a file classified before reading.
type inputFile struct {
	i      int // position in the files given
	name   string
	kind   string           // "oracle", "linux-audit", "login"
	oracle oracleaud.Format // of a plain (not gzip) Oracle file
	login  authlog.Format
	node   string
	first  time.Time
	stdin  bool // "-": Options.Stdin
}

// Load reads every file (format detected per file, gzip unwrapped) into a
// model. A file in no known format is an error. Oracle files are read
// first, then login logs, then audit logs: when these are one host's
// (one node=), as one stream in the order of their first records, so that
// memory stays bounded by open sessions (see Model).
func Load(ctx context.Context, files []string, diag *input.Diagnostics, opts Options) (*Model, error) {
	m := newModel(opts)
	if opts.InputFormat != "" && !slices.Contains(InputFormats(), opts.InputFormat) {
		return nil, fmt.Errorf("unknown input format %q (known: %s)", opts.InputFormat, strings.Join(InputFormats(), ", "))
	}
	files, fromDir, err := expandDirs(files)
	if err != nil {
		return nil, err
	}
	var order []inputFile
	buf := make([]byte, input.DetectLimit)
	for i, name := range files {
		if name == "-" {
			if opts.Stdin == nil {
				return nil, errors.New("-: no standard input")
			}
			// Read with the login logs: after the Oracle files, before the
			// audit logs' stream, whatever it holds.
			order = append(order, inputFile{i: i, name: name, kind: "login", stdin: true})
			continue
		}
		f, err := classify(name, buf, opts.InputFormat)
		if err != nil {
			return nil, err
		}
		if fromDir[name] && f.kind == "login" && f.login == "" {
			diag.Warn("", "%s: not an Oracle audit file, a Linux audit log nor a login log: skipped", name)
			continue
		}
		f.i = i
		order = append(order, f)
	}
	rank := map[string]int{"oracle": 0, "login": 1, "linux-audit": 2}
	// Several hosts' logs are not one stream: one's time would explain
	// another's subjects before its events were read.
	stream, nodes := true, map[string]bool{}
	for _, f := range order {
		if f.kind == "linux-audit" {
			nodes[f.node] = true
		}
	}
	stream = len(nodes) <= 1
	sort.SliceStable(order, func(a, b int) bool {
		x, y := order[a], order[b]
		if rank[x.kind] != rank[y.kind] {
			return rank[x.kind] < rank[y.kind]
		}
		return x.kind == "linux-audit" && stream && x.first.Before(y.first)
	})
	m.reserve(order)
	sums := make([]*FileSummary, len(files))
	for _, f := range order {
		sum, err := m.readFile(ctx, f, diag, stream)
		sums[f.i] = &sum
		if err != nil {
			return nil, err
		}
	}
	for _, s := range sums {
		if s != nil {
			m.Files = append(m.Files, *s)
		}
	}
	return m, nil
}

// expandDirs replaces each directory by its regular files (an Oracle
// adump directory holds one .aud file a session), in name order; fromDir
// marks these.
func expandDirs(names []string) ([]string, map[string]bool, error) {
	var out []string
	fromDir := map[string]bool{}
	for _, name := range names {
		st, err := os.Stat(name)
		if err != nil || !st.IsDir() {
			out = append(out, name)
			continue
		}
		entries, err := os.ReadDir(name)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range entries {
			if e.Type().IsRegular() {
				p := filepath.Join(name, e.Name())
				out = append(out, p)
				fromDir[p] = true
			}
		}
	}
	return out, fromDir, nil
}

// reserve sizes the kept events' slice for the audit logs' size (about
// one kept event per 1.5 KB of a busy log, at most 128 Ki events): growing
// a slice of large events copies them, under the collector's write
// barriers, and pages never written stay out of memory.
func (m *Model) reserve(files []inputFile) {
	var size int64
	for _, f := range files {
		if st, err := os.Stat(f.name); err == nil && f.kind == "linux-audit" {
			size += st.Size()
		}
	}
	if n := int(min(size/1500, 1<<17)); n > cap(m.audit) {
		m.audit = make([]linuxaudit.Event, 0, n)
	}
}

// classify opens a file and says which reader takes it, from its first
// bytes read into buf (DetectLimit long, reused: an adump holds thousands
// of small files), or from format (--input-format) when given.
func classify(name string, buf []byte, format string) (inputFile, error) {
	f, err := os.Open(name)
	if err != nil {
		return inputFile{}, err
	}
	defer f.Close()
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return inputFile{}, fmt.Errorf("%s: %w", name, err)
	}
	prefix := buf[:n]
	gzipped := n >= 2 && prefix[0] == 0x1f && prefix[1] == 0x8b
	if gzipped { // detect on what it holds
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return inputFile{}, err
		}
		br, err := input.Decompressed(name, f, input.DetectLimit)
		if err != nil {
			return inputFile{}, fmt.Errorf("%s: %w", name, err)
		}
		prefix, _ = br.Peek(input.DetectLimit)
	}
	out := inputFile{name: name}
	if format == "" {
		format = detectFormat(prefix, name)
	}
	switch {
	case isOracleFormat(format):
		out.kind = "oracle"
		if !gzipped {
			out.oracle = oracleaud.Format(format)
		}
	case format == linuxAuditFormat:
		out.kind = "linux-audit"
		out.node, out.first, _ = linuxaudit.FirstRecord(prefix)
	default:
		out.kind = "login" // or unknown ("" format): add says which
		out.login = authlog.Format(format)
	}
	return out, nil
}

func isOracleFormat(f string) bool {
	switch oracleaud.Format(f) {
	case oracleaud.FormatText, oracleaud.FormatXML, oracleaud.FormatUnifiedCSV, oracleaud.FormatSyslog:
		return true
	}
	return false
}

func (m *Model) readFile(ctx context.Context, in inputFile, diag *input.Diagnostics, stream bool) (FileSummary, error) {
	if in.stdin {
		return m.add(ctx, in.name, m.opts.Stdin, diag, false)
	}
	f, err := os.Open(in.name)
	if err != nil {
		return FileSummary{Name: in.name}, err
	}
	defer f.Close()
	if in.oracle != "" {
		// A small .aud file, one of thousands: its format is known, read
		// it without the detection buffer.
		sum := FileSummary{Name: in.name, Format: string(in.oracle)}
		err := oracleaud.ReaderFor(in.oracle)(ctx, in.name, f, diag, func(rec oracleaud.Record) error {
			sum.Read++
			if m.addDB(rec) {
				sum.Kept++
			}
			return nil
		})
		if err != nil {
			return sum, fmt.Errorf("%s: %w", in.name, err)
		}
		return sum, nil
	}
	return m.add(ctx, in.name, f, diag, stream)
}

// Add reads one input into the model, detecting its format. Subjects are
// explained from everything added before Chains is called.
func (m *Model) Add(ctx context.Context, name string, r io.Reader, diag *input.Diagnostics) error {
	if m.sessions == nil {
		m.sessions = map[sesKey]*sesState{}
	}
	sum, err := m.add(ctx, name, r, diag, false)
	m.Files = append(m.Files, sum)
	return err
}

// add reads one input; with stream, subjects are explained and old events
// pruned as the audit log goes (its events must come in time order after
// every subject was added).
func (m *Model) add(ctx context.Context, name string, r io.Reader, diag *input.Diagnostics, stream bool) (FileSummary, error) {
	var ref time.Time
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil {
			ref = st.ModTime()
		}
	}
	br, err := input.Decompressed(name, r, input.DetectLimit)
	sum := FileSummary{Name: name}
	if err != nil {
		return sum, fmt.Errorf("%s: %w", name, err)
	}
	sum.Format = m.opts.InputFormat
	if sum.Format == "" {
		prefix, _ := br.Peek(input.DetectLimit)
		sum.Format = detectFormat(prefix, name)
	}
	switch {
	case sum.Format == "":
		return sum, fmt.Errorf("%s: not an Oracle audit file, a Linux audit log nor a login log", name)
	case isOracleFormat(sum.Format):
		err = oracleaud.ReaderFor(oracleaud.Format(sum.Format))(ctx, name, br, diag, func(rec oracleaud.Record) error {
			sum.Read++
			if m.addDB(rec) {
				sum.Kept++
			}
			return nil
		})
	case sum.Format == linuxAuditFormat:
		rd := linuxaudit.Reader{Want: wantAuditType, Dropped: &sum.Read, FieldsOnly: true, Skip: skipAuditType}
		err = rd.Read(ctx, name, br, diag, func(e linuxaudit.Event) error {
			sum.Read++
			if m.addAudit(&e, stream) {
				sum.Kept++
			}
			return nil
		})
	default:
		rd := authlog.Reader{Year: m.opts.Year, Reference: ref, Format: authlog.Format(sum.Format)}
		err = rd.Read(ctx, name, br, diag, func(rec authlog.Record) error {
			sum.Read++
			if m.addAuth(rec) {
				sum.Kept++
			}
			return nil
		})
	}
	if err != nil {
		return sum, fmt.Errorf("%s: %w", name, err)
	}
	return sum, nil
}

// addDB keeps an Oracle record that is a subject.
func (m *Model) addDB(rec oracleaud.Record) bool {
	if !isDBSubject(rec) {
		return false
	}
	m.db = append(m.db, rec)
	m.dbSorted = false
	return true
}

// addAuth keeps a login-log record a link may use.
func (m *Model) addAuth(rec authlog.Record) bool {
	switch rec.Kind {
	case authlog.KindSSHAccepted, authlog.KindSudo, authlog.KindSu, authlog.KindSessionOpened:
	default:
		return false
	}
	if n := len(m.auth); n > 0 && rec.Time.Before(m.auth[n-1].Time) {
		m.authDirt = true
	}
	m.auth = append(m.auth, rec)
	m.aidx = nil
	return true
}

// addAudit keeps an audit event a link may use and notes session ends.
// Read FieldsOnly, its strings hold only its fields' bytes, not its
// records' whole text; paths, process title and cwd, which no link reads,
// are dropped.
func (m *Model) addAudit(e *linuxaudit.Event, stream bool) bool {
	if e.Time.After(m.now) {
		m.now = e.Time
	}
	m.noteSession(e)
	if !keepAudit(e) {
		return false
	}
	e.Records, e.Paths, e.Proctitle, e.Cwd = nil, nil, "", ""
	m.insertAudit(e)
	if tool, _, _ := clusterware(e); tool != "" && strings.Contains(e.Key, "oracrs") {
		m.watch = append(m.watch, *e)
	}
	m.kept++
	if stream && m.kept >= settleEvery {
		m.kept = 0
		m.settle(m.now.Add(-linkSlack - settleMargin))
		// Pruning moves every position: amortized over as many new
		// events as it left.
		if len(m.audit) >= 2*m.afterPrune {
			m.prune(m.now.Add(-m.horizon()))
			m.afterPrune = max(len(m.audit), settleEvery)
		}
	}
	return true
}

// insertAudit adds an event in time order (auditd's are nearly in order:
// the few out of place move a few places back).
func (m *Model) insertAudit(e *linuxaudit.Event) {
	m.audit = append(m.audit, *e)
	i := len(m.audit) - 1
	if i > 0 && m.audit[i-1].Time.After(e.Time) {
		for i > 0 && m.audit[i-1].Time.After(e.Time) {
			m.audit[i] = m.audit[i-1]
			i--
		}
		m.audit[i] = *e
	}
	m.Peak = max(m.Peak, len(m.audit))
	if i == len(m.audit)-1 && m.idx != nil {
		m.idx.add(m.audit, int32(i))
	} else {
		m.idx = nil // positions moved
	}
}

// noteSession records when a session was last seen and whether its login
// ended: USER_LOGOUT, or USER_END of the login program (not of sudo or su,
// whose PAM sessions end inside it).
func (m *Model) noteSession(e *linuxaudit.Event) {
	if e.Session == "" || e.Session == linuxaudit.Unset {
		return
	}
	k := sesKey{e.Node, e.Session}
	st := m.sessions[k]
	if st == nil {
		st = &sesState{}
		m.sessions[k] = st
	}
	if e.Time.After(st.last) {
		st.last = e.Time
	}
	if hasType(e, "USER_LOGOUT") || hasType(e, "USER_END") && !strings.HasSuffix(e.Exe, "/sudo") && !strings.HasSuffix(e.Exe, "/su") {
		st.closed = true
	}
}

// wantAuditType selects the audit events the model reads: those keepAudit
// keeps and the session ends. Every other event is dropped unparsed.
func wantAuditType(typ []byte) bool {
	switch string(typ) {
	case "USER_LOGIN", "USER_START", "CRED_ACQ", "USER_CMD", "LOGIN", "EXECVE", "USER_END", "USER_LOGOUT":
		return true
	}
	return false
}

// skipAuditType names the records whose fields no link reads.
func skipAuditType(typ []byte) bool {
	switch string(typ) {
	case "PATH", "PROCTITLE", "CWD":
		return true
	}
	return false
}

func isDBSubject(r oracleaud.Record) bool {
	switch r.Kind {
	case oracleaud.KindStartup, oracleaud.KindShutdown, oracleaud.KindAlterMount, oracleaud.KindAlterOpen:
		return true
	case oracleaud.KindConnect:
		p := strings.ToUpper(r.Privilege)
		return strings.Contains(p, "SYSDBA") || strings.Contains(p, "SYSOPER")
	}
	return false
}

func hasType(e *linuxaudit.Event, t string) bool {
	for _, x := range e.Types {
		if x == t {
			return true
		}
	}
	return false
}

func keepAudit(e *linuxaudit.Event) bool {
	for _, t := range e.Types {
		switch t {
		case "USER_LOGIN", "USER_START", "CRED_ACQ", "USER_CMD", "LOGIN", "EXECVE":
			return true
		}
	}
	return false
}

// settle explains the subjects at or before t, in time order.
func (m *Model) settle(t time.Time) {
	m.settleIf(func(source string, line int, at time.Time) bool { return !at.After(t) })
}

// settleIf explains the subjects ready says are, in time order (the
// Oracle records', then the clusterware commands').
func (m *Model) settleIf(ready func(source string, line int, t time.Time) bool) {
	if !m.dbSorted {
		sort.SliceStable(m.db, func(i, j int) bool { return m.db[i].Time.Before(m.db[j].Time) })
		m.dbSorted = true
	}
	left := m.db[:0]
	for _, r := range m.db {
		if ready(r.Source, r.Line, r.Time) {
			m.explained(m.explainDB(dbSubject(r)))
		} else {
			left = append(left, r)
		}
	}
	clear(m.db[len(left):])
	m.db = left
	w := m.watch[:0]
	for i := range m.watch {
		if e := &m.watch[i]; ready(e.Source, e.Line, e.Time) {
			m.explained(m.explainWatch(e))
		} else {
			w = append(w, *e)
		}
	}
	clear(m.watch[len(w):])
	m.watch = w
}

func (m *Model) explained(c Chain) {
	if m.emit != nil {
		m.emit(c)
		return
	}
	m.done = append(m.done, c)
}

// prune drops the kept events before t that no subject not explained yet
// can use: all but the logins and sudo/su steps of sessions still open or
// seen since t. Sessions closed and not seen since t are forgotten.
func (m *Model) prune(t time.Time) {
	keep := m.audit[:0]
	for i := range m.audit {
		e := &m.audit[i]
		if !e.Time.Before(t) || m.sessionStep(e) && m.sessionAlive(e, t) {
			keep = append(keep, *e)
			continue
		}
		m.Pruned++
	}
	clear(m.audit[len(keep):])
	m.audit = keep
	m.pruneAuth(t)
	for k, st := range m.sessions {
		if st.closed && st.last.Before(t) {
			delete(m.sessions, k)
		}
	}
	m.idx = nil
}

// pruneAuth drops the login-log records before t but the sshd Accepted
// lines of the logins still held (session() looks for them at the
// USER_LOGIN's time, however old).
func (m *Model) pruneAuth(t time.Time) {
	if m.authDirt {
		m.authIndex() // sorts
	}
	logins := map[string][]time.Time{}
	for i := range m.audit {
		if e := &m.audit[i]; e.Addr != "" && hasType(e, "USER_LOGIN") {
			logins[e.Addr] = append(logins[e.Addr], e.Time)
		}
	}
	slack := m.opts.loginSlack()
	keep := m.auth[:0]
	for _, a := range m.auth {
		if !a.Time.Before(t) || a.Kind == authlog.KindSSHAccepted && near(logins[a.Addr], a.Time, slack) {
			keep = append(keep, a)
		}
	}
	clear(m.auth[len(keep):])
	m.auth, m.aidx = keep, nil
}

// near says one of times is within d of t.
func near(times []time.Time, t time.Time, d time.Duration) bool {
	for _, x := range times {
		if x.Sub(t) <= d && t.Sub(x) <= d {
			return true
		}
	}
	return false
}

// sessionStep says session() may read the event however old it is.
func (m *Model) sessionStep(e *linuxaudit.Event) bool {
	return hasType(e, "USER_LOGIN") || hasType(e, "USER_CMD") || hasType(e, "USER_START")
}

func (m *Model) sessionAlive(e *linuxaudit.Event, t time.Time) bool {
	st := m.sessions[sesKey{e.Node, e.Session}]
	return st != nil && (!st.closed || !st.last.Before(t))
}

// Retained is how many audit events and login-log records the model holds
// (the memory test's measure).
func (m *Model) Retained() int { return len(m.audit) + len(m.auth) + len(m.db) + len(m.watch) }

// auditIndex finds the kept audit events a link may use without scanning
// them all: positions in m.audit, in time order.
type auditIndex struct {
	// lastExec is the position of a pid's latest EXECVE event, prevExec
	// the position of the one before it of the same pid (-1: none), per
	// position: a map entry a pid, no slice (most pids exec once).
	lastExec  map[string]int32
	prevExec  []int32
	byTTY     map[string][]int32 // events with a session by terminal (ttyName)
	bySession map[sesKey][]int32
	watch     []int32           // clusterware commands under the oracrs key
	ttys      map[string]string // ttyName of the raw values seen
}

// tty is ttyName, remembered: a log has few terminals, and the name of
// pts1 is a new string each time it is made.
func (x *auditIndex) tty(raw string) string {
	if raw == "" {
		return ""
	}
	if t, ok := x.ttys[raw]; ok {
		return t
	}
	t := ttyName(raw)
	if len(x.ttys) < 4096 {
		x.ttys[raw] = t
	}
	return t
}

func (m *Model) index() *auditIndex {
	if m.idx != nil {
		return m.idx
	}
	x := &auditIndex{lastExec: map[string]int32{}, byTTY: map[string][]int32{}, bySession: map[sesKey][]int32{}, ttys: map[string]string{}}
	for i := range m.audit {
		x.add(m.audit, int32(i))
	}
	m.idx = x
	return x
}

// add indexes the event at position p.
func (x *auditIndex) add(audit []linuxaudit.Event, p int32) {
	e := &audit[p]
	{
		if hasType(e, "EXECVE") {
			for int32(len(x.prevExec)) <= p {
				x.prevExec = append(x.prevExec, -1)
			}
			if last, ok := x.lastExec[e.PID]; ok {
				x.prevExec[p] = last
			}
			x.lastExec[e.PID] = p
			if tool, _, _ := clusterware(e); tool != "" && strings.Contains(e.Key, "oracrs") {
				x.watch = append(x.watch, p)
			}
		}
		if e.Session != "" && e.Session != linuxaudit.Unset {
			x.bySession[sesKey{e.Node, e.Session}] = append(x.bySession[sesKey{e.Node, e.Session}], p)
			a, b := x.tty(e.TTY), x.tty(e.Terminal)
			if a != "" {
				x.byTTY[a] = append(x.byTTY[a], p)
			}
			if b != "" && b != a {
				x.byTTY[b] = append(x.byTTY[b], p)
			}
		}
	}
}

// authIndex finds login-log records by terminal (sudo, su) and address
// (sshd's Accepted).
type authIndex struct {
	byTTY, byAddr map[string][]int32
}

func (m *Model) authIndex() *authIndex {
	if m.authDirt {
		sort.SliceStable(m.auth, func(i, j int) bool { return m.auth[i].Time.Before(m.auth[j].Time) })
		m.authDirt, m.aidx = false, nil
	}
	if m.aidx != nil {
		return m.aidx
	}
	x := &authIndex{byTTY: map[string][]int32{}, byAddr: map[string][]int32{}}
	for i := range m.auth {
		a := &m.auth[i]
		if t := ttyName(a.TTY); t != "" {
			x.byTTY[t] = append(x.byTTY[t], int32(i))
		}
		if a.Addr != "" {
			x.byAddr[a.Addr] = append(x.byAddr[a.Addr], int32(i))
		}
	}
	m.aidx = x
	return x
}

// execs are the positions of a pid's EXECVE events, in time order.
func (x *auditIndex) execs(pid string) []int32 {
	last, ok := x.lastExec[pid]
	if !ok {
		return nil
	}
	var out []int32
	for p := last; p >= 0; p = x.prevExec[p] {
		out = append(out, p)
	}
	slices.Reverse(out)
	return out
}

// sessionEvents are the positions of a session's kept events, in time order.
func (m *Model) sessionEvents(node, ses string) []int32 {
	return m.index().bySession[sesKey{node, ses}]
}

// lastAudit returns the latest of the kept audit events at positions
// (in time order) at or before t that ok accepts.
func (m *Model) lastAudit(t time.Time, positions []int32, ok func(*linuxaudit.Event) bool) *linuxaudit.Event {
	return latest(m.audit, positions, t, func(e *linuxaudit.Event) time.Time { return e.Time }, ok)
}

// lastAuth is lastAudit for login-log records.
func (m *Model) lastAuth(t time.Time, positions []int32, ok func(*authlog.Record) bool) *authlog.Record {
	return latest(m.auth, positions, t, func(a *authlog.Record) time.Time { return a.Time }, ok)
}

// latest returns the latest of all[positions] (in time order) at or before
// t that ok accepts.
func latest[T any](all []T, positions []int32, t time.Time, at func(*T) time.Time, ok func(*T) bool) *T {
	i := sort.Search(len(positions), func(i int) bool { return at(&all[positions[i]]).After(t) })
	for i--; i >= 0; i-- {
		if x := &all[positions[i]]; ok(x) {
			return x
		}
	}
	return nil
}
