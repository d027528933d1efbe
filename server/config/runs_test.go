package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDocumentedRunsSection(t *testing.T) {
	c, err := Parse("latscope.yaml", docExample(t))
	if err != nil {
		t.Fatal(err)
	}
	r := c.Runs
	if r.MaxConcurrent != 2 || !slices.Equal(r.IOTestDirs, []string{"/var/tmp"}) ||
		!slices.Equal(r.NetTestTargets, []string{"10.0.0.5:7878"}) || r.KeepFor != 30*24*time.Hour {
		t.Errorf("runs %+v", r)
	}
}

func TestRunsErrors(t *testing.T) {
	for yaml, want := range map[string]string{
		"runs:\n  max_concurrent: -1\n":      "max_concurrent -1",
		"runs:\n  iotest_dirs: [tmp]\n":      `iotest_dirs: "tmp": want an absolute path`,
		"runs:\n  nettest_targets: [db01]\n": `nettest_targets: "db01": want HOST:PORT`,
		"runs:\n  keep: 30days\n":            `keep "30days"`,
		"runs:\n  keep: -1h\n":               `keep "-1h"`,
		"runs:\n  max_concurent: 2\n":        "field max_concurent not found",
	} {
		_, err := Parse("s.yaml", []byte(yaml))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "s.yaml:") {
			t.Errorf("%q: %v; want an error naming the file and %q", yaml, err, want)
		}
	}
	c, err := Parse("s.yaml", []byte("runs:\n  keep: 36h\n"))
	if err != nil || c.Runs.KeepFor != 36*time.Hour {
		t.Errorf("keep 36h: %+v %v", c, err)
	}
}
