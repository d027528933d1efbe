package collapse

import (
	"bytes"
	"testing"
	"unicode"
)

// The fast paths of the default reading are checked against the plain
// forms they replaced (inferno's rules written straight).

func referenceStripOffset(b []byte) []byte {
	i := bytes.LastIndex(b, []byte("+0x"))
	if i < 0 {
		return b
	}
	for _, c := range b[i+3:] {
		if !perfHexDigit(c) {
			return b
		}
	}
	return b[:i]
}

func referenceTidy(fn []byte) []byte {
	fn = bytes.Clone(fn)
	depth, afterDot := 0, -1
	for i, c := range fn {
		switch c {
		case ';':
			fn[i] = ':'
		case '<', '{', '[':
			depth++
		case '>', '}', ']', ')':
			depth--
		case '(':
			if depth == 0 && i != afterDot && !bytes.HasPrefix(fn[i:], []byte("(anonymous namespace)")) {
				return fn[:i]
			}
			depth++
		case '.':
			afterDot = i + 1
		}
	}
	return fn
}

var fastPathSeeds = []string{
	"", "main", "main+0x1a", "f+0x", "+0x", "a+0x1+0x2", "a+0x1g", "a+0xAbC", "x+0y12", "0x12",
	"runtime.(*mheap).alloc", "std::vector<int>::push_back(int const&)", "f(int)", "(anonymous namespace)::f(x)",
	"a;b(c)", "g<(x)>(y)", "pkg.F[go.shape.interface { Info() (io/fs.FileInfo, error) }]", ".(", "(", "a.(b;c)(d)",
	" \t x", "a b (/usr/lib/x86_64-linux-gnu/libc.so.6)", "0123456 89abcdef", "a->b->c", "a-b->", "-", "->", "a--->b", "01234567 9abcdefg", "\xa0\xa0\xa0\xa0\xa0\xa0\xa0\xa0\xa0 ", "\u00a0\u0085 y", "\u2003z", "\xa0 w", "   ", "\t",
}

func checkFastPaths(t *testing.T, s string) {
	b := []byte(s)
	if got, want := perfStripOffsetDefault(b), referenceStripOffset(b); !bytes.Equal(got, want) {
		t.Errorf("perfStripOffsetDefault(%q) = %q, want %q", s, got, want)
	}
	if got, want := perfTrimLeft(b), bytes.TrimLeftFunc(b, unicode.IsSpace); !bytes.Equal(got, want) {
		t.Errorf("perfTrimLeft(%q) = %q, want %q", s, got, want)
	}
	if got, want := perfLastSpace(b), bytes.LastIndexByte(b, ' '); got != want {
		t.Errorf("perfLastSpace(%q) = %d, want %d", s, got, want)
	}
	gotBefore, gotAfter, gotFound := perfCutArrow(b)
	wantBefore, wantAfter, wantFound := bytes.Cut(b, []byte("->"))
	if !bytes.Equal(gotBefore, wantBefore) || !bytes.Equal(gotAfter, wantAfter) || gotFound != wantFound {
		t.Errorf("perfCutArrow(%q) = %q, %q, %v; want %q, %q, %v", s, gotBefore, gotAfter, gotFound, wantBefore, wantAfter, wantFound)
	}
	want := referenceTidy(b)
	if got := perfTidyDefault(bytes.Clone(b), 0); !bytes.Equal(got, want) {
		t.Errorf("perfTidyDefault(%q) = %q, want %q", s, got, want)
	}
	cut, semicolon := perfArgsCutDefault(b)
	if cut != len(want) || semicolon != bytes.ContainsRune(b[:cut], ';') {
		t.Errorf("perfArgsCutDefault(%q) = %d, %v; want %d", s, cut, semicolon, len(want))
	}
}

func TestPerfDefaultFastPaths(t *testing.T) {
	for _, s := range fastPathSeeds {
		checkFastPaths(t, s)
	}
}

func FuzzPerfDefaultFastPaths(f *testing.F) {
	for _, s := range fastPathSeeds {
		f.Add(s)
	}
	f.Fuzz(checkFastPaths)
}
