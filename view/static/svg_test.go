package static

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/view/heatmap"
)

// svgRect is a parsed <rect> with its effective fill (inherited from a <g>).
type svgRect struct {
	x, y, w, h float64
	fill       string
	class      string
	title      string
}

// parseSVG parses a standalone SVG as XML and returns its rects in drawing
// order and the ids of its patterns.
func parseSVG(t *testing.T, data []byte) (rects []svgRect, patterns map[string]bool) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	patterns = map[string]bool{}
	var fills []string // fill of each open element
	var inTitle *svgRect
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = el.Name.Local
				if el.Name.Space != "http://www.w3.org/2000/svg" {
					t.Errorf("root namespace %q", el.Name.Space)
				}
			}
			fill := ""
			if len(fills) > 0 {
				fill = fills[len(fills)-1]
			}
			attrs := map[string]string{}
			for _, a := range el.Attr {
				attrs[a.Name.Local] = a.Value
			}
			if f, ok := attrs["fill"]; ok {
				fill = f
			}
			fills = append(fills, fill)
			switch el.Name.Local {
			case "pattern":
				patterns[attrs["id"]] = true
			case "rect":
				r := svgRect{fill: fill, class: attrs["class"]}
				r.x, _ = strconv.ParseFloat(attrs["x"], 64)
				r.y, _ = strconv.ParseFloat(attrs["y"], 64)
				r.w, _ = strconv.ParseFloat(attrs["width"], 64)
				r.h, _ = strconv.ParseFloat(attrs["height"], 64)
				rects = append(rects, r)
			case "title":
				if len(rects) > 0 {
					inTitle = &rects[len(rects)-1]
				}
			}
		case xml.CharData:
			if inTitle != nil {
				inTitle.title += string(el)
			}
		case xml.EndElement:
			fills = fills[:len(fills)-1]
			if el.Name.Local == "title" {
				inTitle = nil
			}
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	return rects, patterns
}

// plots returns the map backgrounds (class "plot <mode>") in order.
func plots(rects []svgRect) []svgRect {
	var out []svgRect
	for _, r := range rects {
		if strings.HasPrefix(r.class, "plot ") {
			out = append(out, r)
		}
	}
	return out
}

// fillAt returns the fill of the topmost non-plot rect inside plot p at
// cell (col, row), row 0 at the bottom; "" when only the plot shows.
func fillAt(rects []svgRect, p svgRect, cols, rows, col, row int) (fill, title string) {
	cw, ch := p.w/float64(cols), p.h/float64(rows)
	x, y := p.x+(float64(col)+0.5)*cw, p.y+(float64(rows-1-row)+0.5)*ch
	for _, r := range rects {
		if r.class != "" || r.fill == "none" || r.fill == "" {
			continue
		}
		if x >= r.x && x < r.x+r.w && y >= r.y && y < r.y+r.h && r.w < p.w+1 {
			fill, title = r.fill, r.title
		}
	}
	return fill, title
}

func paletteHex(m heatmap.Mode, level int) string { return hexColour(levelColour(m, level)) }

func TestSVGKnownLevels(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSVG(&buf, knownRecording(), Options{}); err != nil {
		t.Fatal(err)
	}
	rects, patterns := parseSVG(t, buf.Bytes())
	ps := plots(rects)
	if len(ps) != 2 || ps[0].class != "plot frequency" || ps[1].class != "plot intensity" {
		t.Fatalf("maps %+v, want a frequency and an intensity plot", ps)
	}
	cols, rows := len(knownColumns), 8
	for i, mode := range []heatmap.Mode{heatmap.Frequency, heatmap.Intensity} {
		p := ps[i]
		if p.fill != paletteHex(mode, heatmap.LevelZero) {
			t.Errorf("%s background %s, want the zero colour", mode, p.fill)
		}
		for _, k := range knownLevels {
			want := paletteHex(mode, k[2+i])
			if got, _ := fillAt(rects, p, cols, rows, k[0], k[1]); got != want {
				t.Errorf("%s cell col %d row %d: fill %q, want %s (level %d)", mode, k[0], k[1], got, want, k[2+i])
			}
		}
		// Column 3 was observed with no events: nothing drawn over the
		// zero-colour background.
		if got, _ := fillAt(rects, p, cols, rows, 3, 0); got != "" {
			t.Errorf("%s zero cell drawn with %s", mode, got)
		}
		// Column 2 is a gap in every row: the no-data pattern.
		for row := range rows {
			got, title := fillAt(rects, p, cols, rows, 2, row)
			id := strings.TrimSuffix(strings.TrimPrefix(got, "url(#"), ")")
			if !strings.HasPrefix(got, "url(#") || !patterns[id] {
				t.Fatalf("%s gap cell row %d: fill %q, want the no-data pattern (patterns %v)", mode, row, got, patterns)
			}
			if !strings.Contains(title, "no data") || !strings.Contains(title, "2024-03-05 10:00:20 – 10:00:30") {
				t.Errorf("gap title %q", title)
			}
		}
	}
	// A native tooltip on a merged run names its time, bucket and value.
	_, title := fillAt(rects, ps[0], cols, rows, 4, 3)
	for _, want := range []string{"2024-03-05 10:00:40 – 10:00:50", "bucket 512µs – 1.02ms", "3 events/s"} {
		if !strings.Contains(title, want) {
			t.Errorf("title %q lacks %q", title, want)
		}
	}
}

func TestSVGMergesRuns(t *testing.T) {
	// SYNTHETIC: 50 equal columns make one run per row, not 50 rects.
	ivs := knownRecording()[:1]
	for i := 1; i < 50; i++ {
		iv := ivs[0]
		iv.Start = iv.Start.Add(time.Duration(i) * knownWidth)
		ivs = append(ivs, iv)
	}
	var buf bytes.Buffer
	if err := WriteSVG(&buf, ivs, Options{}); err != nil {
		t.Fatal(err)
	}
	rects, _ := parseSVG(t, buf.Bytes())
	ps := plots(rects)
	if len(ps) != 2 {
		t.Fatalf("%d maps", len(ps))
	}
	runs := 0
	for _, r := range rects {
		if r.class == "" && r.fill != "none" && r.w > ps[0].w-1 && r.w < ps[0].w+1 {
			runs++
		}
	}
	if runs != 2 {
		t.Errorf("%d full-width runs, want 2 (one per map)", runs)
	}
}

func TestSVGStacksEverySeries(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSVG(&buf, randomRecording(300, 4, 5*time.Second, 7), Options{MaxRows: 10}); err != nil {
		t.Fatal(err)
	}
	rects, _ := parseSVG(t, buf.Bytes())
	ps := plots(rects)
	if len(ps) != 8 {
		t.Fatalf("%d maps, want 8 (4 series × 2)", len(ps))
	}
	for i := 1; i < len(ps); i++ {
		if ps[i].y <= ps[i-1].y+ps[i-1].h {
			t.Errorf("map %d at y %g overlaps map %d ending at %g", i, ps[i].y, i-1, ps[i-1].y+ps[i-1].h)
		}
	}
	for _, p := range ps {
		if rows := p.h / 14; rows > 10 {
			t.Errorf("map with %g rows, MaxRows 10", rows)
		}
	}
}

func TestSVGEscapesNames(t *testing.T) {
	// SYNTHETIC hostile names: markup, quotes, invalid UTF-8, control bytes.
	ivs := knownRecording()
	bad := "a<b>&\"'\x00\x1b\xff]]> </svg>"
	for i := range ivs {
		ivs[i].Source = bad
		for j := range ivs[i].Series {
			ivs[i].Series[j].Key.Event = bad
			ivs[i].Series[j].Key.Instance = bad
		}
	}
	var buf bytes.Buffer
	if err := WriteSVG(&buf, ivs, Options{Title: bad}); err != nil {
		t.Fatal(err)
	}
	parseSVG(t, buf.Bytes())
	var page bytes.Buffer
	if err := WriteHTML(&page, ivs, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page.String(), "</svg>\" ") || strings.Contains(page.String(), "a<b>") {
		t.Errorf("HTML holds an unescaped name")
	}
}

func ExampleWriteSVG() {
	var buf bytes.Buffer
	err := WriteSVG(&buf, knownRecording(), Options{Title: "demo"})
	fmt.Println(err, strings.HasPrefix(buf.String(), "<?xml"), strings.Count(buf.String(), `class="plot `))
	// Output: <nil> true 2
}
