package input

import "testing"

func TestParseUint(t *testing.T) {
	for in, want := range map[string]uint64{"0": 0, "42": 42, "18446744073709551615": 1<<64 - 1} {
		if got, ok := ParseUint([]byte(in)); !ok || got != want {
			t.Errorf("%q: %d %v", in, got, ok)
		}
	}
	for _, bad := range []string{"", "-1", "1.5", " 1", "18446744073709551616", "123456789012345678901"} {
		if got, ok := ParseUint([]byte(bad)); ok {
			t.Errorf("%q read as %d", bad, got)
		}
	}
}
