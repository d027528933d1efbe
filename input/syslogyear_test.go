package input

import (
	"testing"
	"time"
)

func TestSyslogYear(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ref    time.Time
		months []time.Month
		want   []int
	}{
		{"within the reference year", time.Date(2017, 4, 20, 0, 0, 0, 0, time.UTC), []time.Month{3, 3, 4}, []int{2017, 2017, 2017}},
		{"across January", time.Date(2018, 1, 5, 0, 0, 0, 0, time.UTC), []time.Month{12, 12, 1, 1}, []int{2017, 2017, 2018, 2018}},
		{"slightly out of order", time.Date(2020, 3, 1, 0, 0, 0, 0, time.UTC), []time.Month{2, 1, 2, 3}, []int{2020, 2020, 2020, 2020}},
		{"first month after the reference", time.Date(2020, 2, 1, 0, 0, 0, 0, time.UTC), []time.Month{6, 7}, []int{2019, 2019}},
	} {
		y := SyslogYear{Reference: tc.ref}
		for i, m := range tc.months {
			if got := y.Year(m); got != tc.want[i] {
				t.Errorf("%s: month %d (#%d): year %d, want %d", tc.name, m, i, got, tc.want[i])
			}
		}
	}
}
