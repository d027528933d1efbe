package svg

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func checkFixed(t *testing.T, v float64, prec int) {
	t.Helper()
	got := string(appendFixed(nil, v, prec))
	if want := strconv.FormatFloat(v, 'f', prec, 64); got != want {
		t.Fatalf("appendFixed(%v, %d) = %q, want %q", v, prec, got, want)
	}
}

func TestAppendFixedEqualsStrconv(t *testing.T) {
	special := []float64{0, math.Copysign(0, -1), -1.5, 0.5, 1.5, 2.5, 0.125, 0.00005, 0.00015, 99.99995, 100,
		1e14, 1e15, 1e20, math.Inf(1), math.Inf(-1), math.NaN(), 0.1 + 0.2, 3.0 / 7, 12345.6789, 1e-300}
	for _, v := range special {
		for prec := range 11 {
			checkFixed(t, v, prec)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		v := r.Float64() * 100
		if r.IntN(4) == 0 { // exact decimals, where ties are
			v = float64(r.IntN(2000000)) / float64([]int{2, 4, 8, 20, 200, 2000, 20000, 200000}[r.IntN(8)])
		}
		checkFixed(t, v, 2)
		checkFixed(t, v, 4)
	}
	// frame x positions of a real layout: start×100/total
	for total := int64(1); total < 5000; total += 37 {
		for start := int64(0); start <= total; start += 1 + total/97 {
			checkFixed(t, float64(start)*(100/float64(total)), 4)
		}
	}
}

func FuzzAppendFixed(f *testing.F) {
	for _, v := range []float64{0, 0.5, 1.00005, 99.99995, 1e15, -2} {
		f.Add(v, uint8(4))
	}
	f.Fuzz(func(t *testing.T, v float64, prec uint8) {
		checkFixed(t, v, int(prec%12))
	})
}

// referenceEscaped is appendEscaped written byte by byte, as before its
// plain runs were copied at once.
func referenceEscaped(v string) string {
	var dst []byte
	for i := 0; i < len(v); {
		c := v[i]
		if c >= 0x20 && c < utf8.RuneSelf && !strings.ContainsRune(`<>&"'`, rune(c)) {
			dst = append(dst, c)
			i++
			continue
		}
		switch c {
		case '<', '>', '&', '"', '\'':
			dst = append(dst, map[byte]string{'<': "&lt;", '>': "&gt;", '&': "&amp;", '"': "&quot;", '\'': "&apos;"}[c]...)
		case '\t', '\n', '\r':
			dst = append(dst, c)
		default:
			r, size := utf8.DecodeRuneInString(v[i:])
			if r == utf8.RuneError || r < 0x20 || r == 0xFFFE || r == 0xFFFF {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, v[i:i+size]...)
			}
			i += size
			continue
		}
		i++
	}
	return string(dst)
}

func FuzzAppendEscaped(f *testing.F) {
	for _, s := range []string{"", "plain", "a<b>&\"'\x01\xff\tz", "é€\uFFFE\x7f", "runtime.(*mheap).alloc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendEscaped(nil, s)), referenceEscaped(s); got != want {
			t.Fatalf("appendEscaped(%q) = %q, want %q", s, got, want)
		}
	})
}
