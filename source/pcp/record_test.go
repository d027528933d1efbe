package pcp

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/pcptest"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// recordSeconds is how long the live recording runs: 20 s in make test,
// the 60 s with LATSCOPE_PCP_SECONDS=60 (make bench sets it).
func recordSeconds(t *testing.T) int {
	if s := os.Getenv("LATSCOPE_PCP_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 3 {
			t.Fatalf("LATSCOPE_PCP_SECONDS=%q: want a number of seconds ≥ 3", s)
		}
		return n
	}
	return 20
}

// TestRecordedArchivesMatchPmrep starts a pmcd and two pmloggers (archive
// versions 2 and 3, the latter in volumes of 5 records) recording the
// metrics latscope maps at 1 s while the test writes and syncs a file, then
// reads both archives and compares every figure with pmrep's.
func TestRecordedArchivesMatchPmrep(t *testing.T) {
	config, err := os.ReadFile(testenv.DataFile(t, "pcp/pmlogger.conf"))
	if err != nil {
		t.Fatal(err)
	}
	pmcd := pcptest.StartPMCD(t)
	dir := t.TempDir()
	n := recordSeconds(t)
	v2 := pmcd.StartLogger(t, dir, "live-v2", string(config), 2, n)
	v3 := pmcd.StartLogger(t, dir, "live-v3", string(config), 3, n, "-v", "5")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		writeLoad(t, filepath.Join(dir, "load"), stop)
	}()
	limit := time.Duration(n)*time.Second + 60*time.Second
	v2.Wait(t, limit)
	v3.Wait(t, limit)
	close(stop)
	wg.Wait()
	vols, _ := filepath.Glob(v3.Base + ".[0-9]*")
	if len(vols) < 2 {
		t.Errorf("the v3 archive has %d volumes, want several (-v 5)", len(vols))
	}
	for _, l := range []*pcptest.Logger{v2, v3} {
		ivs := readAll(t, l.Base+".meta", readOptions{})
		if len(ivs) < n-2 {
			t.Errorf("%s: %d windows from %d samples", l.Base, len(ivs), n)
		}
		comparePmrep(t, l.Base, ivs)
	}
}

// writeLoad writes and syncs 4 MiB every 200 ms until stop, so that the
// disk series move.
func writeLoad(t *testing.T, path string, stop <-chan struct{}) {
	buf := make([]byte, 4<<20)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		f, err := os.Create(path)
		if err != nil {
			t.Error(err)
			return
		}
		_, err = f.Write(buf)
		if err == nil {
			err = f.Sync()
		}
		f.Close()
		if err != nil {
			t.Error(err)
			return
		}
	}
}
