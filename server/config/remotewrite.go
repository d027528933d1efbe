package config

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/bytesize"
)

// RemoteWrite is one store latscope serve sends every archived interval
// to by Prometheus remote write (docs/fleet.md).
type RemoteWrite struct {
	// Name names the target in logs and its spool, DATA/remotewrite/NAME
	// (empty: the URL's host and port).
	Name string `yaml:"name"`
	// URL is the store's remote-write endpoint.
	URL string `yaml:"url"`
	// Native sends native histograms (default true); false sends classic
	// le buckets, for stores without native histograms (VictoriaMetrics
	// before 1.91 among them).
	Native *bool `yaml:"native"`
	// BearerTokenFile or BasicAuth give credentials, read from files at
	// each request.
	BearerTokenFile string     `yaml:"bearer_token_file"`
	BasicAuth       *BasicAuth `yaml:"basic_auth"`
	TLS             ClientTLS  `yaml:"tls"`
	// MaxSpool caps the spool ("1GB", powers of 1024; default 1GB) and
	// MaxAge the age of a batch ("2h"; default 2h): beyond, the oldest
	// batches are dropped and counted.
	MaxSpool string `yaml:"max_spool"`
	MaxAge   string `yaml:"max_age"`
	// Shards send in parallel (default 4); Batch caps the samples of one
	// request (default 2000).
	Shards int `yaml:"shards"`
	Batch  int `yaml:"batch"`

	// Line is where the target is defined; SpoolBytes and SpoolAge are
	// MaxSpool and MaxAge parsed; IsNative is Native with its default.
	Line       int           `yaml:"-"`
	SpoolBytes int64         `yaml:"-"`
	SpoolAge   time.Duration `yaml:"-"`
	IsNative   bool          `yaml:"-"`
}

// BasicAuth is a user and the file holding its password (first line).
type BasicAuth struct {
	Username     string `yaml:"username"`
	PasswordFile string `yaml:"password_file"`
}

// ClientTLS is how latscope checks a store's certificate (CAFile; empty:
// the system's roots) and presents its own (CertFile, KeyFile).
type ClientTLS struct {
	CAFile   string `yaml:"ca_file"`
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// Defaults of a remote-write target.
const (
	DefaultRemoteWriteSpool = "1GB"
	DefaultRemoteWriteAge   = 2 * time.Hour
)

var targetName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// check validates a target and parses its limits.
func (r *RemoteWrite) check() error {
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url %q: want http(s)://HOST:PORT/PATH, e.g. http://prometheus:9090/api/v1/write", r.URL)
	}
	if u.User != nil {
		return errors.New("url: no credentials in the URL; give bearer_token_file or basic_auth")
	}
	if r.Name == "" {
		r.Name = strings.NewReplacer(":", "-", "[", "", "]", "").Replace(u.Host)
	}
	if !targetName.MatchString(r.Name) {
		return fmt.Errorf("name %q: want letters, digits, '.', '_' or '-' (it names the spool's directory)", r.Name)
	}
	if r.BearerTokenFile != "" && r.BasicAuth != nil {
		return errors.New("give bearer_token_file or basic_auth, not both")
	}
	if b := r.BasicAuth; b != nil && (b.Username == "" || b.PasswordFile == "") {
		return errors.New("basic_auth needs username and password_file")
	}
	if (r.TLS.CertFile == "") != (r.TLS.KeyFile == "") {
		return errors.New("tls: cert_file and key_file go together")
	}
	spool := r.MaxSpool
	if spool == "" {
		spool = DefaultRemoteWriteSpool
	}
	if r.SpoolBytes, err = bytesize.Parse(spool); err != nil || r.SpoolBytes <= 0 {
		return fmt.Errorf("max_spool %q: want a size such as 1GB", r.MaxSpool)
	}
	r.SpoolAge = DefaultRemoteWriteAge
	if r.MaxAge != "" {
		if r.SpoolAge, err = ParseKeep(r.MaxAge); err != nil {
			return fmt.Errorf("max_age: %w", err)
		}
	}
	if r.Shards < 0 || r.Shards > 256 {
		return fmt.Errorf("shards %d: want 1 to 256 (0: 4)", r.Shards)
	}
	if r.Batch < 0 || r.Batch > 1_000_000 {
		return fmt.Errorf("batch %d: want 1 to 1000000 samples (0: 2000)", r.Batch)
	}
	r.IsNative = r.Native == nil || *r.Native
	return nil
}

// checkRemoteWrites checks every target, naming the file and its line.
func checkRemoteWrites(name string, targets []RemoteWrite, lines []int) error {
	seen := map[string]int{}
	for i := range targets {
		r := &targets[i]
		if i < len(lines) {
			r.Line = lines[i]
		}
		if err := r.check(); err != nil {
			return fmt.Errorf("%s:%d: remote_write %d: %w", name, r.Line, i+1, err)
		}
		if first, dup := seen[r.Name]; dup {
			return fmt.Errorf("%s:%d: remote_write %q is already defined at line %d (give each a name)", name, r.Line, r.Name, first)
		}
		seen[r.Name] = r.Line
	}
	return nil
}
