package svg

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// wellFormed decodes the whole document with encoding/xml.
func wellFormed(t testing.TB, b []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	for {
		if _, err := d.Token(); err == io.EOF {
			return
		} else if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
	}
}

func render(t testing.TB, p *flame.Profile, o Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, p, o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestEmptyProfileIsAnError(t *testing.T) {
	zero := flame.New()
	zero.Add("a;b", 0)
	for name, p := range map[string]*flame.Profile{"empty": flame.New(), "zero counts": zero} {
		var b bytes.Buffer
		if err := Write(&b, p, Options{}); !errors.Is(err, ErrEmpty) || b.Len() != 0 {
			t.Errorf("%s: err %v, %d bytes written; want ErrEmpty and nothing", name, err, b.Len())
		}
	}
}

func TestBadOptions(t *testing.T) {
	p := flame.New()
	p.Add("a", 1)
	for _, o := range []Options{{MinWidth: "x"}, {MinWidth: "-1"}, {MinWidth: "1%%"}, {Colors: "pink"},
		{BgColors: "#12345"}, {BgColors: "navy"}, {Width: 15}} {
		if err := Write(io.Discard, p, o); err == nil || errors.Is(err, ErrEmpty) {
			t.Errorf("%+v: err %v, want an option error", o, err)
		}
	}
	if err := ParseMinWidth("2.5%"); err != nil {
		t.Error(err)
	}
}

// TestRealProfile renders FlameGraph's vertx golden and checks the root
// tooltip against an independent sum of the file's counts, the titles
// and that every palette gives well-formed XML.
func TestRealProfile(t *testing.T) {
	path := testenv.DataFile(t, "flamegraph/FlameGraph-test/results/perf-vertx-stacks-01-collapsed-all.txt")
	p := readFoldedFile(t, path)
	var sum int64
	for _, line := range strings.Split(strings.TrimSpace(string(mustRead(t, path))), "\n") {
		n, err := strconv.ParseInt(line[strings.LastIndexByte(line, ' ')+1:], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		sum += n
	}
	out := render(t, p, Options{})
	root := "<title>all (" + string(appendThousands(nil, sum)) + " samples, 100%)</title>"
	if !bytes.Contains(out, []byte(root)) || !bytes.Contains(out, []byte(`total_samples="`+strconv.FormatInt(sum, 10)+`"`)) {
		t.Errorf("root frame %q or total %d missing", root, sum)
	}
	for o, title := range map[*Options]string{{}: "Flame Graph", {Inverted: true}: "Icicle Graph",
		{FlameChart: true}: "Flame Chart", {Title: "T<&>", Inverted: true}: "T&lt;&amp;&gt;"} {
		if b := render(t, p, *o); !bytes.Contains(b, []byte(`<text id="title" x="50%" y="24.00">`+title+"</text>")) {
			t.Errorf("%+v: title %q missing", *o, title)
		}
	}
	for _, pal := range Palettes {
		b := render(t, p, Options{Colors: pal, CountName: "µs", NameType: "Fn'\\:", Notes: "a--b<", FontType: "Verdana"})
		wellFormed(t, b)
		if !bytes.Contains(b, []byte(" µs, ")) {
			t.Errorf("%s: count name not used", pal)
		}
	}
	wellFormed(t, render(t, readFolded(t, bytes.NewReader(syntheticDeep())), Options{MinWidth: "0"}))
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := readFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFitText(t *testing.T) {
	o, _ := resolve(Options{}) // 12 px × 0.59 = 7.08 px per character of 1200
	per := 100 * 12 * 0.59 / 1200
	for _, c := range []struct {
		name  string
		chars float64
		want  string
	}{
		{"abcdef", 2.9, ""}, {"abcdef", 3, "a.."}, {"abcdef", 6, "abcd.."}, {"abcdef", 7, "abcdef"},
		{"αβγδεζ", 9, "αβγδεζ"}, {"αβγδεζ", 5, "αβγ.."}, {"αβ", 4, "αβ"}, {"αβγδεζ", 6, "αβγδ.."},
	} {
		if got := fitText(c.name, c.chars*per+1e-9, &o); got != c.want {
			t.Errorf("fitText(%q, %v chars) = %q, want %q", c.name, c.chars, got, c.want)
		}
	}
}

func TestFormatting(t *testing.T) {
	for v, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := string(appendThousands(nil, v)); got != want {
			t.Errorf("appendThousands(%d) = %q, want %q", v, got, want)
		}
	}
	if got := string(appendEscaped(nil, "a<b>&\"'\x01\xff\tz")); got != "a&lt;b&gt;&amp;&quot;&apos;\uFFFD\uFFFD\tz" {
		t.Errorf("appendEscaped = %q", got)
	}
	if c := diffColor(5, 10); c != (rgb{255, 175, 175}) {
		t.Errorf("diffColor(5,10) = %v", c)
	}
	if c := diffColor(-10, 10); c != (rgb{100, 100, 255}) {
		t.Errorf("diffColor(-10,10) = %v", c)
	}
}

// FuzzWrite feeds arbitrary folded text: Write must not panic and must
// give well-formed XML or ErrEmpty.
func FuzzWrite(f *testing.F) {
	f.Add([]byte("a;b;c 5\na;b 3\na;d 2\nx 1\n"), false, false)
	f.Add([]byte("a;b 1 2\na;c 3 0\n-;\xff 4 4\n"), true, true)
	f.Add(syntheticDeep()[:2000], true, false)
	f.Fuzz(func(t *testing.T, in []byte, inverted, reverse bool) {
		p := flame.New()
		for _, line := range strings.Split(string(in), "\n") {
			frames, count, ok := strings.Cut(line, " ")
			if !ok {
				continue
			}
			base, n, two := strings.Cut(count, " ")
			c, err := strconv.ParseInt(n, 10, 64)
			if err != nil || !two {
				c, err = strconv.ParseInt(count, 10, 64)
				base = "0"
			}
			b, err2 := strconv.ParseInt(base, 10, 64)
			if err != nil || err2 != nil || c > 1<<40 || b > 1<<40 {
				continue
			}
			if two {
				p.Diff = true
			}
			p.AddDiff(frames, b, c)
		}
		var out bytes.Buffer
		err := Write(&out, p, Options{Inverted: inverted, Reverse: reverse, MinWidth: "0"})
		if errors.Is(err, ErrEmpty) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		wellFormed(t, out.Bytes())
	})
}
