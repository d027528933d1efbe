package static

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

	"github.com/latscope/latscope/stream"
)

// maxPNGHeight bounds the PNG's height (and memory): series past it are left
// out with a note, and the HTML output has them all.
const maxPNGHeight = 30000

// WritePNG writes the recording as a PNG with the SVG's layout: cells as
// whole-pixel blocks (2 to 12 px per column), text in the Go fonts.
func WritePNG(w io.Writer, ivs []stream.Interval, o Options) error {
	r := buildReport(ivs, o)
	g := rasterGeometry(r.Columns)
	g.maxHeight = maxPNGHeight
	img, err := rasterise(layoutDocument(r, g))
	if err != nil {
		return err
	}
	if err := png.Encode(w, img); err != nil {
		return fmt.Errorf("encoding PNG: %w", err)
	}
	return nil
}

// goFonts are the parsed Go fonts (immutable once parsed).
var goFonts = sync.OnceValues(func() ([2]*opentype.Font, error) {
	var fonts [2]*opentype.Font
	for i, ttf := range [][]byte{goregular.TTF, gobold.TTF} {
		f, err := opentype.Parse(ttf)
		if err != nil {
			return fonts, fmt.Errorf("parsing the Go font: %w", err)
		}
		fonts[i] = f
	}
	return fonts, nil
})

// raster draws a canvas into a paletted image: the picture has few colours
// (levels, greys, text shades over white), so one byte per pixel is enough
// and the PNG stays small.
type raster struct {
	img   *image.Paletted
	index map[color.RGBA]uint8
	fonts [2]*opentype.Font
	faces map[faceKey]font.Face
}

type faceKey struct {
	size float64
	bold bool
}

// textShades is the number of anti-aliasing steps of text over white.
const textShades = 16

func rasterise(c *canvas) (*image.Paletted, error) {
	fonts, err := goFonts()
	if err != nil {
		return nil, err
	}
	w, h := max(1, int(math.Ceil(c.w))), max(1, int(math.Ceil(c.h)))
	ra := &raster{img: image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.RGBA{255, 255, 255, 255}}),
		index: map[color.RGBA]uint8{{255, 255, 255, 255}: 0}, fonts: fonts, faces: map[faceKey]font.Face{}}
	defer ra.closeFaces()
	for _, s := range c.shapes {
		switch s.kind {
		case rectShape:
			ra.drawRect(s)
		case lineShape:
			ra.fill(ra.colour(s.stroke), s.x, s.y, math.Max(s.w, 1), math.Max(s.h, 1))
		case textShape:
			if err := ra.drawText(s); err != nil {
				return nil, err
			}
		}
	}
	return ra.img, nil
}

func (ra *raster) closeFaces() {
	for _, f := range ra.faces {
		_ = f.Close()
	}
}

// colour returns the palette index of c, adding it while there is room
// (else the nearest existing colour).
func (ra *raster) colour(c color.RGBA) uint8 {
	c.A = 255
	if i, ok := ra.index[c]; ok {
		return i
	}
	if len(ra.img.Palette) >= 256 {
		return uint8(ra.img.Palette.Index(c))
	}
	i := uint8(len(ra.img.Palette))
	ra.img.Palette = append(ra.img.Palette, c)
	ra.index[c] = i
	return i
}

func (ra *raster) drawRect(s shape) {
	switch {
	case s.stroke.A != 0:
		i := ra.colour(s.stroke)
		x0, y0 := math.Round(s.x), math.Round(s.y)
		x1, y1 := math.Round(s.x+s.w), math.Round(s.y+s.h)
		ra.fill(i, x0, y0, x1-x0, 1)
		ra.fill(i, x0, y1-1, x1-x0, 1)
		ra.fill(i, x0, y0, 1, y1-y0)
		ra.fill(i, x1-1, y0, 1, y1-y0)
	case s.fill.noData:
		ra.hatch(s.x, s.y, s.w, s.h)
	default:
		ra.fill(ra.colour(s.fill.rgb), s.x, s.y, s.w, s.h)
	}
}

// bounds rounds a rectangle to whole pixels clipped to the image.
func (ra *raster) bounds(x, y, w, h float64) image.Rectangle {
	r := image.Rect(int(math.Round(x)), int(math.Round(y)), int(math.Round(x+w)), int(math.Round(y+h)))
	return r.Intersect(ra.img.Rect)
}

func (ra *raster) fill(i uint8, x, y, w, h float64) {
	r := ra.bounds(x, y, w, h)
	for py := r.Min.Y; py < r.Max.Y; py++ {
		row := ra.img.Pix[ra.img.PixOffset(r.Min.X, py):ra.img.PixOffset(r.Max.X, py)]
		for k := range row {
			row[k] = i
		}
	}
}

// hatch fills a rectangle with the "no data" pattern: diagonal stripes
// aligned to the image so neighbouring runs join up.
func (ra *raster) hatch(x, y, w, h float64) {
	base, line := ra.colour(noDataBase), ra.colour(noDataHatch)
	r := ra.bounds(x, y, w, h)
	for py := r.Min.Y; py < r.Max.Y; py++ {
		for px := r.Min.X; px < r.Max.X; px++ {
			i := base
			if (px+py)%6 < 2 {
				i = line
			}
			ra.img.Pix[ra.img.PixOffset(px, py)] = i
		}
	}
}

func (ra *raster) face(size float64, bold bool) (font.Face, error) {
	k := faceKey{size, bold}
	if f, ok := ra.faces[k]; ok {
		return f, nil
	}
	fnt := ra.fonts[0]
	if bold {
		fnt = ra.fonts[1]
	}
	f, err := opentype.NewFace(fnt, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		return nil, fmt.Errorf("making a font face: %w", err)
	}
	ra.faces[k] = f
	return f, nil
}

// drawText draws a text shape's glyphs, blending their coverage over the
// white page in textShades steps.
func (ra *raster) drawText(s shape) error {
	face, err := ra.face(s.size, s.bold)
	if err != nil {
		return err
	}
	x := s.x
	switch adv := float64(font.MeasureString(face, s.text)) / 64; s.anchor {
	case anchorMiddle:
		x -= adv / 2
	case anchorEnd:
		x -= adv
	}
	var shades [textShades]uint8
	for k := range shades {
		shades[k] = ra.colour(blendOverWhite(s.fill.rgb, float64(k+1)/textShades))
	}
	dot := fixed.P(int(math.Round(x)), int(math.Round(s.y)))
	prev := rune(-1)
	for _, r := range s.text {
		if prev >= 0 {
			dot.X += face.Kern(prev, r)
		}
		dr, mask, mp, adv, ok := face.Glyph(dot, r)
		if ok {
			ra.blit(dr, mask, mp, shades)
		}
		dot.X += adv
		prev = r
	}
	return nil
}

// blit copies a glyph mask onto the image; coverage picks the shade.
func (ra *raster) blit(dr image.Rectangle, mask image.Image, mp image.Point, shades [textShades]uint8) {
	clip := dr.Intersect(ra.img.Rect)
	for py := clip.Min.Y; py < clip.Max.Y; py++ {
		for px := clip.Min.X; px < clip.Max.X; px++ {
			_, _, _, a := mask.At(mp.X+px-dr.Min.X, mp.Y+py-dr.Min.Y).RGBA()
			k := int(a*textShades/0x10000) - 1
			if k < 0 {
				continue
			}
			off := ra.img.PixOffset(px, py)
			if cur := ra.img.Pix[off]; cur != 0 && k < textShades/2 {
				continue // faint edge over something not white: keep it
			}
			ra.img.Pix[off] = shades[k]
		}
	}
}

// blendOverWhite returns c drawn with coverage a over white.
func blendOverWhite(c color.RGBA, a float64) color.RGBA {
	mix := func(v uint8) uint8 { return uint8(math.Round(255 - (255-float64(v))*a)) }
	return color.RGBA{mix(c.R), mix(c.G), mix(c.B), 255}
}
