package pace

import (
	"runtime"
	"slices"
	"testing"
	"time"
)

func TestFormatCPUList(t *testing.T) {
	for want, cpus := range map[string][]int{
		"": nil, "0": {0}, "0-3": {0, 1, 2, 3}, "0-1,4,6-7": {0, 1, 4, 6, 7}, "2,5": {2, 5},
	} {
		if got := FormatCPUList(cpus); got != want {
			t.Errorf("FormatCPUList(%v) = %q, want %q", cpus, got, want)
		}
	}
}

// TestWaitUntilIsPrecise checks what the open loop relies on: a wait never
// returns early, and returns within a few µs of its target at the median,
// where time.Sleep overshoots by about a millisecond.
func TestWaitUntilIsPrecise(t *testing.T) {
	margin := Calibrate()
	if margin < minMargin || margin > maxMargin {
		t.Fatalf("margin %s outside [%s, %s]", margin, minMargin, maxMargin)
	}
	done := make(chan []time.Duration)
	go func() {
		p := NewPacer(margin)
		defer runtime.UnlockOSThread()
		var late []time.Duration
		for i := range 200 {
			target := time.Now().Add(time.Duration(30+i*7) * time.Microsecond)
			p.WaitUntil(target, func() bool { return false })
			late = append(late, time.Since(target))
		}
		done <- late
	}()
	late := <-done
	slices.Sort(late)
	if late[0] < 0 {
		t.Errorf("a wait returned %s early", -late[0])
	}
	if p50 := late[len(late)/2]; p50 > 20*time.Microsecond {
		t.Errorf("median lateness %s, want a few µs (margin %s)", p50, margin)
	}
	t.Logf("margin %s; lateness p50 %s p90 %s max %s", margin, late[len(late)/2], late[len(late)*9/10], late[len(late)-1])
}

func TestWaitUntilStops(t *testing.T) {
	p := NewPacer(minMargin)
	defer runtime.UnlockOSThread()
	begin := time.Now()
	p.WaitUntil(begin.Add(time.Hour), func() bool { return time.Since(begin) > 30*time.Millisecond })
	if took := time.Since(begin); took > time.Second {
		t.Errorf("a stopped wait took %s", took)
	}
}

func TestProcessCPUAndPlacement(t *testing.T) {
	c0 := ProcessCPU()
	for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
	}
	if runtime.GOOS == "linux" {
		if ProcessCPU() <= c0 {
			t.Error("20 ms of spinning used no CPU time")
		}
		p := CurrentPlacement()
		if len(p.CPUs) == 0 || p.CPUList == "" || p.GOMAXPROCS != runtime.GOMAXPROCS(0) {
			t.Errorf("placement %+v", p)
		}
	}
}
