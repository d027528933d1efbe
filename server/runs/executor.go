package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latscope/latscope/server/auth"
)

// Defaults of Options.
const (
	DefaultMaxConcurrent = 2
	DefaultKeep          = 30 * 24 * time.Hour
	DefaultGrace         = 10 * time.Second
	DefaultLogCap        = 1 << 20
)

// Options configure an Executor. The zero value of each field means its
// default.
type Options struct {
	// Data is the data directory: runs.db, the runs' files under runs/,
	// the archive report runs read.
	Data string
	// Binary is latscope's executable (os.Executable()).
	Binary string
	// MaxConcurrent runs at once; the others wait in a queue (2).
	MaxConcurrent int
	// IOTestDirs are where iotest runs may create their scratch file;
	// none: only DATA/runs/scratch.
	IOTestDirs []string
	// NetTestTargets are the host:port a nettest run may measure; none:
	// only loopback addresses.
	NetTestTargets []string
	// Keep is how long ended runs are kept (30 days).
	Keep time.Duration
	// Grace is the time between SIGTERM and SIGKILL on cancel (10 s).
	Grace time.Duration
	// LogCap bounds each run's log (1 MiB); the rest is dropped, said so.
	LogCap int64
	// MaxStreams caps the concurrent event streams of runs (100); more
	// are answered 503.
	MaxStreams int
	// StreamHeartbeat is the period of the streams' heartbeats, which
	// recheck their credential (15 s).
	StreamHeartbeat time.Duration
	// Audit records runs started, cancelled and finished (auth.Store).
	Audit  Auditor
	Logger *slog.Logger
	Now    func() time.Time
}

// Auditor writes the audit log; auth.Store is one.
type Auditor interface {
	Audit(ctx context.Context, by auth.Actor, action, target string, ok bool, detail string) error
}

// Executor starts, queues, cancels and records runs.
type Executor struct {
	opt    Options
	policy policy
	store  *store

	mu     sync.Mutex
	queue  []*active
	live   map[int64]*active // queued and running runs
	closed bool
	wg     sync.WaitGroup

	streams *streams
}

// Open opens DATA/runs.db, marks the runs a crashed server left behind as
// failed ("server stopped") and returns an executor with nothing running.
func Open(ctx context.Context, opt Options) (*Executor, error) {
	if opt.Data == "" {
		return nil, errors.New("runs: no data directory")
	}
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	pol, err := newPolicy(opt)
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, filepath.Join(opt.Data, DBName))
	if err != nil {
		return nil, err
	}
	e := &Executor{opt: opt, policy: pol, store: st, live: map[int64]*active{}, streams: newStreams(opt.MaxStreams)}
	ids, err := st.failOrphans(ctx, opt.Now())
	if err != nil {
		st.close()
		return nil, err
	}
	for _, id := range ids {
		opt.Logger.Warn("run left unfinished by a stopped server marked failed", "run", id)
		e.appendLog(id, "latscope serve: the server stopped during this run; marked failed at restart\n")
	}
	return e, nil
}

func (o Options) withDefaults() (Options, error) {
	if o.Binary == "" {
		bin, err := os.Executable()
		if err != nil {
			return o, fmt.Errorf("runs: latscope's executable: %w", err)
		}
		o.Binary = bin
	}
	orDefault(&o.MaxConcurrent, DefaultMaxConcurrent)
	orDefault(&o.Keep, DefaultKeep)
	orDefault(&o.Grace, DefaultGrace)
	orDefault(&o.LogCap, DefaultLogCap)
	orDefault(&o.MaxStreams, DefaultMaxStreams)
	orDefault(&o.StreamHeartbeat, DefaultStreamHeartbeat)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// orDefault gives an option left at zero (or negative) its default.
func orDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// newPolicy resolves the allowed directories (created if the default)
// and normalises the allowed targets.
func newPolicy(o Options) (policy, error) {
	data, err := filepath.Abs(o.Data)
	if err != nil {
		return policy{}, fmt.Errorf("runs: data directory: %w", err)
	}
	p := policy{data: data, processExists: processExists, loopbackOnly: len(o.NetTestTargets) == 0}
	dirs := o.IOTestDirs
	if len(dirs) == 0 {
		scratch := filepath.Join(data, "runs", "scratch")
		if err := os.MkdirAll(scratch, 0o700); err != nil {
			return p, fmt.Errorf("runs: %w", err)
		}
		dirs = []string{scratch}
	}
	for _, d := range dirs {
		real, err := filepath.EvalSymlinks(d)
		if err != nil || !filepath.IsAbs(d) {
			return p, fmt.Errorf("runs.iotest_dirs: %q: want an existing absolute directory", d)
		}
		p.iotestDirs = append(p.iotestDirs, real)
	}
	for _, t := range o.NetTestTargets {
		host, port, err := net.SplitHostPort(t)
		if err != nil || host == "" {
			return p, fmt.Errorf("runs.nettest_targets: %q: want HOST:PORT", t)
		}
		p.nettestTargets = append(p.nettestTargets, net.JoinHostPort(strings.ToLower(host), port))
	}
	return p, nil
}

// active is a queued or running run.
type active struct {
	run       Run // guarded by Executor.mu
	plan      plan
	dir       string
	starter   auth.Actor
	cancelled bool
	stopping  bool // cancelled by the server's shutdown
	proc      *process
	log       *runLog
	// started is when the run started (Unix nanoseconds, 0 before),
	// read without Executor.mu by the log's progress events.
	started atomic.Int64
	feed
}

// Start validates a run's parameters, stores it and starts it, or queues
// it when MaxConcurrent runs are running.
func (e *Executor) Start(ctx context.Context, by auth.Actor, kind string, raw json.RawMessage) (Run, error) {
	pol := e.policy
	pol.now = e.opt.Now()
	p, err := decodeParams(kind, raw, pol)
	if err != nil {
		e.audit(ctx, by, "run.start", "", false, err.Error())
		return Run{}, fmt.Errorf("%w: %v", auth.ErrInvalid, err)
	}
	params, err := json.Marshal(p)
	if err != nil {
		return Run{}, err
	}
	r := Run{Kind: kind, Params: params, User: by.User, Remote: by.Remote, State: Queued, CreatedAt: pol.now.UTC(),
		Commands: [][]string{}, Outputs: []Output{}}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.closed:
		return Run{}, errors.New("runs: the server is stopping")
	case len(e.queue) >= MaxQueued:
		return Run{}, fmt.Errorf("%w: %d runs are queued already: wait for them or cancel some", auth.ErrInvalid, len(e.queue))
	}
	if r.ID, err = e.store.insert(ctx, r); err != nil {
		return Run{}, err
	}
	dir := e.runDir(r.ID)
	a := &active{run: r, plan: p.plan(pol, dir), dir: dir, starter: by}
	for _, s := range a.plan.steps {
		a.run.Commands = append(a.run.Commands, append([]string{"latscope"}, s.args...))
	}
	err = e.store.setCommands(ctx, r.ID, a.run.Commands)
	if err == nil {
		a.log, err = openLog(dir, e.opt.LogCap, func(ev Event) {
			if ev.Progress != nil {
				ev.Progress.Percent = a.elapsedPercent(e.opt.Now())
			}
			a.publish(ev)
		})
	}
	if err != nil {
		a.run.State, a.run.Error, a.run.EndedAt = Failed, err.Error(), ptr(pol.now.UTC())
		if serr := e.store.setEnded(context.WithoutCancel(ctx), a.run); serr != nil {
			err = errors.Join(err, serr)
		}
		return Run{}, err
	}
	e.live[r.ID] = a
	e.queue = append(e.queue, a)
	e.audit(ctx, by, "run.start", runTarget(r.ID), true, kind+" "+string(params))
	e.opt.Logger.Info("run queued", "run", r.ID, "kind", kind, "user", by.User, "remote", by.Remote)
	e.scheduleLocked()
	return e.snapshotLocked(a), nil
}

// scheduleLocked starts queued runs while fewer than MaxConcurrent run.
func (e *Executor) scheduleLocked() {
	running := 0
	for _, a := range e.live {
		if a.run.State == Running {
			running++
		}
	}
	for running < e.opt.MaxConcurrent && len(e.queue) > 0 && !e.closed {
		a := e.queue[0]
		e.queue = e.queue[1:]
		now := e.opt.Now().UTC()
		a.run.State, a.run.StartedAt = Running, &now
		a.started.Store(now.UnixNano())
		if err := e.store.setStarted(context.Background(), a.run.ID, now); err != nil {
			e.opt.Logger.Error("run start not stored", "run", a.run.ID, "err", err)
		}
		running++
		a.publish(Event{Type: EventState, Run: ptr(e.snapshotLocked(a))})
		e.wg.Add(1)
		go e.execute(a)
	}
}

// execute runs a run's steps in order until one fails or it is cancelled.
func (e *Executor) execute(a *active) {
	defer e.wg.Done()
	a.log.say("run %d (%s) started by %s from %s", a.run.ID, a.run.Kind, a.starter.User, a.starter.Remote)
	exit, errMsg, completed := 0, "", 0
	for _, s := range a.plan.steps {
		code, stopped, err := e.runStep(a, s)
		if err != nil {
			exit, errMsg = -1, err.Error()
			break
		}
		if stopped {
			exit = code
			break
		}
		if code != 0 {
			exit, errMsg = code, "exit status "+strconv.Itoa(code)
			break
		}
		completed++
	}
	e.finish(a, exit, errMsg, completed == len(a.plan.steps))
}

// runStep runs one child to its end and says whether cancel stopped it;
// a run cancelled meanwhile starts none (its exit code then is -1).
func (e *Executor) runStep(a *active, s step) (code int, stopped bool, err error) {
	e.mu.Lock()
	if a.cancelled {
		e.mu.Unlock()
		return -1, true, nil
	}
	a.log.say("$ latscope %s", strings.Join(s.args, " "))
	p, err := startProcess(e.opt.Binary, s, a.dir, a.log, e.opt.Grace)
	a.proc = p
	e.mu.Unlock()
	if err != nil {
		return 0, false, err
	}
	code = p.wait()
	e.mu.Lock()
	defer e.mu.Unlock()
	a.proc = nil
	return code, p.stopped, nil
}

// finish stores a run's end, audits it, tells its subscribers and starts
// the next queued run. A run that completed every step succeeded even if
// a cancel came in as it ended.
func (e *Executor) finish(a *active, exit int, errMsg string, completed bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.opt.Now().UTC()
	r := &a.run
	r.EndedAt = &now
	switch {
	case a.cancelled && !completed:
		r.State = Cancelled
		if a.stopping {
			errMsg = ServerStopped
		} else {
			errMsg = "cancelled"
		}
	case errMsg == "":
		r.State = Succeeded
	default:
		r.State = Failed
	}
	if r.StartedAt != nil {
		r.ExitCode = &exit
	}
	r.Error = errMsg
	a.log.close(fmt.Sprintf("latscope serve: run %d %s\n", r.ID, describeEnd(*r)))
	r.Outputs = outputsOf(a.dir)
	r.Progress = a.log.progress(r.Progress)
	if r.State == Succeeded {
		r.Progress.Percent = percent(100)
	}
	if err := e.store.setEnded(context.Background(), *r); err != nil {
		e.opt.Logger.Error("run end not stored", "run", r.ID, "err", err)
	}
	e.audit(context.Background(), a.starter, "run.finish", runTarget(r.ID), r.State == Succeeded, r.Kind+" "+describeEnd(*r))
	e.opt.Logger.Info("run ended", "run", r.ID, "kind", r.Kind, "state", r.State, "error", r.Error)
	a.end(e.snapshotLocked(a))
	delete(e.live, r.ID)
	e.queue = slices.DeleteFunc(e.queue, func(q *active) bool { return q == a })
	e.scheduleLocked()
}

func describeEnd(r Run) string {
	s := string(r.State)
	if r.ExitCode != nil {
		s += ", exit code " + strconv.Itoa(*r.ExitCode)
	}
	if r.Error != "" && r.Error != string(r.State) {
		s += ": " + r.Error
	}
	return s
}

// Cancel cancels a queued run at once, or a running one: SIGTERM to its
// process group, SIGKILL after the grace period.
func (e *Executor) Cancel(ctx context.Context, by auth.Actor, id int64) (Run, error) {
	e.mu.Lock()
	a, ok := e.live[id]
	if !ok {
		e.mu.Unlock()
		r, err := e.store.get(ctx, id)
		if err != nil {
			return Run{}, err
		}
		return Run{}, fmt.Errorf("%w: run %d has already ended (%s)", auth.ErrInvalid, id, r.State)
	}
	e.cancelLocked(a, by.User, false)
	e.audit(ctx, by, "run.cancel", runTarget(id), true, a.run.Kind)
	snap := e.snapshotLocked(a)
	e.mu.Unlock()
	if snap.State == Queued {
		e.finish(a, 0, "", false)
		return e.Get(ctx, id)
	}
	return snap, nil
}

// cancelLocked marks a run cancelled and signals its running child.
func (e *Executor) cancelLocked(a *active, by string, stopping bool) {
	if a.cancelled {
		return
	}
	a.cancelled, a.stopping, a.run.CancelledBy = true, stopping, by
	e.queue = slices.DeleteFunc(e.queue, func(q *active) bool { return q == a })
	if a.proc != nil {
		a.proc.stop()
	}
}

// Get returns a run: live state for a queued or running one.
func (e *Executor) Get(ctx context.Context, id int64) (Run, error) {
	e.mu.Lock()
	if a, ok := e.live[id]; ok {
		defer e.mu.Unlock()
		return e.snapshotLocked(a), nil
	}
	e.mu.Unlock()
	return e.store.get(ctx, id)
}

// MaxQueued bounds the queue: a start beyond it is refused.
const MaxQueued = 100

// MaxPage bounds one page of List.
const MaxPage = 200

// List returns up to limit runs with ids below before (0: the newest),
// newest first.
func (e *Executor) List(ctx context.Context, before int64, limit int) ([]Run, error) {
	if limit <= 0 || limit > MaxPage {
		limit = MaxPage
	}
	list, err := e.store.list(ctx, before, limit)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, r := range list {
		if a, ok := e.live[r.ID]; ok {
			list[i] = e.snapshotLocked(a)
		}
	}
	return list, nil
}

func (e *Executor) snapshotLocked(a *active) Run {
	r := a.run
	r.Commands = slices.Clone(r.Commands)
	r.Outputs = slices.Clone(a.run.Outputs)
	if !r.State.Final() {
		r.Outputs = []Output{}
		if out, ok := fileOutput(a.dir, LogName); ok {
			r.Outputs = append(r.Outputs, out)
		}
	}
	r.Progress = a.progress(e.opt.Now())
	return r
}

// progress is the run's latest line and, while it runs, how much of its
// planned time has passed (at most 99 % until it ends).
func (a *active) progress(now time.Time) Progress {
	p := a.log.progress(a.run.Progress)
	if a.run.State == Running {
		p.Percent = a.elapsedPercent(now)
	}
	return p
}

// elapsedPercent is the share of the planned time passed since the run
// started, at most 99 (nil before it starts or when the kind plans no
// time).
func (a *active) elapsedPercent(now time.Time) *float64 {
	start := a.started.Load()
	if start == 0 || a.plan.estimate <= 0 {
		return nil
	}
	done := now.Sub(time.Unix(0, start)).Seconds() / a.plan.estimate.Seconds() * 100
	return percent(max(0, min(99, float64(int(done*10))/10)))
}

// Prune deletes the runs that ended more than Keep ago, with their files.
func (e *Executor) Prune(ctx context.Context) (int, error) {
	ids, err := e.store.prune(ctx, e.opt.Now().Add(-e.opt.Keep))
	for _, id := range ids {
		if rerr := os.RemoveAll(e.runDir(id)); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	return len(ids), err
}

// Close cancels every queued and running run (marked cancelled, "server
// stopped"), waits for their children to end and closes the database.
func (e *Executor) Close() error {
	e.mu.Lock()
	e.closed = true
	queued := slices.Clone(e.queue)
	for _, a := range e.live {
		e.cancelLocked(a, "", true)
	}
	e.mu.Unlock()
	for _, a := range queued {
		e.finish(a, 0, "", false)
	}
	e.wg.Wait()
	return e.store.close()
}

// OutputPath returns the file of a run's output, if the run has it.
func (e *Executor) OutputPath(ctx context.Context, id int64, name string) (string, error) {
	r, err := e.Get(ctx, id)
	if err != nil {
		return "", err
	}
	for _, o := range r.Outputs {
		if o.Name == name {
			return filepath.Join(e.runDir(id), o.Name), nil
		}
	}
	return "", fmt.Errorf("run %d has no output %q: %w", id, name, auth.ErrNotFound)
}

// LogPath returns the file of a run's log, which may not exist yet.
func (e *Executor) LogPath(ctx context.Context, id int64) (Run, string, error) {
	r, err := e.Get(ctx, id)
	return r, filepath.Join(e.runDir(id), LogName), err
}

func (e *Executor) runDir(id int64) string {
	return filepath.Join(e.policy.data, "runs", strconv.FormatInt(id, 10))
}

// appendLog adds a line to the log of a run that is not live.
func (e *Executor) appendLog(id int64, line string) {
	f, err := os.OpenFile(filepath.Join(e.runDir(id), LogName), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		f.WriteString(line)
		f.Close()
	}
}

func (e *Executor) audit(ctx context.Context, by auth.Actor, action, target string, ok bool, detail string) {
	if e.opt.Audit == nil {
		return
	}
	if err := e.opt.Audit.Audit(context.WithoutCancel(ctx), by, action, target, ok, detail); err != nil {
		e.opt.Logger.Error("audit log write failed", "action", action, "err", err)
	}
}

func runTarget(id int64) string { return "run " + strconv.FormatInt(id, 10) }

func errNotFound(id int64) error { return fmt.Errorf("run %d: %w", id, auth.ErrNotFound) }

// outputsOf lists the files a run left, in name order, the known names
// only.
func outputsOf(dir string) []Output {
	outs := []Output{}
	for _, name := range slices.Sorted(maps.Keys(contentTypes)) {
		if out, ok := fileOutput(dir, name); ok {
			outs = append(outs, out)
		}
	}
	return outs
}

func fileOutput(dir, name string) (Output, bool) {
	fi, err := os.Stat(filepath.Join(dir, name))
	if err != nil || !fi.Mode().IsRegular() || (fi.Size() == 0 && name != LogName) {
		return Output{}, false
	}
	return Output{Name: name, Size: fi.Size(), ContentType: contentTypes[name]}, true
}
