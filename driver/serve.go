package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/server/api"
	"github.com/latscope/latscope/server/auditwatch"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/config"
	"github.com/latscope/latscope/server/httpsec"
	"github.com/latscope/latscope/server/jobctl"
	"github.com/latscope/latscope/server/jobs"
	"github.com/latscope/latscope/server/live"
	"github.com/latscope/latscope/server/metrics"
	"github.com/latscope/latscope/server/runs"
	"github.com/latscope/latscope/server/web"
	"github.com/latscope/latscope/sink/promnative"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/prometheus"
)

// AuthDBName is the users' database inside a data directory, beside the
// archive's latscope.db. Two files rather than one: the archive owns its
// database (its clean-close marker and integrity check on open, its size
// cap counting every page of the file, readers opening it read-only), and
// users can be added or reset while the archive is busy or copied elsewhere.
const AuthDBName = "auth.db"

// JobsDBName keeps the jobs created through the API and the jobs' pauses
// (server/jobctl), so that they survive a restart.
const JobsDBName = "jobs.db"

// ServeConfig configures `latscope serve`: a configuration file, or the
// quick form's sources and flags (which also override the file's values).
type ServeConfig struct {
	ConfigFile string
	Sources    []string
	Data       string
	Listen     string
	TLSCert    string
	TLSKey     string
	// InsecureListen serves plain HTTP on a non-loopback address.
	InsecureListen bool
	// Interval and Schedule apply to the quick form's sources (a schedule
	// only to probes, which load what they measure).
	Interval time.Duration
	Schedule string
	Stderr   io.Writer
	// Backoff bounds restarts of failed jobs (zero: jobs.DefaultBackoff).
	Backoff jobs.Backoff
	// Prometheus is the fleet store's query API (--prometheus): it
	// overrides the file's fleet.prometheus.
	Prometheus string
}

// maintainServeEvery is how often serve downsamples, applies retention
// and forgets ended sessions.
const maintainServeEvery = time.Minute

// resolve merges the file and the flags into one configuration.
func (sc ServeConfig) resolve() (*config.Config, error) {
	c := &config.Config{}
	if sc.ConfigFile != "" {
		var err error
		if c, err = config.Load(sc.ConfigFile); err != nil {
			return nil, err
		}
	}
	for _, v := range []struct {
		dst  *string
		flag string
	}{{&c.Data, sc.Data}, {&c.Listen, sc.Listen}, {&c.TLSCert, sc.TLSCert}, {&c.TLSKey, sc.TLSKey}} {
		if v.flag != "" {
			*v.dst = v.flag
		}
	}
	c.InsecureListen = c.InsecureListen || sc.InsecureListen
	if sc.Prometheus != "" {
		c.Fleet.Prometheus = sc.Prometheus
		if err := c.Fleet.Check(); err != nil {
			return nil, fmt.Errorf("--prometheus: %w", err)
		}
	}
	quick, err := quickJobs(sc.Sources, sc.Interval, sc.Schedule)
	if err != nil {
		return nil, err
	}
	c.Jobs = append(c.Jobs, quick...)
	if c.Data == "" {
		return nil, errors.New("serve needs a data directory: --data DIR or data: in the configuration")
	}
	if len(c.Jobs) == 0 && !c.Fleet.Enabled() && len(c.AuditWatches) == 0 {
		return nil, errors.New("serve needs at least one SOURCE to record, jobs: or audit_watches: in the configuration, or a fleet store to show (--prometheus)")
	}
	return c, nil
}

// quickJobs makes one job per SOURCE of the quick form, named after it.
func quickJobs(sources []string, interval time.Duration, schedule string) ([]config.Job, error) {
	plan, err := jobs.ParseSchedule(schedule)
	if err != nil {
		return nil, err
	}
	if interval <= 0 {
		interval = config.DefaultInterval
	}
	var out []config.Job
	for _, spec := range sources {
		j := config.Job{Name: jobctl.RedactSource(spec), Source: spec, Every: interval, Interval: interval.String()}
		if isProbe(spec) && !isDatabase(spec) {
			j.Plan, j.Schedule = plan, schedule
		}
		out = append(out, j)
	}
	return out, nil
}

// Serve runs latscope serve until ctx ends: the jobs write the archive,
// the API answers, and on shutdown the in-flight intervals are written
// and the archive closed cleanly.
func Serve(ctx context.Context, sc ServeConfig) error {
	c, err := sc.resolve()
	if err != nil {
		return err
	}
	redactor := &httpsec.Redactor{}
	logger := slog.New(redactor.Handler(slog.NewTextHandler(sc.Stderr, nil)))
	defs, err := jobDefinitions(c.Jobs, redactor, logger)
	if err != nil {
		return err
	}
	return serveJobs(ctx, sc, c, defs, redactor, logger)
}

// serveJobs serves the configuration with its jobs made runnable; the
// load benchmark gives it synthetic jobs.
func serveJobs(ctx context.Context, sc ServeConfig, c *config.Config, defs []jobs.Job, redactor *httpsec.Redactor, logger *slog.Logger) error {
	// Listen before anything is created, so that a refused or busy
	// address does not spend the first start's admin password.
	ln, tlsConfig, err := httpsec.Listen(httpsec.ListenConfig{Addr: c.Listen, TLSCert: c.TLSCert, TLSKey: c.TLSKey, AllowInsecureRemote: c.InsecureListen}, logger)
	if err != nil {
		return err
	}
	defer ln.Close()
	if err := os.MkdirAll(c.Data, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	// The archive first: its writer's lock refuses a second server on
	// the data directory before it touches the users (two first starts
	// would both try to create the admin).
	arch, err := archive.Open(c.Data, archiveOptions(c))
	if err != nil {
		return err
	}
	store, err := openUsers(ctx, c.Data, logger)
	if err != nil {
		arch.Close()
		return err
	}
	defer store.Close()
	if err := bootstrap(ctx, store, sc.Stderr, c); err != nil {
		arch.Close()
		return err
	}
	backoff := sc.Backoff
	if backoff == (jobs.Backoff{}) {
		backoff = jobs.DefaultBackoff()
	}
	hub := live.NewHub(arch, live.Options{MaxStreams: c.LiveStreams, Logger: logger})
	var runner *jobs.Runner
	mapping := prometheusOptions(c.Prometheus, func() []jobs.Status { return runner.Status() })
	series := promnative.NewMapper(mapping)
	senders, err := openRemoteWrites(c, mapping, logger)
	if err != nil {
		arch.Close()
		return err
	}
	var out jobs.Writer = senders.writer(live.Publishing(metrics.Counting(arch, series), hub))
	if c.OTLP.Enabled() {
		fwd, err := newOTLPForward(c.OTLP, out, sc.Stderr, logger)
		if err != nil {
			arch.Close()
			return err
		}
		defer fwd.close() // after runServer: the jobs' last intervals go too
		go fwd.run(ctx)
		out = fwd
	}
	runner, control, jobStore, err := openJobs(ctx, c.Data, defs, out, arch.SetSourceKeep, backoff, store, redactor, logger)
	if err != nil {
		arch.Close()
		return err
	}
	defer senders.run(ctx)()
	defer jobStore.Close()
	executor, err := openRuns(ctx, c, store, logger)
	if err != nil {
		arch.Close()
		return err
	}
	rt := httpsec.NewRouter(store, httpsec.Config{TLS: tlsConfig != nil, Logger: logger})
	fleet, err := openFleet(c.Fleet, sc.Stderr)
	var watches *auditwatch.Set
	if err == nil {
		watches, err = openAuditWatches(c, logger)
	}
	if err != nil {
		executor.Close()
		arch.Close()
		return err
	}
	defer runAuditWatches(ctx, watches)()
	api.RegisterServe(rt, api.Data{Archive: arch, Jobs: runner.Status, Sinks: Sinks(), JobControl: control, Runs: executor, Live: hub, Tiers: c.Archive.Parsed, Metrics: series, Fleet: fleet,
		AuditWatches: watches, AuditTimeline: auditTimelinePage})
	err = web.Register(rt)
	var h http.Handler
	if err == nil {
		h, err = rt.Handler()
	}
	if err != nil {
		executor.Close()
		arch.Close()
		return err
	}
	srv := httpsec.NewServer(h, httpsec.DefaultTimeouts(), tlsConfig, logger)
	srv.RegisterOnShutdown(hub.Close) // open streams would hold Shutdown
	srv.RegisterOnShutdown(executor.EndStreams)
	go hub.WatchJobs(ctx, runner.Status, time.Second)
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
	}
	watching := ""
	if n := len(c.AuditWatches); n > 0 {
		watching = fmt.Sprintf(", %d audit watch(es)", n)
	}
	fmt.Fprintf(sc.Stderr, "latscope: serving on %s://%s: %d job(s)%s, data in %s\n", scheme, ln.Addr(), len(runner.Status()), watching, c.Data)
	return runServer(ctx, srv, ln, runner, arch, maintenance{arch: arch, users: store, auditKeep: c.Audit.Retention(), runs: executor, log: logger})
}

// openFleet connects the fleet block's store (nil: none configured).
func openFleet(f config.Fleet, warn io.Writer) (*api.Fleet, error) {
	if !f.Enabled() {
		return nil, nil
	}
	base, err := url.Parse(f.Prometheus)
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	client, err := prometheus.NewClient(base, source.ServerOptions{TokenFile: f.BearerTokenFile, CAFile: f.CAFile}, warn)
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	return &api.Fleet{Client: client, Metric: f.Metric, MinStep: f.Step, Lookback: f.Back}, nil
}

// prometheusOptions are the configuration's labels and guard for the
// Prometheus series; a job's source kind is the scheme of its SOURCE.
// status is called only once intervals flow, after the runner exists.
func prometheusOptions(p config.Prometheus, status func() []jobs.Status) promnative.Options {
	host := p.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	guard := p.MaxEventsPerJob
	if guard == 0 { // a configuration not read from a file
		guard = config.DefaultMaxEventsPerJob
	}
	return promnative.Options{Host: host, MaxEventsPerJob: guard, Metric: p.Metric,
		SourceKind: func(job string) string {
			for _, s := range status() {
				if s.Name == job {
					return promnative.SourceKind(s.Source)
				}
			}
			return ""
		}}
}

// openJobs makes the runner of the configured jobs and of those created
// through the API (kept in DATA/jobs.db, returned to be closed), and the
// manager that changes them and gives their retentions to retain.
func openJobs(ctx context.Context, data string, defs []jobs.Job, out jobs.Writer, retain func(string, time.Duration), backoff jobs.Backoff, audit *auth.Store,
	redactor *httpsec.Redactor, logger *slog.Logger) (*jobs.Runner, *jobctl.Manager, *jobctl.Store, error) {
	runner, err := jobs.NewRunner(nil, out, backoff, logger)
	if err != nil {
		return nil, nil, nil, err
	}
	store, err := jobctl.OpenStore(ctx, filepath.Join(data, JobsDBName))
	if err != nil {
		return nil, nil, nil, err
	}
	control, err := jobctl.New(ctx, runner, store, defs, jobctl.Options{
		Build:       func(cj config.Job) (jobs.Job, error) { return jobDefinition(cj, redactor, logger) },
		CheckSource: checkAPISource, Retain: retain, Audit: audit, Logger: logger})
	if err != nil {
		store.Close()
		return nil, nil, nil, err
	}
	return runner, control, store, nil
}

// openRuns opens the on-demand runs' executor with the configuration's
// limits.
func openRuns(ctx context.Context, c *config.Config, store *auth.Store, logger *slog.Logger) (*runs.Executor, error) {
	return runs.Open(ctx, runs.Options{Data: c.Data, MaxConcurrent: c.Runs.MaxConcurrent, IOTestDirs: c.Runs.IOTestDirs,
		NetTestTargets: c.Runs.NetTestTargets, Keep: c.Runs.KeepFor, Audit: store, Logger: logger})
}

// archiveOptions are the configuration's tiers, size cap and per-job
// retentions (a job's name is its source in the archive).
func archiveOptions(c *config.Config) archive.Options {
	opts := archive.Options{Tiers: c.Archive.Parsed, MaxBytes: c.Archive.MaxBytes}
	for _, j := range c.Jobs {
		if j.Keep > 0 {
			if opts.SourceKeep == nil {
				opts.SourceKeep = map[string]time.Duration{}
			}
			opts.SourceKeep[j.Name] = j.Keep
		}
	}
	return opts
}

// runServer serves until ctx ends, then stops the server and the jobs
// and closes the archive.
func runServer(ctx context.Context, srv *http.Server, ln net.Listener, runner *jobs.Runner, arch *archive.Archive, m maintenance) error {
	logger, executor := m.log, m.runs
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	var wg sync.WaitGroup
	wg.Go(func() { runner.Run(ctx) })
	wg.Go(func() { m.loop(ctx) })
	var err error
	select {
	case <-ctx.Done():
	case err = <-serveErr:
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdownCtx)
	wg.Wait()
	if rerr := executor.Close(); rerr != nil {
		logger.Warn("closing runs", "error", rerr.Error())
	}
	if merr := arch.Maintain(context.WithoutCancel(ctx), time.Now()); merr != nil {
		logger.Warn("archive maintenance", "error", merr.Error())
	}
	if cerr := arch.Close(); err == nil || errors.Is(err, http.ErrServerClosed) {
		err = cerr
	}
	if err == nil {
		logger.Info("stopped: jobs ended with their last interval written, archive closed cleanly")
	}
	return err
}

// maintenance is what serve keeps tidy every minute: the archive
// (downsampling, retention), the users' ended sessions and old audit
// entries, and ended runs.
type maintenance struct {
	arch      *archive.Archive
	users     *auth.Store
	auditKeep time.Duration
	runs      *runs.Executor
	log       *slog.Logger
}

// loop runs a round every minute until ctx ends.
func (m maintenance) loop(ctx context.Context) {
	t := time.NewTicker(maintainServeEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			m.once(ctx, now)
		}
	}
}

// once is one round; the audit log's age counts on the users' store's
// clock.
func (m maintenance) once(ctx context.Context, now time.Time) {
	warn := func(what string, err error) {
		if err != nil && ctx.Err() == nil {
			m.log.Warn(what, "error", err.Error())
		}
	}
	warn("archive maintenance", m.arch.Maintain(ctx, now))
	_, err := m.users.PruneSessions(ctx)
	warn("pruning sessions", err)
	_, err = m.users.PruneAudit(ctx, m.auditKeep)
	warn("pruning the audit log", err)
	if m.runs != nil {
		_, err = m.runs.Prune(ctx)
		warn("pruning runs", err)
	}
}

// bootstrap creates the first admin on first start and prints its
// password once, with how to log in.
func bootstrap(ctx context.Context, store *auth.Store, w io.Writer, c *config.Config) error {
	pw, err := store.Bootstrap(ctx)
	if err != nil || pw == "" {
		return err
	}
	addr := c.Listen
	if addr == "" {
		addr = httpsec.DefaultAddr
	}
	scheme := "http"
	if c.TLSCert != "" {
		scheme = "https"
	}
	fmt.Fprintf(w, `latscope: first start: created the user admin with the password
    %s
  It is shown only this once. Log in with:
    curl -c cookies.txt -H 'Content-Type: application/json' -d '{"user":"admin","password":"..."}' %s://%s/api/v1/login
  Add users with: latscope serve users add NAME --role viewer|operator|admin --data %s
`, pw, scheme, addr, c.Data)
	return nil
}

func openUsers(ctx context.Context, data string, logger *slog.Logger) (*auth.Store, error) {
	store, err := auth.OpenPath(ctx, filepath.Join(data, AuthDBName), auth.Options{Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("users database: %w", err)
	}
	return store, nil
}

// UsersAdd adds a user to a data directory's users and prints its
// generated password once (when password is empty).
func UsersAdd(ctx context.Context, data, name, role string, w io.Writer) error {
	r, err := auth.ParseRole(role)
	if err != nil {
		return err
	}
	return withUsers(ctx, data, func(s *auth.Store) error {
		pw, err := s.AddUser(ctx, auth.LocalActor(), name, r, "")
		if err == nil {
			fmt.Fprintf(w, "latscope: added %s (%s) with the password\n    %s\n  It is shown only this once.\n", name, r, pw)
		}
		return err
	})
}

// UsersReset gives a user a new generated password, printed once.
func UsersReset(ctx context.Context, data, name string, w io.Writer) error {
	return withUsers(ctx, data, func(s *auth.Store) error {
		pw, err := s.ResetPassword(ctx, auth.LocalActor(), name, "")
		if err == nil {
			fmt.Fprintf(w, "latscope: new password of %s\n    %s\n  It is shown only this once; the user's sessions are ended.\n", name, pw)
		}
		return err
	})
}

func withUsers(ctx context.Context, data string, f func(*auth.Store) error) error {
	if data == "" {
		return errors.New("users needs the data directory: --data DIR")
	}
	if err := os.MkdirAll(data, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	store, err := openUsers(ctx, data, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer store.Close()
	return f(store)
}

// jobDefinitions turns configured jobs into runnable ones: passwords read
// from their files or variables and registered with the redactor, so that
// no log line carries them.
func jobDefinitions(cfg []config.Job, redactor *httpsec.Redactor, logger *slog.Logger) ([]jobs.Job, error) {
	var out []jobs.Job
	for _, cj := range cfg {
		j, err := jobDefinition(cj, redactor, logger)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// jobDefinition makes one configured job runnable.
func jobDefinition(cj config.Job, redactor *httpsec.Redactor, logger *slog.Logger) (jobs.Job, error) {
	spec, err := withPassword(cj, redactor, logger)
	if err != nil {
		return jobs.Job{}, err
	}
	return jobs.Job{Name: cj.Name, Source: jobctl.RedactSource(cj.Source), Interval: cj.Every, Schedule: cj.Plan,
		Retention: cj.Keep, Open: jobOpener(cj.Name, spec, cj.Every, logger)}, nil
}

// checkAPISource accepts what a job created through the API may read: a
// probe or database of a known scheme (scheme:ARG), or an existing file
// named by its absolute path (the server's working directory is nothing
// an API client knows). It opens nothing: the job connects when it runs,
// and shows its error in its state.
func checkAPISource(spec string) error {
	if scheme, _, ok := strings.Cut(spec, ":"); ok && isSchemeName(scheme) {
		var known []string
		for _, p := range Probes() {
			if p.Scheme == scheme {
				return nil
			}
			known = append(known, p.Scheme)
		}
		return fmt.Errorf("source: unknown scheme %q: want a file's absolute path or one of %s:", scheme, strings.Join(known, ":, "))
	}
	if !filepath.IsAbs(spec) {
		return fmt.Errorf("source %q: want a file's absolute path, or scheme:ARG", spec)
	}
	st, err := os.Stat(spec)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	if st.IsDir() {
		return fmt.Errorf("source %q is a directory: give a file, or iotest:%s for a storage probe", spec, spec)
	}
	return nil
}

// isSchemeName reports whether s can be a URI scheme (RFC 3986): a
// letter, then letters, digits, '+', '-' or '.'.
func isSchemeName(s string) bool {
	for i, c := range s {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}

// withPassword returns the job's SOURCE with the password of
// password_file or password_env in its URI.
func withPassword(cj config.Job, redactor *httpsec.Redactor, logger *slog.Logger) (string, error) {
	u, err := url.Parse(cj.Source)
	isURI := err == nil && u.Scheme != "" && u.Host != ""
	if isURI && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			redactor.Add(pw)
			logger.Warn("a password is written in a job's source; give it with password_file or password_env", "job", cj.Name)
		}
	}
	var pw string
	switch {
	case cj.PasswordFile != "":
		b, err := os.ReadFile(cj.PasswordFile)
		if err != nil {
			return "", fmt.Errorf("job %q: password_file: %w", cj.Name, err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		pw = strings.TrimRight(line, "\r")
	case cj.PasswordEnv != "":
		pw = os.Getenv(cj.PasswordEnv)
		if pw == "" {
			return "", fmt.Errorf("job %q: password_env: %s is not set", cj.Name, cj.PasswordEnv)
		}
	default:
		return cj.Source, nil
	}
	if !isURI || u.User == nil || u.User.Username() == "" {
		return "", fmt.Errorf("job %q: a password needs a database URI with a user (postgres://USER@HOST/DB)", cj.Name)
	}
	redactor.Add(pw)
	u.User = url.UserPassword(u.User.Username(), pw)
	return u.String(), nil
}

// isDatabase reports whether a SOURCE is a live database URI.
func isDatabase(spec string) bool {
	scheme, _, _ := strings.Cut(spec, ":")
	switch scheme {
	case "postgres", "postgresql", "mysql", "mariadb", "oracle":
		return true
	}
	return false
}

// jobOpener opens a job's source as `latscope record --archive` would,
// files followed (a job runs until the server stops).
func jobOpener(name, spec string, interval time.Duration, logger *slog.Logger) func(context.Context, source.Link) (source.Source, error) {
	return func(ctx context.Context, link source.Link) (source.Source, error) {
		msgs := &logWriter{logger: logger, job: name}
		opts := source.Options{Interval: interval, Follow: !isProbe(spec), Progress: msgs, DB: source.DBOptions{Link: link}}
		op := &source.Opener{Formats: Formats(), Stores: Stores(), Probes: Probes(), Options: opts,
			Diag: input.NewDiagnostics(msgs, input.DefaultReportLimit)}
		if isLoadProbe(spec) {
			reserveProcsForProbe()
		}
		return op.Open(ctx, spec)
	}
}

// logWriter logs what a source prints (malformed lines, progress), one
// record per line, through the redacting logger.
type logWriter struct {
	logger *slog.Logger
	job    string
}

func (w *logWriter) Write(p []byte) (int, error) {
	for line := range strings.SplitSeq(strings.TrimRight(string(p), "\n"), "\n") {
		if line != "" {
			w.logger.Info("job message", "job", w.job, "message", line)
		}
	}
	return len(p), nil
}
