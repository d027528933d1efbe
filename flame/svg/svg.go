package svg

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/latscope/latscope/flame"
)

const (
	xpad     = 10 // left and right padding, pixels
	framePad = 1  // vertical gap between frames, pixels
)

//go:embed flamegraph.js
var script string

//go:embed flamegraph.css
var style string

// ErrEmpty is returned for a profile without samples. flamegraph.pl then
// writes an "ERROR: No valid input provided" SVG and inferno an error SVG;
// Write writes nothing so the caller can report it and exit non-zero.
var ErrEmpty = errors.New("flame graph: no samples to draw (empty or all-zero profile)")

// Write renders p as an SVG flame graph. A differential profile (p.Diff)
// is coloured by change: red where the new count grew over the base, blue
// where it shrank (swapped by Negate), white where equal. Geometry equals
// inferno-flamegraph's; see the package comment.
func Write(w io.Writer, p *flame.Profile, opts Options) error {
	o, err := resolve(opts)
	if err != nil {
		return err
	}
	g := layout(order(p, &o), p.Diff, o.minPct)
	if g.total <= 0 {
		return ErrEmpty
	}
	imageHeight := (g.depthMax+1)*o.Height + o.ypad1() + o.ypad2()
	sw := &writer{w: w, o: &o, g: &g, height: imageHeight, buf: make([]byte, 0, writeChunk+4096)}
	sw.prelude()
	for _, block := range g.blocks {
		for i := range block {
			sw.frame(&block[i])
		}
		if sw.err != nil {
			return fmt.Errorf("writing flame graph: %w", sw.err)
		}
	}
	sw.str("</svg>\n</svg>\n")
	sw.flush()
	if sw.err != nil {
		return fmt.Errorf("writing flame graph: %w", sw.err)
	}
	return nil
}

// writeChunk is how much SVG text the writer gathers before writing it
// out: large writes, and no second copy through a bufio.Writer.
const writeChunk = 256 << 10

// writer builds the SVG text in buf and writes it to w in large pieces.
type writer struct {
	w      io.Writer
	o      *resolved
	g      *graph
	height int
	buf    []byte
	err    error
}

func (s *writer) str(v string) { s.buf = append(s.buf, v...) }

func (s *writer) int(v int64) { s.buf = strconv.AppendInt(s.buf, v, 10) }

func (s *writer) fixed(v float64, prec int) { s.buf = appendFixed(s.buf, v, prec) }

func (s *writer) esc(v string) { s.buf = appendEscaped(s.buf, v) }

func (s *writer) flush() {
	if s.err == nil {
		_, s.err = s.w.Write(s.buf)
	}
	s.buf = s.buf[:0]
}

func (s *writer) prelude() {
	o := s.o
	s.str(`<?xml version="1.0" standalone="no"?>` + "\n")
	s.str(`<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">` + "\n")
	s.str(`<svg version="1.1" width="`)
	s.int(int64(o.Width))
	s.str(`" height="`)
	s.int(int64(s.height))
	s.str(`" onload="init(evt)" viewBox="0 0 `)
	s.int(int64(o.Width))
	s.str(" ")
	s.int(int64(s.height))
	s.str(`" xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:fg="http://github.com/jonhoo/inferno">` + "\n")
	s.str("<!-- Flame graph drawn by latscope (flamegraph.pl options, inferno geometry). -->\n<!-- NOTES: ")
	s.esc(strings.ReplaceAll(o.Notes, "--", "- -"))
	s.str(" -->\n")
	s.str(`<defs><linearGradient id="background" y1="0" y2="1" x1="0" x2="0"><stop stop-color="`)
	s.esc(o.bg1)
	s.str(`" offset="5%"/><stop stop-color="`)
	s.esc(o.bg2)
	s.str(`" offset="95%"/></linearGradient></defs>` + "\n")
	s.str("<style type=\"text/css\">\ntext { font-family:")
	s.esc(cssFont(o.FontType))
	s.str("; font-size:")
	s.int(int64(o.FontSize))
	s.str("px }\n#title { text-anchor:middle; font-size:")
	s.int(int64(o.FontSize + 5))
	s.str("px; }\n")
	s.str(style)
	s.str("</style>\n<script type=\"text/ecmascript\"><![CDATA[\nvar nametype = ")
	s.jsString(o.NameType)
	s.str(";\nvar fontsize = ")
	s.int(int64(o.FontSize))
	s.str(";\nvar fontwidth = ")
	s.buf = strconv.AppendFloat(s.buf, o.FontWidth, 'g', -1, 64)
	s.str(";\nvar xpad = 10;\nvar inverted = ")
	s.str(strconv.FormatBool(o.Inverted))
	s.str(";\nvar searchcolor = '" + DefaultSearch + "';\n")
	s.str(script)
	s.str("]]></script>\n")
	s.str(`<rect x="0" y="0" width="100%" height="`)
	s.int(int64(s.height))
	s.str(`" fill="url(#background)"/>` + "\n")
	s.text(`id="title"`, "50%", float64(o.FontSize*2), o.Title)
	if o.Subtitle != "" {
		s.text(`id="subtitle"`, "50%", float64(o.FontSize*4), o.Subtitle)
	}
	detailsY := s.height - o.ypad2()/2
	if o.Inverted {
		detailsY = o.ypad1() - o.FontSize
	}
	s.text(`id="details"`, strconv.Itoa(xpad), float64(detailsY), " ")
	s.text(`id="unzoom" class="hide"`, strconv.Itoa(xpad), float64(o.FontSize*2), "Reset Zoom")
	right := strconv.Itoa(o.Width - xpad)
	s.text(`id="search"`, right, float64(o.FontSize*2), "Search")
	s.text(`id="matched"`, right, float64(s.height-o.ypad2()/2), " ")
	s.str(`<svg id="frames" x="10" width="`)
	s.int(int64(o.Width - 2*xpad))
	s.str(`" total_samples="`)
	s.int(s.g.total)
	s.str(`">` + "\n")
}

// text writes a <text> element; x is written verbatim (pixels or "N%").
func (s *writer) text(attrs, x string, y float64, body string) {
	s.str("<text " + attrs + ` x="` + x + `" y="`)
	s.fixed(y, 2)
	s.str(`">`)
	s.esc(body)
	s.str("</text>\n")
}

// jsString writes v as a single-quoted JavaScript string literal.
func (s *writer) jsString(v string) {
	s.buf = append(s.buf, '\'')
	for _, r := range v {
		switch {
		case r == '\'' || r == '\\':
			s.buf = append(s.buf, '\\', byte(r))
		case r < 0x20 || r == '<' || r == '>' || r == ']':
			s.buf = fmt.Appendf(s.buf, `\u%04x`, r)
		default:
			s.buf = utf8.AppendRune(s.buf, r)
		}
	}
	s.buf = append(s.buf, '\'')
}

// cssFont quotes a font name unless it is a generic family.
func cssFont(f string) string {
	switch f {
	case "cursive", "fantasy", "monospace", "serif", "sans-serif":
		return f
	}
	return `"` + strings.NewReplacer(`"`, "", ";", "", "}", "", "<", "").Replace(f) + `"`
}

// frame writes one frame: tooltip, rectangle and (truncated) label.
func (s *writer) frame(f *frame) {
	o, g := s.o, s.g
	pctPerTime := 100 / float64(g.total)
	x1 := float64(f.start) * pctPerTime
	x2 := float64(f.end) * pctPerTime
	var y1, y2 int
	if o.Inverted {
		y1 = o.ypad1() + f.depth*o.Height
		y2 = o.ypad1() + (f.depth+1)*o.Height - framePad
	} else {
		y1 = s.height - o.ypad2() - (f.depth+1)*o.Height + framePad
		y2 = s.height - o.ypad2() - f.depth*o.Height
	}
	samples := f.end - f.start
	name := deannotate(f.name)
	root := f.depth == 0 && f.name == ""

	s.str("<g><title>")
	if root {
		s.str("all (")
		s.buf = appendThousands(s.buf, samples)
		s.str(" ")
		s.esc(o.CountName)
		s.str(", 100%)")
	} else {
		s.esc(name)
		s.str(" (")
		s.buf = appendThousands(s.buf, samples)
		s.str(" ")
		s.esc(o.CountName)
		s.str(", ")
		s.fixed(100*float64(samples)/float64(g.total), 2)
		s.str("%")
		if g.diff {
			s.deltaText(f.delta)
		}
		s.str(")")
		if o.Describe != nil {
			if d := o.Describe(name); d != "" {
				s.str(" — ")
				s.esc(d)
			}
		}
	}
	s.str(`</title><rect x="`)
	s.fixed(x1, 4)
	s.str(`%" y="`)
	s.int(int64(y1))
	s.str(`" width="`)
	s.fixed(x2-x1, 4)
	s.str(`%" height="`)
	s.int(int64(y2 - y1))
	s.str(`" fill="`)
	c := s.color(f)
	s.rgb(c)
	s.str(`" fg:x="`)
	s.int(f.start)
	s.str(`" fg:w="`)
	s.int(samples)
	s.str(`"/><text x="`)
	s.fixed(x1+100*3/float64(o.Width), 4)
	s.str(`%" y="`)
	s.fixed(3+float64(y1+y2)/2, 2)
	s.str(`">`)
	if root {
		name = "all" // flamegraph.pl labels the root; inferno leaves it blank
	}
	s.esc(fitText(name, x2-x1, o))
	s.str("</text></g>\n")
	if len(s.buf) > writeChunk {
		s.flush()
	}
}

// rgb writes "rgb(r,g,b)".
func (s *writer) rgb(c rgb) {
	s.str("rgb(")
	s.buf = strconv.AppendUint(s.buf, uint64(c.r), 10)
	s.buf = append(s.buf, ',')
	s.buf = strconv.AppendUint(s.buf, uint64(c.g), 10)
	s.buf = append(s.buf, ',')
	s.buf = strconv.AppendUint(s.buf, uint64(c.b), 10)
	s.buf = append(s.buf, ')')
}

func (s *writer) deltaText(delta int64) {
	if s.o.Negate {
		delta = -delta
	}
	if delta == 0 {
		s.str("; 0.00%")
		return
	}
	s.str("; ")
	pct := 100 * float64(delta) / float64(s.g.total)
	if pct >= 0 {
		s.str("+")
	}
	s.fixed(pct, 2)
	s.str("%")
}

func (s *writer) color(f *frame) rgb {
	switch {
	case f.name == "--" || f.name == "-":
		return s.o.frameColor(f.name)
	case s.g.diff:
		d := f.delta
		if s.o.Negate {
			d = -d
		}
		return diffColor(d, s.g.deltaMax)
	}
	return s.o.frameColor(f.name)
}

// fitText truncates a label to the characters that fit in a frame of
// widthPct percent, ending in "..", or drops it below three characters:
// inferno's rule (character width = font size × font width, of the whole
// image width), except that non-ASCII names are measured in characters.
func fitText(name string, widthPct float64, o *resolved) string {
	fit := int(widthPct / (100 * float64(o.FontSize) * o.FontWidth / float64(o.Width)))
	if fit < 3 {
		return ""
	}
	if len(name) < fit {
		return name
	}
	// inferno compares bytes, then keeps fit-2 characters; counting
	// characters throughout avoids its "αβγ.." for a name that fits.
	if utf8.RuneCountInString(name) < fit {
		return name
	}
	n := 0
	for i := range name {
		if n == fit-2 {
			return name[:i] + ".."
		}
		n++
	}
	return name
}

// appendThousands formats v with comma separators ("12,345").
func appendThousands(dst []byte, v int64) []byte {
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	var digits [24]byte
	d := strconv.AppendInt(digits[:0], v, 10)
	for i, c := range d {
		if i > 0 && (len(d)-i)%3 == 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, c)
	}
	return dst
}

// xmlPlain marks the bytes appendEscaped copies as they are: printable
// ASCII but for XML's five specials.
var xmlPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = !strings.ContainsRune(`<>&"'`, rune(c))
	}
	return t
}()

// appendEscaped appends v escaped for XML text and attributes; bytes that
// XML forbids (control characters, invalid UTF-8) become U+FFFD.
func appendEscaped(dst []byte, v string) []byte {
	for i := 0; i < len(v); {
		if xmlPlain[v[i]] { // copy a run of plain bytes at once
			j := i + 1
			for j < len(v) && xmlPlain[v[j]] {
				j++
			}
			dst = append(dst, v[i:j]...)
			i = j
			continue
		}
		c := v[i]
		switch c {
		case '<':
			dst = append(dst, "&lt;"...)
		case '>':
			dst = append(dst, "&gt;"...)
		case '&':
			dst = append(dst, "&amp;"...)
		case '"':
			dst = append(dst, "&quot;"...)
		case '\'':
			dst = append(dst, "&apos;"...)
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
	return dst
}
