package svg

import (
	"fmt"
	"math"
	"strings"
)

// rgb is a frame colour.
type rgb struct{ r, g, b uint8 }

// hue is a plain colour range; semantic palettes (java, js, ...) pick one
// per frame name.
type hue uint8

const (
	hueHot hue = iota
	hueMem
	hueIO
	hueRed
	hueGreen
	hueBlue
	hueAqua
	hueYellow
	huePurple
	hueOrange
)

// palette is a Colors value: a plain hue or a rule choosing one by name.
type palette struct {
	name  string
	plain hue
	pick  func(name string) hue // nil for plain palettes
}

func parsePalette(name string) (palette, bool) {
	plain := map[string]hue{"hot": hueHot, "mem": hueMem, "io": hueIO, "red": hueRed, "green": hueGreen,
		"blue": hueBlue, "aqua": hueAqua, "yellow": hueYellow, "purple": huePurple, "orange": hueOrange}
	if h, ok := plain[name]; ok {
		return palette{name: name, plain: h}, true
	}
	rules := map[string]func(string) hue{"java": javaHue, "js": jsHue, "perl": perlHue, "python": pythonHue,
		"rust": rustHue, "wakeup": func(string) hue { return hueAqua }, "chain": chainHue}
	if f, ok := rules[name]; ok {
		return palette{name: name, pick: f}, true
	}
	return palette{}, false
}

// background returns the two gradient stops: the named gradient, a flat
// #rrggbb, or the palette's default (flamegraph.pl's choice).
func background(bg string, p palette) (string, string, error) {
	if bg == "" {
		switch p.name {
		case "mem":
			bg = "green"
		case "io", "wakeup", "chain":
			bg = "blue"
		case "red", "green", "blue", "aqua", "yellow", "purple", "orange":
			bg = "grey"
		default:
			bg = "yellow"
		}
	}
	switch bg {
	case "yellow":
		return "#eeeeee", "#eeeeb0", nil
	case "blue":
		return "#eeeeee", "#e0e0ff", nil
	case "green":
		return "#eef2ee", "#e0ffe0", nil
	case "grey", "gray":
		return "#f8f8f8", "#e8e8e8", nil
	}
	if isHexColor(bg) {
		return bg, bg, nil
	}
	return "", "", fmt.Errorf("bgcolors %q: want yellow, blue, green, grey or #rrggbb", bg)
}

func isHexColor(s string) bool {
	if len(s) != 7 || s[0] != '#' {
		return false
	}
	for _, c := range []byte(s[1:]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// frameColor colours a frame by name. The three variables in [0,1] come
// from a hash of the name so output is deterministic: flamegraph.pl's
// weighted name hash with Hash, else FNV-1a (as inferno --deterministic).
func (r *resolved) frameColor(name string) rgb {
	switch name {
	case "--":
		return rgb{160, 160, 160}
	case "-":
		return rgb{200, 200, 200}
	}
	var v1, v2, v3 float32
	if r.Hash {
		v1 = nameHash(name, false)
		v2 = nameHash(name, true)
		v3 = v2
	} else {
		v1, v2, v3 = fnvVars(name)
	}
	h := r.palette.plain
	if r.palette.pick != nil {
		h = r.palette.pick(name)
	}
	return hueColor(h, v1, v2, v3)
}

// hueColor is flamegraph.pl's colour formula for each range.
func hueColor(h hue, v1, v2, v3 float32) rgb {
	t := func(base, span, v float32) uint8 { return uint8(base + float32(uint8(span*v))) }
	switch h {
	case hueMem:
		return rgb{0, t(190, 50, v2), t(0, 210, v1)}
	case hueIO:
		return rgb{t(80, 60, v1), t(80, 60, v1), t(190, 55, v2)}
	case hueRed:
		return rgb{t(200, 55, v1), t(50, 80, v1), t(50, 80, v1)}
	case hueGreen:
		return rgb{t(50, 60, v1), t(200, 55, v1), t(50, 60, v1)}
	case hueBlue:
		return rgb{t(80, 60, v1), t(80, 60, v1), t(205, 50, v1)}
	case hueAqua:
		return rgb{t(50, 60, v1), t(165, 55, v1), t(165, 55, v1)}
	case hueYellow:
		return rgb{t(175, 55, v1), t(175, 55, v1), t(50, 20, v1)}
	case huePurple:
		return rgb{t(190, 65, v1), t(80, 60, v1), t(190, 65, v1)}
	case hueOrange:
		return rgb{t(190, 65, v1), t(90, 65, v1), 0}
	}
	return rgb{t(205, 50, v3), t(0, 230, v1), t(0, 55, v2)} // hot
}

// fnvVars derives three numbers in [0,1] from the FNV-1a hash of name.
func fnvVars(name string) (float32, float32, float32) {
	const prime = 0x100000001b3
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= prime
	}
	v1 := float32(float64(h) / float64(math.MaxUint64))
	h *= prime
	v2 := float32(float64(h) / float64(math.MaxUint64))
	h *= prime
	v3 := float32(float64(h) / float64(math.MaxUint64))
	return v1, v2, v3
}

// nameHash is flamegraph.pl's namehash: up to three characters after an
// optional "module`" prefix, earlier ones weighing more, so similar names
// get similar colours. With reversed it hashes the name read backwards.
func nameHash(name string, reversed bool) float32 {
	b := []byte(name)
	if reversed {
		b = make([]byte, len(name))
		for i := range name {
			b[len(name)-1-i] = name[i]
		}
	}
	if len(b) > 1 {
		if i := strings.IndexByte(string(b[1:]), '`'); i >= 0 {
			b = b[i+2:]
		}
	}
	var vector, max float32 = 0, 1
	weight := float32(1)
	mod := 10
	for i := 0; i < len(b) && i < 3; i++ {
		v := float32(int(b[i]) % mod)
		vector += v / float32(mod-1) * weight
		mod++
		max += weight
		weight *= 0.70
	}
	return 1 - vector/max
}

// diffColor is flamegraph.pl's colour scale for a differential: white
// for no change, red for more samples, blue for fewer, saturated at max.
func diffColor(delta, max int64) rgb {
	switch {
	case delta > 0:
		c := uint8(100 + 150*(max-delta)/max)
		return rgb{255, c, c}
	case delta < 0:
		c := uint8(100 + 150*(max+delta)/max)
		return rgb{c, c, 255}
	}
	return rgb{250, 250, 250}
}

// annotation returns the kind letter of a "_[k]"-style suffix (k kernel,
// j JIT, i inlined, w waker), or 0.
func annotation(name string) byte {
	n := len(name)
	if n >= 4 && name[n-1] == ']' && name[n-4] == '_' && name[n-3] == '[' {
		return name[n-2]
	}
	return 0
}

// deannotate drops a _[k], _[w], _[i] or _[j] suffix for display.
func deannotate(name string) string {
	switch annotation(name) {
	case 'k', 'w', 'i', 'j':
		return name[:len(name)-4]
	}
	return name
}

func javaHue(name string) hue {
	switch annotation(name) {
	case 'k':
		return hueOrange
	case 'i':
		return hueAqua
	case 'j':
		return hueGreen
	}
	j := strings.TrimPrefix(name, "L")
	switch {
	case strings.Contains(name, "::") || strings.HasPrefix(name, "-[") || strings.HasPrefix(name, "+["):
		return hueYellow // C++, Objective-C
	case strings.Contains(j, "/") || strings.Contains(j, ".") && !strings.HasPrefix(j, "[") ||
		j != "" && 'A' <= j[0] && j[0] <= 'Z':
		return hueGreen // Java
	}
	return hueRed // system
}

func perlHue(name string) hue {
	switch {
	case strings.HasSuffix(name, "_[k]"):
		return hueOrange
	case strings.Contains(name, "Perl") || strings.Contains(name, ".pl"):
		return hueGreen
	case strings.Contains(name, "::"):
		return hueYellow
	}
	return hueRed
}

func jsHue(name string) hue {
	switch {
	case name != "" && strings.TrimSpace(name) == "":
		return hueGreen
	case strings.HasSuffix(name, "_[k]"):
		return hueOrange
	case strings.HasSuffix(name, "_[j]"):
		if strings.Contains(name, "/") {
			return hueGreen
		}
		return hueAqua
	case strings.Contains(name, "::"):
		return hueYellow
	case strings.Contains(name, ":"):
		return hueAqua
	}
	if i := strings.IndexByte(name, '/'); i >= 0 {
		if strings.Contains(name[i:], "node_modules/") {
			return huePurple
		}
		if strings.Contains(name[i:], ".js") {
			return hueGreen
		}
	}
	return hueRed
}

func pythonHue(name string) hue {
	parts := strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' })
	for _, p := range parts {
		if p == "site-packages" {
			return hueAqua
		}
	}
	for _, p := range parts {
		v, ok := strings.CutPrefix(p, "python")
		if !ok {
			v, ok = strings.CutPrefix(p, "Python")
		}
		if ok && strings.Trim(v, "0123456789.") == "" {
			return hueYellow // standard library
		}
	}
	if strings.HasPrefix(name, "<built-in") || strings.HasPrefix(name, "<method") || strings.HasPrefix(name, "<frozen") {
		return hueYellow
	}
	return hueRed
}

func rustHue(name string) hue {
	if _, after, ok := strings.Cut(name, "`"); ok {
		name = after
	}
	for _, p := range []string{"core::", "std::", "alloc::", "<std::", "<alloc::"} {
		if strings.HasPrefix(name, p) {
			return hueOrange // Rust standard library
		}
	}
	if strings.HasPrefix(name, "<core::") && !strings.HasPrefix(name, "<core::future::from_generator::GenFuture<T>") {
		return hueOrange
	}
	if strings.Contains(name, "::") {
		return hueAqua // Rust user code
	}
	return hueYellow
}

// chainHue is flamegraph.pl's chain palette: wakers aqua, off-CPU blue.
func chainHue(name string) hue {
	if strings.Contains(name, "_[w]") {
		return hueAqua
	}
	return hueBlue
}
