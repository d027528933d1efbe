// Package jobctl changes latscope serve's collection jobs while they run:
// it checks a job defined through the API, keeps it in the data directory
// (DATA/jobs.db) so that it comes back after a restart, applies the change
// to the runner and records it in the audit log (who, when, from where,
// the job and its source without a password).
//
// Jobs of the configuration file can be paused and resumed through the API
// but not changed or deleted: the file is their authority.
//
// A job's retention is the archive's: the manager tells it (Options.Retain)
// the retention of every job it creates, changes or brings back from the
// store. A deleted job's data stays in the archive, and so does its
// retention: the store keeps it until a job of the same name takes over.
package jobctl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/config"
	"github.com/latscope/latscope/server/jobs"
	"github.com/latscope/latscope/source"
)

// Auditor records who changed what: *auth.Store.
type Auditor interface {
	Audit(ctx context.Context, by auth.Actor, action, target string, ok bool, detail string) error
}

// Options are what the manager needs of the server.
type Options struct {
	// Build makes a runnable job of a definition: its password read from
	// password_file or password_env, its source's opener.
	Build func(config.Job) (jobs.Job, error)
	// CheckSource refuses a SOURCE that a job created through the API
	// may not read (an unknown scheme, a relative path); nil accepts all.
	// It must answer at once: it must not connect anywhere.
	CheckSource func(spec string) error
	// Retain sets how long the archive keeps a job's data, 0 leaving it
	// to the tiers: (*archive.Archive).SetSourceKeep. Nil: not applied.
	// The configuration's jobs' retentions reach the archive through its
	// options (archive.Options.SourceKeep) when it opens.
	Retain func(job string, keep time.Duration)
	Audit  Auditor
	Logger *slog.Logger
	Now    func() time.Time
}

// Manager applies job changes to a runner and keeps them in a store.
type Manager struct {
	runner *jobs.Runner
	store  *Store
	opt    Options

	mu     sync.Mutex // one change at a time
	origin map[string]string
}

// New adds the configured jobs (built by the server) and those kept in
// store to runner (which may not run yet), paused as they were left. A job
// created through the API that a configured job now shadows is an error
// naming both, so that neither is dropped silently.
func New(ctx context.Context, runner *jobs.Runner, store *Store, configured []jobs.Job, opt Options) (*Manager, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	m := &Manager{runner: runner, store: store, opt: opt, origin: map[string]string{}}
	kept, err := store.load(ctx)
	if err != nil {
		return nil, err
	}
	paused := map[string]bool{}
	for _, r := range kept {
		paused[r.def.Name] = r.paused
	}
	for _, j := range configured {
		j.Origin, j.Paused = OriginConfig, paused[j.Name]
		if err := m.add(j); err != nil {
			return nil, err
		}
	}
	for _, r := range kept {
		switch {
		case r.origin == OriginAPI && m.origin[r.def.Name] == OriginConfig:
			return nil, fmt.Errorf("job %q is in the configuration and was also created through the API (kept in the data directory's jobs.db): rename the one in the configuration, or remove it from the configuration and then delete the other with DELETE /api/v1/jobs/%s", r.def.Name, r.def.Name)
		case r.origin == OriginAPI:
			j := m.keptJob(r)
			if err := m.add(j); err != nil {
				return nil, err
			}
			m.retain(j.Name, j.Retention)
		case r.origin == originDeleted && m.origin[r.def.Name] == "":
			m.retainDeleted(r.def)
		case r.origin == originDeleted || m.origin[r.def.Name] == "":
			// The configuration no longer has the job: forget its pause.
			// Or it has a job of a deleted one's name: its retention wins.
			if err := store.delete(ctx, r.def.Name); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

func (m *Manager) add(j jobs.Job) error {
	if err := m.runner.Add(j); err != nil {
		return err
	}
	m.origin[j.Name] = j.Origin
	return nil
}

// keptJob makes the job of a definition kept in the store. One that cannot
// be built any more (its password variable unset since) still runs,
// failing with its error in its state, so that the server starts and the
// job can be seen, fixed or deleted.
func (m *Manager) keptJob(r record) jobs.Job {
	def := r.def
	err := def.Check()
	var j jobs.Job
	if err == nil {
		j, err = m.opt.Build(def)
	}
	if err != nil {
		m.opt.Logger.Warn("a job created through the API cannot start", "job", def.Name, "error", err.Error())
		j = jobs.Job{Name: def.Name, Source: RedactSource(def.Source), Interval: def.Every, Schedule: def.Plan,
			Open: func(context.Context, source.Link) (source.Source, error) { return nil, err }}
	}
	j.Origin, j.Paused, j.Retention = OriginAPI, r.paused, def.Keep
	return j
}

// retain gives the archive a job's retention.
func (m *Manager) retain(name string, keep time.Duration) {
	if m.opt.Retain != nil {
		m.opt.Retain(name, keep)
	}
}

// retainDeleted gives the archive the retention kept of a deleted job.
func (m *Manager) retainDeleted(def config.Job) {
	keep, err := config.ParseKeep(def.Retention)
	if err != nil {
		m.opt.Logger.Warn("the retention kept of a deleted job is not readable; its data follows the tiers'", "job", def.Name, "error", err.Error())
		return
	}
	m.retain(def.Name, keep)
}

// Status is the runner's state of every job.
func (m *Manager) Status() []jobs.Status { return m.runner.Status() }

// Create adds a job defined through the API, kept across restarts, and
// starts it unless paused.
func (m *Manager) Create(ctx context.Context, by auth.Actor, def config.Job, paused bool) (st jobs.Status, err error) {
	defer m.audit(ctx, by, "job.create", def, &err)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := auth.ValidateName("job", def.Name); err != nil {
		return st, fmt.Errorf("%w: %v", auth.ErrInvalid, err)
	}
	if m.origin[def.Name] != "" {
		return st, fmt.Errorf("job %s: %w", def.Name, auth.ErrExists)
	}
	j, err := m.build(def)
	if err != nil {
		return st, err
	}
	j.Origin, j.Paused = OriginAPI, paused
	if err := m.store.put(ctx, record{def: def, origin: OriginAPI, paused: paused}, by, m.opt.Now()); err != nil {
		return st, err
	}
	if err := m.runner.Add(j); err != nil {
		return st, err
	}
	m.origin[def.Name] = OriginAPI
	m.retain(def.Name, j.Retention) // also replaces a deleted job's of this name
	return m.runner.Job(def.Name)
}

// Update replaces a job created through the API by a new definition of
// the same name: the old source stops after writing its in-flight
// interval, the new one goes on in the same archive series. A paused job
// stays paused.
func (m *Manager) Update(ctx context.Context, by auth.Actor, def config.Job) (st jobs.Status, err error) {
	defer m.audit(ctx, by, "job.change", def, &err)
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, err := m.changeable(def.Name)
	if err != nil {
		return st, err
	}
	j, err := m.build(def)
	if err != nil {
		return st, err
	}
	j.Origin, j.Paused = OriginAPI, cur.State == jobs.Paused
	if err := m.store.put(ctx, record{def: def, origin: OriginAPI, paused: j.Paused}, by, m.opt.Now()); err != nil {
		return st, err
	}
	if err := m.runner.Replace(j); err != nil {
		return st, err
	}
	m.retain(def.Name, j.Retention)
	return m.runner.Job(def.Name)
}

// Delete stops a job created through the API (its in-flight interval
// written) and forgets it; its series stay in the archive, and so does its
// retention (kept in the store, so that a restart keeps applying it).
func (m *Manager) Delete(ctx context.Context, by auth.Actor, name string) (err error) {
	var def config.Job
	defer func() { m.audit(ctx, by, "job.delete", def, &err) }()
	def.Name = name
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, err := m.changeable(name)
	if err != nil {
		return err
	}
	def.Source, def.Retention = cur.Source, cur.Retention
	if err := m.forget(ctx, by, def); err != nil {
		return err
	}
	if err := m.runner.Remove(name); err != nil {
		return err
	}
	delete(m.origin, name)
	return nil
}

// forget removes a deleted job's row, or keeps only its retention.
func (m *Manager) forget(ctx context.Context, by auth.Actor, def config.Job) error {
	if def.Retention == "" {
		return m.store.delete(ctx, def.Name)
	}
	kept := config.Job{Name: def.Name, Retention: def.Retention}
	return m.store.put(ctx, record{def: kept, origin: originDeleted}, by, m.opt.Now())
}

// Pause stops a job (its in-flight interval written) until Resume, across
// restarts; any job may be paused, whatever its origin.
func (m *Manager) Pause(ctx context.Context, by auth.Actor, name string) (jobs.Status, error) {
	return m.setPaused(ctx, by, name, true)
}

// Resume runs a paused job again.
func (m *Manager) Resume(ctx context.Context, by auth.Actor, name string) (jobs.Status, error) {
	return m.setPaused(ctx, by, name, false)
}

func (m *Manager) setPaused(ctx context.Context, by auth.Actor, name string, paused bool) (st jobs.Status, err error) {
	action := map[bool]string{true: "job.pause", false: "job.resume"}[paused]
	def := config.Job{Name: name}
	defer func() { m.audit(ctx, by, action, def, &err) }()
	m.mu.Lock()
	defer m.mu.Unlock()
	origin := m.origin[name]
	if origin == "" {
		return st, fmt.Errorf("job %s: %w", name, auth.ErrNotFound)
	}
	if err := m.keepPause(ctx, by, name, origin, paused); err != nil {
		return st, err
	}
	change := m.runner.Resume
	if paused {
		change = m.runner.Pause
	}
	if err := change(name); err != nil {
		return st, err
	}
	st, err = m.runner.Job(name)
	def.Source = st.Source
	return st, err
}

// keepPause stores a job's pause: in its row for a job created through
// the API, in a row of its own (removed on resume) for a configured one.
func (m *Manager) keepPause(ctx context.Context, by auth.Actor, name, origin string, paused bool) error {
	if origin == OriginConfig {
		if !paused {
			return m.store.delete(ctx, name)
		}
		return m.store.put(ctx, record{def: config.Job{Name: name}, origin: OriginConfig, paused: true}, by, m.opt.Now())
	}
	kept, err := m.store.load(ctx)
	if err != nil {
		return err
	}
	for _, r := range kept {
		if r.def.Name == name {
			r.paused = paused
			return m.store.put(ctx, r, by, m.opt.Now())
		}
	}
	return fmt.Errorf("job %q is not in the jobs database", name)
}

// changeable returns the state of a job that the API may change or
// delete: one it created.
func (m *Manager) changeable(name string) (jobs.Status, error) {
	switch m.origin[name] {
	case "":
		return jobs.Status{}, fmt.Errorf("job %s: %w", name, auth.ErrNotFound)
	case OriginConfig:
		return jobs.Status{}, fmt.Errorf("%w: job %s is defined in the configuration file (or on the command line): edit the file and restart the server to change or delete it; the API can pause and resume it", auth.ErrConflict, name)
	}
	return m.runner.Job(name)
}

// build checks a definition made through the API and makes its job.
func (m *Manager) build(def config.Job) (jobs.Job, error) {
	if err := m.check(&def); err != nil {
		return jobs.Job{}, fmt.Errorf("%w: %v", auth.ErrInvalid, err)
	}
	j, err := m.opt.Build(def)
	if err != nil {
		return jobs.Job{}, fmt.Errorf("%w: %v", auth.ErrInvalid, err)
	}
	j.Retention = def.Keep
	return j, nil
}

// check refuses what a job created through the API may not have: a
// password in its source (it would be stored and shown), a password file
// named relative to wherever the server was started, a source the server
// does not accept.
func (m *Manager) check(def *config.Job) error {
	if err := def.Check(); err != nil {
		return err
	}
	if URIPassword(def.Source) {
		return errors.New("the source has a password in it: give the password with password_env (a variable of the server's environment) or password_file instead")
	}
	if def.PasswordFile != "" && (!filepath.IsAbs(def.PasswordFile) || !printable(def.PasswordFile)) {
		return fmt.Errorf("password_file %q: want an absolute path", def.PasswordFile)
	}
	if def.PasswordEnv != "" && !envName(def.PasswordEnv) {
		return fmt.Errorf("password_env %q: want a variable's name (letters, digits and '_', not starting with a digit)", def.PasswordEnv)
	}
	if m.opt.CheckSource != nil {
		return m.opt.CheckSource(def.Source)
	}
	return nil
}

// audit records a change, done or refused, with the job's source
// without its password.
func (m *Manager) audit(ctx context.Context, by auth.Actor, action string, def config.Job, err *error) {
	var detail []string
	if def.Source != "" {
		detail = append(detail, "source="+RedactSource(def.Source))
	}
	for _, kv := range [][2]string{{"interval", def.Interval}, {"schedule", def.Schedule}, {"retention", def.Retention},
		{"password_env", def.PasswordEnv}, {"password_file", def.PasswordFile}} {
		if kv[1] != "" {
			detail = append(detail, kv[0]+"="+kv[1])
		}
	}
	if *err != nil {
		detail = append(detail, "error="+(*err).Error())
	}
	ctx = context.WithoutCancel(ctx)
	if aerr := m.opt.Audit.Audit(ctx, by, action, auditTarget(def.Name), *err == nil, strings.Join(detail, " ")); aerr != nil {
		m.opt.Logger.Error("audit log write failed", "action", action, "error", aerr.Error())
	}
}

// auditTarget is a job's name as the audit log shows it: a name refused
// for being unprintable or too long is quoted and cut, so that it cannot
// hide anything in the log.
func auditTarget(name string) string {
	if config.CheckJobName(name) == nil {
		return name
	}
	if len(name) > 128 {
		name = name[:128]
	}
	return strconv.QuoteToASCII(name)
}

func printable(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) })
}

// envName reports whether s can name an environment variable.
func envName(s string) bool {
	for i, c := range s {
		letter := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return s != ""
}

// URIPassword reports whether a SOURCE is a URI with a password in it.
func URIPassword(spec string) bool { return RedactSource(spec) != spec }

// queryPassword finds a password given as a URI's query parameter, as
// libpq's and pgx's password=.
var queryPassword = regexp.MustCompile(`(?i)([?&](?:password|passwd|pwd)=)[^&#]*`)

// RedactSource is a SOURCE as shown: a URI's password removed, also from
// a URI that does not parse (a bad port must not reveal the password), and
// a password=... query parameter's value replaced by REDACTED.
func RedactSource(spec string) string {
	if strings.Contains(spec, "://") {
		spec = queryPassword.ReplaceAllString(spec, "${1}REDACTED")
	}
	return redactUserinfo(spec)
}

// redactUserinfo removes the password of a URI's user:password@.
func redactUserinfo(spec string) string {
	if u, err := url.Parse(spec); err == nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.User(u.User.Username())
			return u.String()
		}
		return spec
	}
	scheme, rest, ok := strings.Cut(spec, "://")
	if !ok {
		return spec
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	at := strings.LastIndex(authority, "@")
	if at < 0 {
		return spec
	}
	user, _, hasPassword := strings.Cut(authority[:at], ":")
	if !hasPassword {
		return spec
	}
	return scheme + "://" + user + rest[at:]
}
