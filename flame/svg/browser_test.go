package svg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// TestScriptInChromium opens a rendered SVG in headless Chromium with the
// URL parameters a bookmarked view carries (?s= search, ?x=&y= zoom) and
// checks the resulting DOM: the zoomed frame fills the width, its parents
// are faded, other frames hidden, matches recoloured and "Matched: 75.0%"
// (b: 5 + 10 of 20 samples; SYNTHETIC four-stack profile).
func TestScriptInChromium(t *testing.T) {
	p := readFolded(t, strings.NewReader("main;a;b 5\nmain;a;c 3\nmain;d 2\nother;b 10\n"))
	path := filepath.Join(t.TempDir(), "f.svg")
	if err := os.WriteFile(path, render(t, p, Options{}), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := testenv.RunChromium(t, "file://"+path+"?s=%5Eb%24&x=0&y=53", 60*time.Second, "--virtual-time-budget=3000", "--dump-dom")
	for _, want := range []string{
		`<text id="matched" x="1190" y="117.00">Matched: 75.0%</text>`,
		`<text id="unzoom" class="" x="10" y="24.00">Reset Zoom</text>`,
		`<g><title>a (8 samples, 40.00%)</title><rect x="0.0000%" y="53" width="100.0000%"`,
		`<g><title>b (5 samples, 25.00%)</title><rect x="0.0000%" y="37" width="62.5000%" height="15" fill="rgb(230,0,230)"`,
		`<g class="parent"><title>main (10 samples, 50.00%)</title><rect x="0.0000%" y="69" width="100.0000%"`,
		`<g class="hide"><title>d (2 samples`,
		`<g class="hide"><title>other (10 samples`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("DOM after zoom and search lacks %s", want)
		}
	}
}
