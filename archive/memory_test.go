package archive

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/stream"
)

// rssBytes reads the process's resident set size (Linux).
func rssBytes(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Skip("no VmRSS")
	return 0
}

// TestMemoryFlatOverDays writes 8 simulated days of 30-second intervals of
// 20 series, maintaining every simulated hour and reading the last day back
// every simulated day: the Go heap and the RSS (SQLite's page cache lives
// outside the Go heap) after day 8 stay within 10 % (plus 6 MiB of noise:
// a writer has two SQLite connections, its own and its read pool's, whose
// caches and allocations settle over the first days)
// of day 2's, whatever the number of intervals written.
func TestMemoryFlatOverDays(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 8 days")
	}
	a, _ := openTemp(t, Options{Tiers: []Tier{{Keep: 24 * time.Hour}, {Step: time.Minute, Keep: 3 * 24 * time.Hour}}})
	hs := realHistograms(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const step, series, days = 30 * time.Second, 20, 8
	var heap, rss [days]int64
	at := t0
	for day := 0; day < days; day++ {
		for hour := 0; hour < 24; hour++ {
			ivs := make([]stream.Interval, 0, int(time.Hour/step))
			for i := 0; i < int(time.Hour/step); i++ {
				iv := synthetic("db", at, 1, series, hs[(day*24+hour+i)%len(hs):])[0]
				iv.Duration = step
				ivs = append(ivs, iv)
				at = at.Add(step)
			}
			for len(ivs) > 0 { // a minute per transaction
				n := min(int(time.Minute/step), len(ivs))
				if err := a.WriteBatch(ctx, ivs[:n]); err != nil {
					t.Fatal(err)
				}
				ivs = ivs[n:]
			}
			if err := a.Maintain(ctx, at); err != nil {
				t.Fatal(err)
			}
		}
		read := 0
		if err := a.Read(ctx, Query{From: at.Add(-24 * time.Hour), Resolution: Raw}, func(iv stream.Interval) error {
			read++
			return nil
		}); err != nil || read != 2880 {
			t.Fatalf("day %d: read %d windows, %v", day, read, err)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap[day], rss[day] = int64(ms.HeapAlloc), rssBytes(t)
		t.Logf("day %d: heap %.1f MiB, RSS %.1f MiB", day+1, float64(heap[day])/(1<<20), float64(rss[day])/(1<<20))
	}
	for _, m := range []struct {
		name string
		v    [days]int64
	}{{"heap", heap}, {"RSS", rss}} {
		if last, base := m.v[days-1], m.v[1]; float64(last) > float64(base)*1.1+6<<20 {
			t.Errorf("%s grew from %d to %d bytes between day 2 and day %d", m.name, base, last, days)
		}
	}
}
