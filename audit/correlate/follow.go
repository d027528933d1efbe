package correlate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/latscope/latscope/audit/authlog"
	"github.com/latscope/latscope/audit/linuxaudit"
	"github.com/latscope/latscope/audit/oracleaud"
	"github.com/latscope/latscope/input"
)

// FollowOptions tune Follow.
type FollowOptions struct {
	Options
	// Settle is how long after its subject is read a chain is explained
	// and handed on (default 3 s): the audit log may be flushed after the
	// Oracle record is written.
	Settle time.Duration
	// Poll is how often files and directories are checked for new data,
	// rotation and new files (default 200 ms).
	Poll time.Duration
	// FlushIdle is how long an audit log must be idle for the events it
	// holds open to be handed on (default 1 s).
	FlushIdle time.Duration
}

func (fo FollowOptions) withDefaults() FollowOptions {
	if fo.Settle <= 0 {
		fo.Settle = 3 * time.Second
	}
	if fo.Poll <= 0 {
		fo.Poll = 200 * time.Millisecond
	}
	if fo.FlushIdle <= 0 {
		fo.FlushIdle = time.Second
	}
	return fo
}

// followItem is what a followed input hands the correlating goroutine.
type followItem struct {
	stream   int
	db       *oracleaud.Record
	audit    *linuxaudit.Event
	auth     *authlog.Record
	caughtUp bool
	err      error
}

// Follow reads the paths (audit logs and login logs followed like tail -F
// across rotation and truncation; Oracle audit files, and directories or
// glob patterns whose Oracle audit files, new ones included, are read
// whenever they grow) from their start and keeps reading, handing emit
// each subject's chain once: Settle after the subject was read, and not
// before every input was read to its end once. It returns nil when ctx is
// done (the subjects read by then are explained first), or emit's error.
func Follow(ctx context.Context, paths []string, diag *input.Diagnostics, fo FollowOptions, emit func(Chain) error) error {
	fo = fo.withDefaults()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan followItem, 1024)
	send := func(it followItem) bool {
		select {
		case ch <- it:
			return true
		case <-ctx.Done():
			return false
		}
	}
	var wg sync.WaitGroup
	var oracle []string
	streams := 0
	start := func(run func(id int)) {
		id := streams
		streams++
		wg.Add(1)
		go func() { defer wg.Done(); run(id) }()
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		switch {
		case err == nil && st.IsDir(), err != nil && strings.ContainsAny(p, "*?["):
			oracle = append(oracle, p)
			continue
		case err != nil:
			return err
		}
		f, err := classify(p, make([]byte, input.DetectLimit), fo.InputFormat)
		if err != nil {
			return err
		}
		if f.kind == "oracle" {
			oracle = append(oracle, p)
			continue
		}
		if f.kind == "login" && f.login == "" {
			return fmt.Errorf("%s: not an Oracle audit file, a Linux audit log nor a login log", p)
		}
		start(func(id int) { followStream(ctx, f, id, fo, diag, send) })
	}
	if len(oracle) > 0 {
		start(func(id int) { followOracle(ctx, oracle, id, fo, diag, send) })
	}
	defer wg.Wait()
	defer cancel()

	m := newModel(fo.Options)
	var out []Chain
	m.emit = func(c Chain) { out = append(out, c) }
	seen := map[string]time.Time{}
	caught := make([]bool, streams)
	tick := time.NewTicker(fo.Poll)
	defer tick.Stop()
	flush := func() error {
		sort.SliceStable(out, func(i, j int) bool { return out[i].Subject.Time.Before(out[j].Subject.Time) })
		for _, c := range out {
			delete(seen, subjectID(c.Subject.Source, c.Subject.Line))
			if err := emit(c); err != nil {
				return err
			}
		}
		out = out[:0]
		return nil
	}
	for {
		select {
		case it := <-ch:
			switch {
			case it.err != nil:
				if errors.Is(it.err, context.Canceled) {
					continue
				}
				return it.err
			case it.caughtUp:
				caught[it.stream] = true
			case it.db != nil:
				if m.addDB(*it.db) {
					seen[subjectID(it.db.Source, it.db.Line)] = time.Now()
				}
			case it.auth != nil:
				m.addAuth(*it.auth)
			case it.audit != nil:
				n := len(m.watch)
				m.addAudit(it.audit, false)
				if len(m.watch) > n {
					seen[subjectID(it.audit.Source, it.audit.Line)] = time.Now()
				}
			}
		case now := <-tick.C:
			if !all(caught) {
				continue
			}
			m.settleIf(func(source string, line int, _ time.Time) bool {
				return now.Sub(seen[subjectID(source, line)]) >= fo.Settle
			})
			if err := flush(); err != nil {
				return err
			}
			if len(m.audit) >= 2*m.afterPrune {
				m.prune(m.now.Add(-m.horizon()))
				m.afterPrune = max(len(m.audit), settleEvery)
			}
		case <-ctx.Done():
			m.settleIf(func(string, int, time.Time) bool { return true })
			return flush()
		}
	}
}

func subjectID(source string, line int) string { return fmt.Sprintf("%s:%d", source, line) }

func all(b []bool) bool {
	for _, x := range b {
		if !x {
			return false
		}
	}
	return true
}

// followStream follows an audit log or a login log.
func followStream(ctx context.Context, in inputFile, id int, fo FollowOptions, diag *input.Diagnostics, send func(followItem) bool) {
	f, err := os.Open(in.name)
	if err != nil {
		send(followItem{stream: id, err: err})
		return
	}
	fl := input.Follow(ctx, in.name, f, fo.Poll)
	defer fl.Close()
	// Read to the end once: after the audit reader's idle flush.
	done := false
	fl.NotifyIdle(fo.FlushIdle+fo.Poll, func() error {
		if !done {
			done = true
			send(followItem{stream: id, caughtUp: true})
		}
		return nil
	})
	switch in.kind {
	case "linux-audit":
		rd := linuxaudit.Reader{Want: wantAuditType, FlushIdle: fo.FlushIdle, FieldsOnly: true, Skip: skipAuditType}
		err = rd.Read(ctx, in.name, fl, diag, func(e linuxaudit.Event) error {
			if !send(followItem{stream: id, audit: &e}) {
				return ctx.Err()
			}
			return nil
		})
	default:
		ref := time.Now()
		if st, err := f.Stat(); err == nil {
			ref = st.ModTime()
		}
		rd := authlog.Reader{Year: fo.Year, Reference: ref, Format: in.login}
		err = rd.Read(ctx, in.name, fl, diag, func(r authlog.Record) error {
			if !send(followItem{stream: id, auth: &r}) {
				return ctx.Err()
			}
			return nil
		})
	}
	if err != nil {
		send(followItem{stream: id, err: fmt.Errorf("%s: %w", in.name, err)})
	}
}

// auditFile is an Oracle audit file being watched: Oracle writes one per
// session and appends to it while the session lasts.
type auditFile struct {
	size, readSize int64
	lines          int // records up to this line were handed on
}

// followOracle watches Oracle audit files, directories of them and glob
// patterns: a file is read again whole once it has grown and then kept
// its size for one poll (a record is written at once; waiting for the
// size to settle keeps a half-written one from being read), and its
// records past those already handed on are sent. Files in no Oracle
// format are warned about once and left.
func followOracle(ctx context.Context, specs []string, id int, fo FollowOptions, diag *input.Diagnostics, send func(followItem) bool) {
	files := map[string]*auditFile{}
	ignored := map[string]bool{}
	first := true
	for {
		for _, name := range oracleFiles(specs) {
			if ignored[name] {
				continue
			}
			st, err := os.Stat(name)
			if err != nil {
				continue
			}
			af := files[name]
			if af == nil {
				af = &auditFile{size: -1}
				files[name] = af
			}
			size := st.Size()
			stable := size == af.size || first
			af.size = size
			if !stable || size == af.readSize {
				continue
			}
			if size < af.readSize {
				af.lines = 0 // truncated: read again
			}
			if ok := readOracle(ctx, name, af, diag, send, id); !ok {
				ignored[name] = true
			}
			af.readSize = size
		}
		if first {
			first = false
			if !send(followItem{stream: id, caughtUp: true}) {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(fo.Poll):
		}
	}
}

// readOracle reads an Oracle audit file and sends its new records; false
// when the file is in no Oracle format.
func readOracle(ctx context.Context, name string, af *auditFile, diag *input.Diagnostics, send func(followItem) bool, id int) bool {
	f, err := os.Open(name)
	if err != nil {
		return true
	}
	defer f.Close()
	last := af.lines
	err = oracleaud.Read(ctx, name, f, diag, func(r oracleaud.Record) error {
		if r.Line <= af.lines {
			return nil
		}
		last = max(last, r.Line)
		if !send(followItem{stream: id, db: &r}) {
			return ctx.Err()
		}
		return nil
	})
	af.lines = last
	if errors.Is(err, oracleaud.ErrUnknownFormat) {
		diag.Warn("", "%s: not an Oracle audit file: not followed", name)
		return false
	}
	return true
}

// oracleFiles lists the files of the specs: files as they are, the files
// of directories, the matches of glob patterns.
func oracleFiles(specs []string) []string {
	var out []string
	for _, s := range specs {
		st, err := os.Stat(s)
		switch {
		case err == nil && st.IsDir():
			entries, _ := os.ReadDir(s)
			for _, e := range entries {
				if e.Type().IsRegular() {
					out = append(out, filepath.Join(s, e.Name()))
				}
			}
		case err == nil:
			out = append(out, s)
		default:
			m, _ := filepath.Glob(s)
			out = append(out, m...)
		}
	}
	return out
}
