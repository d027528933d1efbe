// Package config reads latscope serve's configuration file (YAML; a full
// example is in docs/serve.md). Unknown keys are errors, and every error
// names the file and line.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/internal/bytesize"
	"github.com/latscope/latscope/server/jobs"
	"github.com/latscope/latscope/source"
	"go.yaml.in/yaml/v3"
)

// Config is a serve configuration.
type Config struct {
	// Listen is host:port (empty: 127.0.0.1:7879).
	Listen         string `yaml:"listen"`
	TLSCert        string `yaml:"tls_cert"`
	TLSKey         string `yaml:"tls_key"`
	InsecureListen bool   `yaml:"insecure_listen"`
	// Data is the data directory: archive and users.
	Data string `yaml:"data"`
	Jobs []Job  `yaml:"jobs"`
	// Audit is the audit log's retention.
	Audit Audit `yaml:"audit"`
	// Runs limits the on-demand runs started through the API.
	Runs Runs `yaml:"runs"`
	// LiveStreams caps the concurrent GET /api/v1/live streams (0: 100).
	LiveStreams int `yaml:"live_streams"`
	// Archive sets the archive's tiers and size cap (absent: the
	// defaults, archive.DefaultTiers and no cap).
	Archive Archive `yaml:"archive"`
	// Prometheus sets the labels and the cardinality guard of the
	// Prometheus series (GET /metrics).
	Prometheus Prometheus `yaml:"prometheus"`
	// OTLP sends the jobs' intervals to an OpenTelemetry receiver.
	OTLP OTLP `yaml:"otlp"`
	// RemoteWrite are the stores every archived interval is sent to.
	RemoteWrite []RemoteWrite `yaml:"remote_write"`
	// Fleet is the store the browser view reads every host's series from.
	Fleet Fleet `yaml:"fleet"`
	// AuditWatches follow audit trails and login logs (docs/audit.md).
	AuditWatches []AuditWatch `yaml:"audit_watches"`
}

// Prometheus configures how intervals become Prometheus series.
type Prometheus struct {
	// Host is the host label (empty: the machine's host name).
	Host string `yaml:"host"`
	// MaxEventsPerJob is how many events of a job (those with the most
	// time waited) get series of their own; the rest are merged into
	// event="other" (0: DefaultMaxEventsPerJob; -1: no bound).
	MaxEventsPerJob int `yaml:"max_events_per_job"`
	// Metric is the metric name (empty: latscope_wait_seconds).
	Metric string `yaml:"metric"`
}

// DefaultMaxEventsPerJob bounds a job's series: Oracle has hundreds of
// wait events, of which a few dozen matter on any one system.
const DefaultMaxEventsPerJob = 50

// Archive is the archive's settings.
type Archive struct {
	// Tiers are the resolutions, raw first, and how long each is kept.
	Tiers []Tier `yaml:"tiers"`
	// MaxSize caps the archive's used size ("20GB", powers of 1024):
	// the oldest data goes first. Empty: no cap.
	MaxSize string `yaml:"max_size"`

	// Parsed is Tiers parsed (nil: the defaults); MaxBytes is MaxSize.
	Parsed   []archive.Tier `yaml:"-"`
	MaxBytes int64          `yaml:"-"`
}

// Tier is one resolution of the archive.
type Tier struct {
	// Resolution is "raw" (the first tier: intervals as the sources
	// emit them) or a whole number of seconds ("1m", "1h"), each a
	// multiple of the one before.
	Resolution string `yaml:"resolution"`
	// Keep is how long the tier's data is kept ("7d", "36h"; empty:
	// forever).
	Keep string `yaml:"keep"`
}

// Audit configures the audit log.
type Audit struct {
	// Keep is how long events are kept ("365d"; empty: DefaultAuditKeep).
	Keep string `yaml:"keep"`
	// KeepFor is Keep parsed.
	KeepFor time.Duration `yaml:"-"`
}

// DefaultAuditKeep keeps a year of audit events: long enough to answer
// "who changed this job last spring", short enough to bound the file.
const DefaultAuditKeep = 365 * 24 * time.Hour

// Job is one collection job.
type Job struct {
	Name   string `yaml:"name"`
	Source string `yaml:"source"`
	// Interval is the window of per-event and probe sources and the
	// polling period of databases (empty: 1s).
	Interval string `yaml:"interval"`
	// Schedule runs the job for a while every period ("30s every 15m").
	Schedule string `yaml:"schedule"`
	// PasswordFile (first line) or PasswordEnv (a variable's name) give
	// a database job's password, so that it is not in this file.
	PasswordFile string `yaml:"password_file"`
	PasswordEnv  string `yaml:"password_env"`
	// Retention drops the job's data of every tier older than this
	// ("3d"), even when the tier keeps longer (empty: the tiers' own).
	Retention string `yaml:"retention"`

	// Line is where the job is defined, for errors.
	Line int `yaml:"-"`
	// Every, Plan and Keep are Interval, Schedule and Retention parsed.
	Every time.Duration `yaml:"-"`
	Plan  jobs.Schedule `yaml:"-"`
	Keep  time.Duration `yaml:"-"`
}

// DefaultInterval is a job's interval when it gives none.
const DefaultInterval = time.Second

// Load reads and checks a configuration file.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, b)
}

// Parse reads a configuration; name is the file's, for errors.
func Parse(name string, b []byte) (*Config, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty configuration", name)
		}
		return nil, lineError(name, err)
	}
	var c Config
	strict := yaml.NewDecoder(bytes.NewReader(b))
	strict.KnownFields(true)
	if err := strict.Decode(&c); err != nil {
		return nil, lineError(name, err)
	}
	lines := itemLines(&doc, "jobs")
	seen := map[string]int{}
	for i := range c.Jobs {
		j := &c.Jobs[i]
		if i < len(lines) {
			j.Line = lines[i]
		}
		if err := j.check(); err != nil {
			return nil, fmt.Errorf("%s:%d: job %d: %w", name, j.Line, i+1, err)
		}
		if first, dup := seen[j.Name]; dup {
			return nil, fmt.Errorf("%s:%d: job %q is already defined at line %d", name, j.Line, j.Name, first)
		}
		seen[j.Name] = j.Line
	}
	if err := c.Runs.check(); err != nil {
		return nil, fmt.Errorf("%s: runs: %w", name, err)
	}
	if c.LiveStreams < 0 {
		return nil, fmt.Errorf("%s: live_streams must not be negative", name)
	}
	if err := c.Prometheus.check(); err != nil {
		return nil, fmt.Errorf("%s:%d: prometheus: %w", name, keyLine(&doc, "prometheus"), err)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return nil, fmt.Errorf("%s: tls_cert and tls_key go together", name)
	}
	if err := c.Audit.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := c.Archive.check(); err != nil {
		return nil, fmt.Errorf("%s:%d: archive: %w", name, keyLine(&doc, "archive"), err)
	}
	if err := c.OTLP.check(); err != nil {
		return nil, fmt.Errorf("%s:%d: otlp: %w", name, keyLine(&doc, "otlp"), err)
	}
	if err := checkRemoteWrites(name, c.RemoteWrite, itemLines(&doc, "remote_write")); err != nil {
		return nil, err
	}
	if err := c.Fleet.Check(); err != nil {
		return nil, fmt.Errorf("%s:%d: fleet: %w", name, keyLine(&doc, "fleet"), err)
	}
	if err := checkAuditWatches(name, c.AuditWatches, itemLines(&doc, "audit_watches")); err != nil {
		return nil, err
	}
	return &c, nil
}

// check applies the defaults and checks the metric name.
func (p *Prometheus) check() error {
	if p.MaxEventsPerJob == 0 {
		p.MaxEventsPerJob = DefaultMaxEventsPerJob
	}
	if p.MaxEventsPerJob < -1 {
		return fmt.Errorf("max_events_per_job %d: want a positive number, or -1 for no bound", p.MaxEventsPerJob)
	}
	if p.Metric != "" && !metricName(p.Metric) {
		return fmt.Errorf("metric %q: want a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)", p.Metric)
	}
	return nil
}

// metricName reports whether s is a legacy Prometheus metric name, which
// every scraper and store of any age accepts.
func metricName(s string) bool {
	for i, r := range s {
		ok := r == '_' || r == ':' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9'
		if !ok {
			return false
		}
	}
	return s != ""
}

// Retention is how long audit events are kept.
func (a Audit) Retention() time.Duration {
	if a.KeepFor > 0 {
		return a.KeepFor
	}
	return DefaultAuditKeep
}

// check parses the retention, DefaultAuditKeep when not given.
func (a *Audit) check() error {
	a.KeepFor = DefaultAuditKeep
	if a.Keep == "" {
		return nil
	}
	d, err := source.ParseAge(a.Keep)
	if err != nil || d < time.Hour {
		return fmt.Errorf("audit: keep %q: want a duration of at least 1h such as 365d or 90d", a.Keep)
	}
	a.KeepFor = d
	return nil
}

// Check validates a job defined elsewhere (through the API) as a job of
// the file is, and parses its durations.
func (j *Job) Check() error { return j.check() }

// check parses the tiers and the size cap and checks them as the archive
// will.
func (a *Archive) check() error {
	if a.MaxSize != "" {
		n, err := bytesize.Parse(a.MaxSize)
		if err != nil || n <= 0 {
			return fmt.Errorf("max_size %q: want a size such as 20GB", a.MaxSize)
		}
		a.MaxBytes = n
	}
	if len(a.Tiers) == 0 {
		return nil
	}
	for i, t := range a.Tiers {
		var tier archive.Tier
		switch {
		case i == 0 && t.Resolution != "raw":
			return fmt.Errorf("tier 1: resolution %q: the first tier is raw (resolution: raw)", t.Resolution)
		case i > 0:
			d, err := time.ParseDuration(t.Resolution)
			if err != nil {
				return fmt.Errorf("tier %d: resolution %q: want raw for the first tier, then a duration such as 1m", i+1, t.Resolution)
			}
			tier.Step = d
		}
		keep, err := ParseKeep(t.Keep)
		if err != nil {
			return fmt.Errorf("tier %d: %w", i+1, err)
		}
		tier.Keep = keep
		a.Parsed = append(a.Parsed, tier)
	}
	return archive.CheckTiers(a.Parsed)
}

// ParseKeep reads a retention: days ("7d"), a Go duration ("36h") or both
// ("1d12h"); empty is 0, kept forever.
func ParseKeep(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := source.ParseAge(s)
	if err != nil || d <= 0 || d > 100*365*24*time.Hour {
		return 0, fmt.Errorf("keep %q: want a duration such as 7d, 36h or 1d12h", s)
	}
	return d, nil
}

// keyLine returns the line of a top-level key (0 when absent).
func keyLine(doc *yaml.Node, key string) int {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return 0
	}
	m := doc.Content[0].Content
	for i := 0; i+1 < len(m); i += 2 {
		if m[i].Value == key {
			return m[i].Line
		}
	}
	return 0
}

// check validates a job and parses its durations.
func (j *Job) check() error {
	if err := CheckJobName(j.Name); err != nil {
		return err
	}
	if strings.TrimSpace(j.Source) == "" {
		return fmt.Errorf("%q has no source", j.Name)
	}
	if j.PasswordFile != "" && j.PasswordEnv != "" {
		return fmt.Errorf("%q: give password_file or password_env, not both", j.Name)
	}
	j.Every = DefaultInterval
	if j.Interval != "" {
		d, err := time.ParseDuration(j.Interval)
		if err != nil || d <= 0 {
			return fmt.Errorf("%q: interval %q: want a positive duration such as 1s", j.Name, j.Interval)
		}
		j.Every = d
	}
	plan, err := jobs.ParseSchedule(j.Schedule)
	if err != nil {
		return fmt.Errorf("%q: %w", j.Name, err)
	}
	j.Plan = plan
	if j.Keep, err = ParseKeep(j.Retention); err != nil {
		return fmt.Errorf("%q: retention: %w", j.Name, err)
	}
	return nil
}

// CheckJobName accepts printable names of 1 to 128 characters: they name
// the job's source in the archive and in the API.
func CheckJobName(name string) error {
	if name == "" {
		return errors.New("a job needs a name")
	}
	if len(name) > 128 {
		return fmt.Errorf("job name %.20q...: longer than 128 bytes", name)
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("job name %q: unprintable character %U", name, r)
		}
	}
	return nil
}

// itemLines finds the line of each item of a top-level list.
func itemLines(doc *yaml.Node, key string) []int {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	m := doc.Content[0].Content
	for i := 0; i+1 < len(m); i += 2 {
		if m[i].Value == key && m[i+1].Kind == yaml.SequenceNode {
			var lines []int
			for _, item := range m[i+1].Content {
				lines = append(lines, item.Line)
			}
			return lines
		}
	}
	return nil
}

// lineError turns yaml's "yaml: line N: msg" into "file:N: msg".
func lineError(name string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = strings.Join(te.Errors, "; ")
	}
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, tail, ok := strings.Cut(rest, ": "); ok {
			return fmt.Errorf("%s:%s: %s", name, n, tail)
		}
	}
	return fmt.Errorf("%s: %s", name, msg)
}
