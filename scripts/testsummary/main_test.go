package main

import (
	"strings"
	"testing"
)

// A SYNTHETIC `go test -json` stream with one pass, one failure, two skips
// for one reason (with per-test details) and one for another, and a line
// that is not JSON.
const stream = `{"Action":"run","Package":"m/a","Test":"TestOK"}
{"Action":"output","Package":"m/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"pass","Package":"m/a","Test":"TestOK"}
{"Action":"output","Package":"m/a","Test":"TestBad","Output":"    a_test.go:9: got 2, want 3\n"}
{"Action":"output","Package":"m/a","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"m/a","Test":"TestBad"}
{"Action":"output","Package":"m/a","Output":"FAIL\n"}
{"Action":"output","Package":"m/a","Output":"FAIL\tm/a\t0.01s\n"}
{"Action":"fail","Package":"m/a"}
{"Action":"output","Package":"m/b","Test":"TestX","Output":"    b_test.go:3: needs tmux — x.txt\n"}
{"Action":"output","Package":"m/b","Test":"TestX","Output":"--- SKIP: TestX (0.00s)\n"}
{"Action":"skip","Package":"m/b","Test":"TestX"}
{"Action":"output","Package":"m/b","Test":"TestY","Output":"    b_test.go:7: needs tmux — y.txt\n"}
{"Action":"skip","Package":"m/b","Test":"TestY"}
{"Action":"output","Package":"m/b","Test":"TestZ","Output":"    b_test.go:9: cannot run here: no Oracle\n"}
{"Action":"skip","Package":"m/b","Test":"TestZ"}
{"Action":"output","Package":"m/b","Test":"TestChild","Output":"    b_test.go:11: helper process: run by TestParent\n"}
{"Action":"skip","Package":"m/b","Test":"TestChild"}
{"Action":"output","Package":"m/b","Output":"ok  \tm/b\t0.02s\n"}
go: downloading example.com/x v1.0.0
`

func TestSummary(t *testing.T) {
	s := newSummary()
	var out strings.Builder
	if err := s.read(strings.NewReader(stream), &out); err != nil {
		t.Fatal(err)
	}
	s.print(&out)
	got := out.String()
	for _, want := range []string{
		"a_test.go:9: got 2, want 3", "FAIL\tm/a\t0.01s", "ok  \tm/b\t0.02s", "go: downloading",
		"make test: 1 tests passed, 1 failed, 3 skipped", "FAILED m/a TestBad",
		"2 × needs tmux\n      (m/b TestX, m/b TestY)", "1 × cannot run here: no Oracle",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "TestChild") {
		t.Errorf("a helper process's skip was listed:\n%s", got)
	}
	if strings.Contains(got, "=== RUN") {
		t.Errorf("a passing test's output was shown:\n%s", got)
	}
	if !s.failed() {
		t.Error("a failed test does not fail the run")
	}
}
