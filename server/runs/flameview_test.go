package runs

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
)

// foldedWriter is a fake latscope flame: the capture step writes folded
// stacks to its -o file (run 1's and run 2's differ), the drawing step a
// page.
const foldedWriter = `for a; do [ "$prev" = "-o" ] && out=$a; prev=$a; done
case $out in
*/1/flame.folded) printf 'main;work 3\nmain;idle 1\n' > "$out";;
*.folded) printf 'main;work 1\nmain;spin 5\n' > "$out";;
*.html) echo '<html>' > "$out";;
esac`

// TestFlameRouteDrawsARunAndTheDiffOfTwo draws a flame run's viewer from
// its folded stacks, and the differential of two runs: widths from the
// run, base counts from the other, served sandboxed and framable by this
// origin only.
func TestFlameRouteDrawsARunAndTheDiffOfTwo(t *testing.T) {
	s := startStreamServer(t, Options{}, foldedWriter)
	pid := `{"pid":` + strconv.Itoa(os.Getpid()) + `,"duration":"1s"}`
	base := start(t, s.e, "flame", json.RawMessage(pid))
	waitState(t, s.e, base.ID, Succeeded)
	next := start(t, s.e, "flame", json.RawMessage(pid))
	waitState(t, s.e, next.ID, Succeeded)

	status, h, page := s.fetch("/api/v1/runs/" + strconv.FormatInt(next.ID, 10) + "/flame?base=" + strconv.FormatInt(base.ID, 10))
	if status != http.StatusOK || h.Get("Content-Type") != "text/html; charset=utf-8" || h.Get("X-Frame-Options") != "SAMEORIGIN" ||
		!strings.HasPrefix(h.Get("Content-Security-Policy"), "sandbox allow-scripts;") || !strings.HasSuffix(h.Get("Content-Security-Policy"), "frame-ancestors 'self'") {
		t.Fatalf("diff: %d %v", status, h)
	}
	// Frames in pre-order: all (6, base 4), main (6, base 4), then its
	// children sorted by name: idle (0, base 1), spin (5, 0), work (1, 3).
	for _, want := range []string{`"diff":true`, `"names":["all","main","idle","spin","work"]`, `"t":[6,6,0,5,1]`, `"b":[4,4,1,0,3]`,
		`run ` + strconv.FormatInt(next.ID, 10) + ` against run ` + strconv.FormatInt(base.ID, 10)} {
		if !strings.Contains(page, want) {
			t.Errorf("the diff page lacks %s", want)
		}
	}
	if status, _, page := s.fetch("/api/v1/runs/" + strconv.FormatInt(base.ID, 10) + "/flame"); status != http.StatusOK || strings.Contains(page, `"diff":true`) || !strings.Contains(page, `"t":[4,4,1,3]`) {
		t.Errorf("one run: %d %.200s", status, page)
	}
	for path, want := range map[string]int{
		"/api/v1/runs/99/flame": http.StatusNotFound, "/api/v1/runs/1/flame?base=99": http.StatusNotFound,
		"/api/v1/runs/1/flame?base=-2": http.StatusBadRequest, "/api/v1/runs/x/flame": http.StatusBadRequest,
	} {
		if status, _, body := s.fetch(path); status != want {
			t.Errorf("%s: %d %s, want %d", path, status, body, want)
		}
	}
}

func (s *streamServer) fetch(path string) (int, http.Header, string) {
	s.t.Helper()
	req, _ := http.NewRequest("GET", s.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}
