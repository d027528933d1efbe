package source

import "testing"

func TestParseUTCOffset(t *testing.T) {
	for in, want := range map[string]int{
		"+02": 7200, "-05": -18000, "+0530": 19800, "+05:30": 19800, "-09:30": -34200, "+14:00": 50400, "+00": 0,
	} {
		if got, ok := ParseUTCOffset(in); !ok || got != want {
			t.Errorf("ParseUTCOffset(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "+", "+2", "02:00", "+15", "+0560", "+123", "+05-30", "+0:300", "+-1", "UTC"} {
		if got, ok := ParseUTCOffset(bad); ok {
			t.Errorf("ParseUTCOffset(%q) = %d, want no offset", bad, got)
		}
	}
}
