package config

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Fleet defaults: Prometheus' default scrape interval is the finest step
// worth reading from a store that scrapes; the series list looks a day
// back.
const (
	DefaultFleetMinStep  = 15 * time.Second
	DefaultFleetLookback = 24 * time.Hour
)

// Fleet is the Prometheus-compatible store the browser view reads every
// host's series from (absent: the view shows this server's archive only).
type Fleet struct {
	// Prometheus is the store's query API: http(s)://HOST:PORT[/prefix].
	Prometheus string `yaml:"prometheus"`
	// BearerTokenFile holds the token the store wants, on its first line.
	BearerTokenFile string `yaml:"bearer_token_file"`
	// CAFile adds PEM certificates to the system's roots.
	CAFile string `yaml:"ca_file"`
	// Metric is the histogram's name (empty: latscope_wait_seconds).
	Metric string `yaml:"metric"`
	// MinStep is the finest step read: the store's sample spacing (the
	// remote-write interval, or the scrape interval; default 15s).
	MinStep string `yaml:"min_step"`
	// Lookback is how far back the series list looks (default 24h).
	Lookback string `yaml:"lookback"`

	// Step and Back are MinStep and Lookback parsed.
	Step time.Duration `yaml:"-"`
	Back time.Duration `yaml:"-"`
}

// Enabled says whether a store is configured.
func (f Fleet) Enabled() bool { return f.Prometheus != "" }

// Check applies the defaults and checks the URL, the metric name and the
// durations (the --prometheus flag's value is checked as the file's).
func (f *Fleet) Check() error {
	if !f.Enabled() {
		if f.BearerTokenFile != "" || f.CAFile != "" || f.Metric != "" || f.MinStep != "" || f.Lookback != "" {
			return fmt.Errorf("give prometheus (http://HOST:9090)")
		}
		return nil
	}
	u, err := url.Parse(f.Prometheus)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		return fmt.Errorf("prometheus %q: want http://HOST:PORT or https://HOST:PORT[/PREFIX] (the query API's base)", f.Prometheus)
	}
	if u.User != nil {
		return fmt.Errorf("prometheus: no user or password in the URL: give bearer_token_file")
	}
	f.Prometheus = strings.TrimSuffix(f.Prometheus, "/")
	if f.Metric != "" && !metricName(f.Metric) {
		return fmt.Errorf("metric %q: want a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)", f.Metric)
	}
	if f.Step, err = durationOr(f.MinStep, DefaultFleetMinStep, time.Second); err != nil {
		return fmt.Errorf("min_step: %w", err)
	}
	if f.Back, err = durationOr(f.Lookback, DefaultFleetLookback, time.Minute); err != nil {
		return fmt.Errorf("lookback: %w", err)
	}
	return nil
}

// durationOr parses s (def when empty), at least least.
func durationOr(s string, def, least time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < least {
		return 0, fmt.Errorf("%q: want a duration of at least %s", s, least)
	}
	return d, nil
}
