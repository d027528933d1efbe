package browsertest

import (
	"image"
	"image/color"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAuditFindsProblems checks the audit on a page with one unnamed
// input, one pale text and one good control: exactly the two problems.
func TestAuditFindsProblems(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!DOCTYPE html><html lang="en"><head><link rel="icon" href="data:,"></head><body>
<p style="color:#bbb;background:#fff">pale text</p>
<input id="nameless">
<label for="named">Name</label><input id="named">
<button>Go</button></body></html>`))
	}))
	defer srv.Close()
	b := New(t)
	b.Navigate(srv.URL)
	got := Eval[[]string](b, auditScript)
	if len(got) != 2 || !strings.Contains(got[0], "input#nameless") || !strings.Contains(got[1], "pale text") {
		t.Errorf("audit = %q; want the nameless input and the pale text", got)
	}
}

func TestBlankScreenshotsAreCaught(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 200, 100))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	if err := checkPixels(img); err == nil {
		t.Error("a white image passed")
	}
	for x := range 200 {
		for y := 40; y < 60; y++ {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y * 3), 90, 255})
		}
	}
	if err := checkPixels(img); err != nil {
		t.Errorf("a drawn image: %v", err)
	}
}
