package config

import (
	"fmt"
	"net/url"
	"time"
)

// DefaultOTLPInterval is how often serve sends to an OTLP receiver when
// the otlp block gives no interval.
const DefaultOTLPInterval = 10 * time.Second

// OTLP sends every job's intervals to an OTLP/HTTP receiver (absent: not
// sent).
type OTLP struct {
	// Endpoint is the receiver's URL (path default /v1/metrics).
	Endpoint string `yaml:"endpoint"`
	// HeadersFile holds extra request headers, one "Name: value" a line
	// (a tenant's token): kept out of the configuration like passwords.
	HeadersFile string `yaml:"headers_file"`
	// Interval is how often what the jobs wrote is sent (default 10s).
	Interval string `yaml:"interval"`

	// Every is Interval parsed.
	Every time.Duration `yaml:"-"`
}

// Enabled says whether the block asks for sending.
func (o OTLP) Enabled() bool { return o.Endpoint != "" }

func (o *OTLP) check() error {
	if !o.Enabled() {
		if o.HeadersFile != "" || o.Interval != "" {
			return fmt.Errorf("give endpoint (http://HOST:4318)")
		}
		return nil
	}
	u, err := url.Parse(o.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("endpoint %q: want http://HOST:PORT or https://HOST:PORT[/PATH]", o.Endpoint)
	}
	o.Every = DefaultOTLPInterval
	if o.Interval != "" {
		d, err := time.ParseDuration(o.Interval)
		if err != nil || d <= 0 {
			return fmt.Errorf("interval %q: want a positive duration such as 10s", o.Interval)
		}
		o.Every = d
	}
	return nil
}
