package config

import (
	"strings"
	"testing"
)

func TestLiveStreams(t *testing.T) {
	c, err := Parse("latscope.yaml", docExample(t))
	if err != nil || c.LiveStreams != 100 {
		t.Fatalf("documented live_streams: %v, %v", c, err)
	}
	_, err = Parse("bad.yaml", []byte("data: d\nlive_streams: -1\njobs:\n  - name: a\n    source: a.txt\n"))
	if err == nil || !strings.Contains(err.Error(), "bad.yaml: live_streams must not be negative") {
		t.Errorf("negative live_streams: %v", err)
	}
}
