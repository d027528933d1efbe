package archive

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/recording"
	"github.com/latscope/latscope/stream"
)

// benchDay writes hours of 1-second intervals of series series (real
// PyLatencyMap histograms in turn) to a fresh archive, a minute per
// transaction, and returns it with the recording size of the same data.
func benchDay(b *testing.B, hours, series int) (a *Archive, dir string, lsrBytes int) {
	b.Helper()
	hs := realHistograms(b)
	a, dir = openTemp(b, Options{})
	var lsr bytes.Buffer
	w, err := recording.NewWriter(&lsr)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for m := 0; m < hours*60; m++ {
		ivs := synthetic("mysql://db01", t0.Add(time.Duration(m)*time.Minute), 60, series, hs[m%len(hs):])
		if err := a.WriteBatch(ctx, ivs); err != nil {
			b.Fatal(err)
		}
		for _, iv := range ivs {
			if err := w.Write(iv); err != nil {
				b.Fatal(err)
			}
		}
	}
	w.Close()
	return a, dir, lsr.Len()
}

// fileBytes is the database with its WAL, checkpointed.
func fileBytes(b *testing.B, a *Archive, dir string) int64 {
	b.Helper()
	if _, err := a.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, f := range []string{DBName, DBName + "-wal"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil {
			n += st.Size()
		}
	}
	return n
}

// BenchmarkBytesPerSeriesDay measures the archive's size for 1-second
// intervals of real histograms, raw plus the 1-minute tier, against a
// latscope recording of the same stream.
func BenchmarkBytesPerSeriesDay(b *testing.B) {
	const hours, series = 6, 4
	for b.Loop() {
		a, dir, lsr := benchDay(b, hours, series)
		raw := fileBytes(b, a, dir)
		if err := a.Maintain(ctx, time.Date(2026, 1, 1, hours+1, 0, 0, 0, time.UTC)); err != nil {
			b.Fatal(err)
		}
		withMinutes := fileBytes(b, a, dir)
		seriesDays := float64(series) * hours / 24
		// The blocks alone: the packed hours (all but the open last one)
		// without SQLite's pages around them.
		var packed float64
		if err := a.db.QueryRow("SELECT (SELECT total(length(data)) FROM point_blocks) + (SELECT total(length(data)) FROM window_blocks WHERE res = 0)").Scan(&packed); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(packed/(float64(series)*(hours-1)/24), "block-bytes/series-day")
		b.ReportMetric(float64(raw)/seriesDays, "raw-bytes/series-day")
		b.ReportMetric(float64(withMinutes)/seriesDays, "bytes/series-day")
		b.ReportMetric(float64(lsr)/seriesDays, "lsr-bytes/series-day")
	}
}

// BenchmarkWrite200Series is one 1-second tick of 200 series: one interval
// of 200 series, one transaction.
func BenchmarkWrite200Series(b *testing.B) {
	hs := realHistograms(b)
	a, _ := openTemp(b, Options{})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	i := 0
	for b.Loop() {
		iv := synthetic("db", t0.Add(time.Duration(i)*time.Second), 1, 200, hs[i%len(hs):])[0]
		if err := a.Write(ctx, iv); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/10, "%cpu-at-1s")
}

// BenchmarkWrite200Sources is one tick of 200 jobs of one series each:
// 200 intervals in one transaction.
func BenchmarkWrite200Sources(b *testing.B) {
	hs := realHistograms(b)
	a, _ := openTemp(b, Options{})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	i := 0
	ivs := make([]stream.Interval, 200)
	for b.Loop() {
		for j := range ivs {
			ivs[j] = synthetic(eventName(j), t0.Add(time.Duration(i)*time.Second), 1, 1, hs[(i+j)%len(hs):])[0]
		}
		if err := a.WriteBatch(ctx, ivs); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/10, "%cpu-at-1s")
}

// BenchmarkWrite200Jobs is one tick of 200 jobs of one series each, as
// latscope serve writes it: 200 concurrent Writes of one interval, which
// group commit gathers into few transactions.
func BenchmarkWrite200Jobs(b *testing.B) {
	hs := realHistograms(b)
	a, _ := openTemp(b, Options{})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	i := 0
	for b.Loop() {
		var wg sync.WaitGroup
		for j := 0; j < 200; j++ {
			iv := synthetic(eventName(j), t0.Add(time.Duration(i)*time.Second), 1, 1, hs[(i+j)%len(hs):])[0]
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := a.Write(ctx, iv); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/10, "%cpu-at-1s")
}

// BenchmarkRead24h reads 24 hours of one series at 1 s (86 400 raw
// intervals) out of four, and the same day at the 1-minute tier, through
// the writer's archive (as latscope serve's API reads) and through a
// read-only one (as latscope report ARCHIVE reads).
func BenchmarkRead24h(b *testing.B) {
	a, dir, _ := benchDay(b, 24, 4)
	if err := a.Maintain(ctx, time.Date(2026, 1, 2, 1, 0, 0, 0, time.UTC)); err != nil {
		b.Fatal(err)
	}
	// A live writer's WAL is checkpointed as it goes; this day was
	// written in a burst.
	if _, err := a.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		b.Fatal(err)
	}
	r, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for _, res := range []time.Duration{Raw, time.Minute, Auto} {
		name := map[time.Duration]string{Raw: "raw", time.Minute: "1m", Auto: "auto"}[res]
		b.Run(name, func(b *testing.B) { benchRead(b, a, res) })
		if res == Raw {
			b.Run("raw-readonly", func(b *testing.B) { benchRead(b, r, res) })
		}
	}
}

func benchRead(b *testing.B, a *Archive, res time.Duration) {
	cpu0 := cpuTime(b)
	for b.Loop() {
		n := 0
		err := a.Read(ctx, Query{Series: eventName(2), Resolution: res}, func(iv stream.Interval) error {
			n += len(iv.Series)
			return nil
		})
		if err != nil || (res == Raw && n != 86400) {
			b.Fatalf("%d points, %v", n, err)
		}
	}
	// On a machine shared with other work, the CPU time spent is steadier
	// than the elapsed time.
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPackHour200Series is the ticks that follow a finished hour of
// 200 series at 1 s: they pack it (3 600 windows, 200 point blocks of
// 3 600 points) a few series at a time. It reports the slowest of those
// ticks, their mean and how many it took; ns/op is all of them.
func BenchmarkPackHour200Series(b *testing.B) {
	hs := realHistograms(b)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var worst, worstCPU, total time.Duration
	ticks := 0
	for b.Loop() {
		b.StopTimer()
		a, _ := openTemp(b, Options{})
		if err := a.WriteBatch(ctx, synthetic("db", t0, 3600, 200, hs)); err != nil {
			b.Fatal(err)
		}
		// A live server wrote that hour tick by tick, its WAL checkpointed
		// along the way; this one batch left 50 MB of it.
		if _, err := a.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for i := 0; blockCount(b, a) == 0; i++ {
			if i == 3600 {
				b.Fatal("the hour was not packed within the next hour")
			}
			next := synthetic("db", t0.Add(time.Hour+time.Duration(i)*time.Second), 1, 200, hs[i%len(hs):])[0]
			began, cpu := time.Now(), cpuTime(b)
			if err := a.Write(ctx, next); err != nil {
				b.Fatal(err)
			}
			took := time.Since(began)
			worst, total, ticks = max(worst, took), total+took, ticks+1
			worstCPU = max(worstCPU, cpuTime(b)-cpu)
		}
	}
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst-tick-ms")
	b.ReportMetric(float64(worstCPU.Microseconds())/1000, "worst-tick-cpu-ms")
	b.ReportMetric(float64(total.Microseconds())/1000/float64(ticks), "mean-tick-ms")
	b.ReportMetric(float64(ticks)/float64(b.N), "ticks")
}
