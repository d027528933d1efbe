package bytesize

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{
		"512": 512, "8k": 8192, "8K": 8192, "8KiB": 8192, "8kb": 8192, "1.5G": 3 << 29, "256M": 256 << 20,
		"1t": 1 << 40, " 4 KiB ": 4096, "0": 0, "1P": 1 << 50,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "k", "8x", "-1", "1.5", "1e400", "NaN", "9999999P", "1..2k", "8 MB/s"} {
		if got, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) = %d, want an error", bad, got)
		} else if !strings.Contains(err.Error(), "size") {
			t.Errorf("Parse(%q) error %q does not say it is about a size", bad, err)
		}
	}
}

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{
		512: "512 B", 8 << 10: "8 KiB", 256 << 20: "256 MiB", 3 << 29: "1.5 GiB", 0: "0 B", 1 << 50: "1 PiB",
	} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"8k", "1.5G", "512", "-1", "1e9", "NaN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := Parse(s); err == nil && n < 0 {
			t.Errorf("Parse(%q) = %d", s, n)
		}
	})
}
