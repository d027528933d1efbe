package driver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/internal/testkit/dbtest"
	"github.com/latscope/latscope/internal/testkit/promtest"
	"github.com/latscope/latscope/probe/nettest"
)

// TestServeRemoteWrite: latscope serve with a nettest job and a
// remote_write target sends what it archives: after the server stops,
// Prometheus holds the archive's count for the job, with the job's labels,
// and the spool is empty.
func TestServeRemoteWrite(t *testing.T) {
	store := promtest.Start(t, promtest.Options{NativeHistograms: true, RemoteWriteReceiver: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := nettest.Listen(nettest.ServerConfig{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ctx) //nolint:errcheck // ends with ctx
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cfg := filepath.Join(dir, "latscope.yaml")
	yaml := fmt.Sprintf(`data: %s
listen: 127.0.0.1:%d
jobs:
  - name: net
    source: nettest:%s
    interval: 1s
remote_write:
  - url: %s
    name: prom
`, data, dbtest.FreePort(t), srv.Addr(), store.WriteURL())
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	serveCtx, stop := context.WithCancel(ctx)
	stderr := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- Serve(serveCtx, ServeConfig{ConfigFile: cfg, Stderr: stderr}) }()
	time.Sleep(6 * time.Second)
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr)
	}

	arch, err := archive.Open(data, archive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer arch.Close()
	var count float64
	var last time.Time
	for _, iv := range readArchive(t, arch) {
		for _, s := range iv.Series {
			count += s.Hist.Count()
		}
		last = iv.End()
	}
	if count == 0 {
		t.Fatalf("nothing archived:\n%s", stderr)
	}
	// The spool first: a batch left in it says the stop did not send the
	// last interval, which the store then lacks.
	if entries, err := os.ReadDir(filepath.Join(data, RemoteWriteDir, "prom")); err != nil || len(entries) != 0 {
		t.Errorf("spool after a clean stop: %v %v, want empty", entries, err)
	}
	got := store.QueryAt(t, `histogram_count(latscope_wait_seconds{job="net",source_kind="nettest"})`, last.Add(time.Millisecond))
	if len(got) != 1 || got[0].Value != count {
		t.Fatalf("Prometheus has %v, want one series of the archive's %v events (last interval ends %v)\n%s", got, count, last, stderr)
	}
	t.Logf("%v round trips archived and in Prometheus, labels %v", count, got[0].Metric)
}
