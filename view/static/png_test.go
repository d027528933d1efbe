package static

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"
	"time"

	"github.com/latscope/latscope/view/heatmap"
)

func decodePNG(t *testing.T, data []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("PNG does not decode: %v", err)
	}
	return img
}

func rgbAt(img image.Image, x, y int) color.RGBA {
	r, g, b, _ := img.At(x, y).RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 255}
}

func TestPNGKnownLevels(t *testing.T) {
	var buf bytes.Buffer
	if err := WritePNG(&buf, knownRecording(), Options{}); err != nil {
		t.Fatal(err)
	}
	img := decodePNG(t, buf.Bytes())
	// 7 columns get 35 px cells (a map is at least 240 px wide); the page
	// keeps its minimum width of 820 px.
	if w := img.Bounds().Dx(); w != 820 {
		t.Errorf("width %d, want 820", w)
	}
	c := layoutDocument(buildReport(knownRecording(), Options{}), rasterGeometry(len(knownColumns)))
	if len(c.maps) != 2 || img.Bounds().Dy() != int(c.h) {
		t.Fatalf("%d maps, height %d (layout %g)", len(c.maps), img.Bounds().Dy(), c.h)
	}
	for i, m := range c.maps {
		if m.CellW != 35 || m.CellH != 12 || m.Rows != 8 || m.Cols != 7 {
			t.Fatalf("map geometry %+v", m)
		}
		centre := func(col, row int) (int, int) {
			return int(m.X + (float64(col)+0.5)*m.CellW), int(m.rowY(row) + m.CellH/2)
		}
		for _, k := range knownLevels {
			x, y := centre(k[0], k[1])
			if got, want := rgbAt(img, x, y), levelColour(m.Mode, k[2+i]); got != want {
				t.Errorf("%s cell col %d row %d: pixel %v, want %v (level %d)", m.Mode, k[0], k[1], got, want, k[2+i])
			}
		}
		x, y := centre(3, 4)
		if got := rgbAt(img, x, y); got != levelColour(m.Mode, heatmap.LevelZero) {
			t.Errorf("zero cell pixel %v", got)
		}
		// The gap column is hatched: both greys, nothing else.
		greys := map[color.RGBA]int{}
		x0, y0 := int(m.X+2*m.CellW), int(m.Y)
		for yy := y0 + 1; yy < y0+int(m.CellH)*m.Rows-1; yy++ {
			for xx := x0 + 1; xx < x0+int(m.CellW)-1; xx++ {
				greys[rgbAt(img, xx, yy)]++
			}
		}
		if len(greys) != 2 || greys[noDataBase] == 0 || greys[noDataHatch] == 0 {
			t.Errorf("gap column colours %v, want the two no-data greys", greys)
		}
	}
	// Text was drawn: the title's area holds dark pixels.
	dark := 0
	for y := 0; y < 40; y++ {
		for x := 0; x < 200; x++ {
			if p := rgbAt(img, x, y); p.R < 100 && p.G < 100 && p.B < 100 {
				dark++
			}
		}
	}
	if dark < 50 {
		t.Errorf("title area has %d dark pixels: no text drawn?", dark)
	}
}

func TestPNGWidthFollowsColumns(t *testing.T) {
	// SYNTHETIC: 300 columns get 4 px each (1200/300); 900 get the minimum 2.
	for _, tc := range []struct{ cols, cellW int }{{300, 4}, {900, 2}} {
		var buf bytes.Buffer
		if err := WritePNG(&buf, randomRecording(tc.cols, 2, time.Second, 3), Options{}); err != nil {
			t.Fatal(err)
		}
		img := decodePNG(t, buf.Bytes())
		want := 12 + 64 + tc.cols*tc.cellW + 16 + 170 + 12
		if got := img.Bounds().Dx(); got != want {
			t.Errorf("%d columns: width %d, want %d", tc.cols, got, want)
		}
	}
}

func TestPNGHeightLimit(t *testing.T) {
	// SYNTHETIC: 80 series would need ~50 000 px; the PNG stops at the
	// limit and says how many series it left out.
	r := buildReport(randomRecording(50, 80, time.Second, 5), Options{})
	g := rasterGeometry(r.Columns)
	g.maxHeight = maxPNGHeight
	c := layoutDocument(r, g)
	if c.h > maxPNGHeight+100 || len(c.maps) >= 160 || len(c.maps) == 0 {
		t.Fatalf("height %g with %d maps", c.h, len(c.maps))
	}
	last := c.shapes[len(c.shapes)-1]
	if last.kind != textShape || !bytes.Contains([]byte(last.text), []byte("more series not drawn")) {
		t.Errorf("last shape %+v, want the note on left-out series", last)
	}
}
