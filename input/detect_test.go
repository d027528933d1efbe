package input

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// yielded lists the lines Lines yields as "N:text" ("N~text" for a partial
// line).
func yielded(prefix string, scan LineScan) string {
	var got []string
	for l := range scan.Lines([]byte(prefix)) {
		sep := ":"
		if !l.Complete {
			sep = "~"
		}
		got = append(got, fmt.Sprintf("%d%s%s", l.N, sep, l.Text))
	}
	return strings.Join(got, " ")
}

func TestLineScanLines(t *testing.T) {
	for _, c := range []struct {
		name   string
		prefix string
		scan   LineScan
		want   string
	}{
		{"complete lines only", "a\nb\r\n\r\nc", LineScan{}, "1:a 2:b 3:"},
		{"partial last line", "a\nb\r\nc\r", LineScan{Partial: true}, "1:a 2:b 3~c"},
		{"no partial line after a newline", "a\n", LineScan{Partial: true}, "1:a"},
		{"one CR only", "a\r\r\n", LineScan{}, "1:a\r"},
		{"BOM kept", "\xef\xbb\xbfa\n", LineScan{}, "1:\xef\xbb\xbfa"},
		{"BOM skipped", "\xef\xbb\xbfa\nb\n", LineScan{SkipBOM: true}, "1:a 2:b"},
		{"BOM only at the start", "a\n\xef\xbb\xbfb\n", LineScan{SkipBOM: true}, "1:a 2:\xef\xbb\xbfb"},
		{"max lines, blank ones counted", "a\n\nb\nc\n", LineScan{MaxLines: 3}, "1:a 2: 3:b"},
		{"max lines with a partial line", "a\nb", LineScan{MaxLines: 5, Partial: true}, "1:a 2~b"},
		{"empty", "", LineScan{Partial: true}, ""},
	} {
		if got := yielded(c.prefix, c.scan); got != c.want {
			t.Errorf("%s: yielded %q, want %q", c.name, got, c.want)
		}
	}
}

func TestLineScanStopsWhenTheLoopDoes(t *testing.T) {
	n := 0
	for l := range (LineScan{}).Lines([]byte("a\nb\nc\n")) {
		n++
		if string(l.Text) == "b" {
			break
		}
	}
	if n != 2 {
		t.Errorf("%d lines looked at, want 2", n)
	}
}

func TestLineScanUndecided(t *testing.T) {
	for _, c := range []struct {
		prefix string
		scan   LineScan
		want   Verdict
	}{
		{"abc\n", LineScan{}, NeedMore},
		{"abc\n", LineScan{GiveUp: 5}, NeedMore},
		{"abcd\n", LineScan{GiveUp: 5}, No},
		{"\xef\xbb\xbfab", LineScan{GiveUp: 5, SkipBOM: true}, No}, // the BOM counts
	} {
		if v := c.scan.Undecided([]byte(c.prefix)); v != c.want {
			t.Errorf("%q %+v: %v, want %v", c.prefix, c.scan, v, c.want)
		}
	}
}

func TestPrefixLineRestAndBlank(t *testing.T) {
	var rests []string
	var blanks []bool
	for l := range (LineScan{Partial: true}).Lines([]byte("a\n \t\r\nb,\"c\nd\"")) {
		rests = append(rests, string(l.Rest))
		blanks = append(blanks, l.Blank())
	}
	if want := []string{"a\n \t\r\nb,\"c\nd\"", " \t\r\nb,\"c\nd\"", "b,\"c\nd\"", "d\""}; fmt.Sprint(rests) != fmt.Sprint(want) {
		t.Errorf("rests %q, want %q", rests, want)
	}
	if want := []bool{false, true, false, false}; fmt.Sprint(blanks) != fmt.Sprint(want) {
		t.Errorf("blanks %v, want %v", blanks, want)
	}
}

// FuzzLineScan checks Lines and Undecided against a plain model: the lines
// yielded are the prefix split after each newline, in order and numbered,
// each line's text is its raw bytes less "\n" and one "\r", a partial line
// only with Partial, at most MaxLines; a loop that breaks gets no more.
func FuzzLineScan(f *testing.F) {
	f.Add([]byte("a\r\nb\n\nc"), uint8(0), uint8(0), uint16(0), uint8(0))
	f.Add([]byte("\xef\xbb\xbfx\ny\r"), uint8(3), uint8(1), uint16(4), uint8(1))
	f.Add([]byte("1\n2\n3\n4\n5\n"), uint8(2), uint8(3), uint16(8), uint8(2))
	f.Fuzz(func(t *testing.T, prefix []byte, flags, maxLines uint8, giveUp uint16, stopAt uint8) {
		scan := LineScan{SkipBOM: flags&1 != 0, Partial: flags&2 != 0, MaxLines: int(maxLines % 8), GiveUp: int(giveUp % 64)}
		body := prefix
		if scan.SkipBOM {
			body = bytes.TrimPrefix(body, utf8BOM)
		}
		raw := bytes.SplitAfter(body, []byte("\n"))
		if len(raw[len(raw)-1]) == 0 {
			raw = raw[:len(raw)-1]
		}
		want := len(raw)
		if !scan.Partial && want > 0 && !bytes.HasSuffix(raw[want-1], []byte("\n")) {
			want--
		}
		if scan.MaxLines > 0 {
			want = min(want, scan.MaxLines)
		}
		if stopAt > 0 {
			want = min(want, int(stopAt))
		}
		got := 0
		for l := range scan.Lines(prefix) {
			if got >= want {
				t.Fatalf("line %d yielded, want %d lines", l.N, want)
			}
			r := raw[got]
			got++
			complete := bytes.HasSuffix(r, []byte("\n"))
			text := bytes.TrimSuffix(bytes.TrimSuffix(r, []byte("\n")), []byte("\r"))
			if l.N != got || l.Complete != complete || !bytes.Equal(l.Text, text) || !bytes.HasPrefix(l.Rest, r) ||
				len(l.Rest) != len(body)-len(bytes.Join(raw[:got-1], nil)) {
				t.Fatalf("line %d: %+v, want text %q complete %v", got, l, text, complete)
			}
			if got == int(stopAt) {
				break
			}
		}
		if got != want {
			t.Fatalf("%d lines yielded, want %d", got, want)
		}
		wantVerdict := NeedMore
		if scan.GiveUp > 0 && len(prefix) >= scan.GiveUp {
			wantVerdict = No
		}
		if v := scan.Undecided(prefix); v != wantVerdict {
			t.Fatalf("Undecided on %d bytes, give-up %d: %v", len(prefix), scan.GiveUp, v)
		}
	})
}
