package archive

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/stream"
)

// TestGroupCommitConcurrentWriters writes from many goroutines at once, as
// latscope serve's jobs do, while others read: every Write's interval is
// readable as soon as it returns, and all are kept.
func TestGroupCommitConcurrentWriters(t *testing.T) {
	a, _ := openTemp(t, Options{})
	hs := realHistograms(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const writers, each = 20, 15
	var wg sync.WaitGroup
	errs := make(chan error, writers*each+writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			source := fmt.Sprintf("job%02d", w)
			for _, iv := range synthetic(source, t0, each, 1, hs[w:]) {
				if err := a.Write(ctx, iv); err != nil {
					errs <- err
					return
				}
				got := 0
				err := a.Read(ctx, Query{Sources: []string{source}, Resolution: Raw}, func(stream.Interval) error {
					got++
					return nil
				})
				if err != nil || got != int(iv.Start.Sub(t0)/time.Second)+1 {
					errs <- fmt.Errorf("%s: read %d intervals after writing the one at %s: %v", source, got, iv.Start, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := len(readAll(t, a, Query{Resolution: Raw})); got != writers*each {
		t.Errorf("read %d intervals, want %d", got, writers*each)
	}
}

// TestGroupCommitBadIntervalAlone: an interval the archive refuses fails
// its own Write only, not the group written beside it.
func TestGroupCommitBadIntervalAlone(t *testing.T) {
	a, _ := openTemp(t, Options{})
	hs := realHistograms(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	results := make([]error, 10)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			iv := synthetic(fmt.Sprintf("job%d", i), t0, 1, 1, hs)[0]
			if i == 3 {
				iv.Duration = -time.Second
			}
			results[i] = a.Write(ctx, iv)
		}()
	}
	wg.Wait()
	for i, err := range results {
		if (err != nil) != (i == 3) {
			t.Errorf("write %d: %v", i, err)
		}
	}
	if got := len(readAll(t, a, Query{Resolution: Raw})); got != 9 {
		t.Errorf("read %d intervals, want 9", got)
	}
}
