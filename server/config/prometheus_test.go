package config

import (
	"strings"
	"testing"
)

func TestPrometheus(t *testing.T) {
	c, err := Parse("latscope.yaml", docExample(t))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Prometheus; p.Host != "db01.example.com" || p.MaxEventsPerJob != 50 || p.Metric != "latscope_wait_seconds" {
		t.Errorf("documented prometheus block: %+v", p)
	}
	c, err = Parse("min.yaml", []byte("data: d\n"))
	if err != nil || c.Prometheus.MaxEventsPerJob != DefaultMaxEventsPerJob {
		t.Errorf("default max_events_per_job: %+v, %v", c, err)
	}
	for body, want := range map[string]string{
		"data: d\nprometheus:\n  max_events_per_job: -2\n": "bad.yaml:2: prometheus: max_events_per_job -2",
		"data: d\nprometheus:\n  metric: wait-time\n":      `bad.yaml:2: prometheus: metric "wait-time"`,
		"data: d\nprometheus:\n  metric: 9lives\n":         `bad.yaml:2: prometheus: metric "9lives"`,
	} {
		if _, err := Parse("bad.yaml", []byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %s", body, err, want)
		}
	}
}
