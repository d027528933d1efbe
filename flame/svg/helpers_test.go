package svg

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/latscope/latscope/flame"
)

// readFolded parses folded stacks ("frames count", or "frames base count"
// for a differential) the way flamegraph.pl and inferno do: the count is
// the last space-separated field; blank and "# " lines are skipped.
func readFolded(t testing.TB, r io.Reader) *flame.Profile {
	t.Helper()
	p := flame.New()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "# ") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			t.Fatalf("folded line without count: %q", line)
		}
		n, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil {
			t.Fatalf("folded line %q: %v", line, err)
		}
		frames := strings.TrimSpace(line[:i])
		if j := strings.LastIndexByte(frames, ' '); j >= 0 {
			if base, err := strconv.ParseInt(frames[j+1:], 10, 64); err == nil {
				p.Diff = true
				p.AddDiff(strings.TrimSpace(frames[:j]), base, n)
				continue
			}
		}
		p.Add(frames, n)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFoldedFile(t testing.TB, path string) *flame.Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return readFolded(t, f)
}

// drawn is one frame as found in an SVG.
type drawn struct {
	title, x, y, width, height, fill, fgx, fgw, textX, textY, text string
}

var (
	frameRE  = regexp.MustCompile(`<g><title>([^<]*)</title><rect x="([^"]*)" y="([^"]*)" width="([^"]*)" height="([^"]*)" fill="([^"]*)" fg:x="([^"]*)" fg:w="([^"]*)"/><text x="([^"]*)" y="([^"]*)">([^<]*)</text></g>`)
	headerRE = regexp.MustCompile(`<svg version="1.1" width="(\d+)" height="(\d+)"`)
	titleRE  = regexp.MustCompile(`<text id="title"[^>]*>([^<]*)</text>`)
)

// parsed is what the geometry comparison reads from an SVG.
type parsed struct {
	width, height, title string
	frames               map[string]drawn // by fg:x and y: unique per frame
}

func parseSVG(t testing.TB, svg []byte) parsed {
	t.Helper()
	// inferno's output has no newlines between elements; ours has.
	svg = bytes.ReplaceAll(svg, []byte("</g>\n"), []byte("</g>"))
	h := headerRE.FindSubmatch(svg)
	ti := titleRE.FindSubmatch(svg)
	if h == nil || ti == nil {
		t.Fatalf("no svg header or title in %.300s", svg)
	}
	p := parsed{width: string(h[1]), height: string(h[2]), title: unescape(string(ti[1])), frames: map[string]drawn{}}
	for _, m := range frameRE.FindAllSubmatch(svg, -1) {
		d := drawn{unescape(string(m[1])), string(m[2]), string(m[3]), string(m[4]), string(m[5]), string(m[6]),
			string(m[7]), string(m[8]), string(m[9]), string(m[10]), unescape(string(m[11]))}
		key := d.fgx + "@" + d.y
		if _, dup := p.frames[key]; dup {
			t.Fatalf("two frames at sample %s, y %s", d.fgx, d.y)
		}
		p.frames[key] = d
	}
	return p
}

var unescaper = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&apos;", "'", "&#39;", "'", "&#34;", `"`, "&amp;", "&")

func unescape(s string) string { return unescaper.Replace(s) }

func readFile(path string) ([]byte, error) { return os.ReadFile(path) }
