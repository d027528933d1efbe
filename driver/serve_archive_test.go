package driver

import (
	"reflect"
	"testing"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/server/config"
)

// TestServeArchiveOptions: the configuration's tiers, size cap and job
// retentions reach the archive that serve opens (its maintenance applies
// them).
func TestServeArchiveOptions(t *testing.T) {
	c, err := config.Parse("latscope.yaml", []byte(`data: d
archive:
  tiers:
    - resolution: raw
      keep: 2d
    - resolution: 5m
      keep: 30d
  max_size: 1GB
jobs:
  - name: noisy
    source: /var/log/noisy.log
    retention: 12h
  - name: kept
    source: /var/log/kept.log
`))
	if err != nil {
		t.Fatal(err)
	}
	got := archiveOptions(c)
	day := 24 * time.Hour
	want := archive.Options{
		Tiers:      []archive.Tier{{Keep: 2 * day}, {Step: 5 * time.Minute, Keep: 30 * day}},
		MaxBytes:   1 << 30,
		SourceKeep: map[string]time.Duration{"noisy": 12 * time.Hour},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("archive options %+v, want %+v", got, want)
	}
	if got := archiveOptions(&config.Config{}); got.Tiers != nil || got.MaxBytes != 0 || got.SourceKeep != nil {
		t.Fatalf("without settings: %+v, want the archive's defaults", got)
	}
}
