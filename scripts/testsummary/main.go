// Command testsummary reads `go test -json` on stdin and prints what a
// plain `go test` prints (a line per package, the output of failing tests,
// build errors), then a short summary: how many tests passed, failed and
// were skipped, and why tests skipped, grouped by reason, so that whoever
// runs `make test` knows what was not run on this machine. It exits 1 when
// anything failed.
//
//	go test -json ./... | go run ./scripts/testsummary
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

func main() {
	s := newSummary()
	if err := s.read(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "testsummary: %v\n", err)
		os.Exit(1)
	}
	s.print(os.Stdout)
	if s.failed() {
		os.Exit(1)
	}
}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
}

type testID struct{ pkg, test string }

// summary gathers the run.
type summary struct {
	output  map[testID][]string // output of each running test
	passed  int
	failed_ []string
	skipped map[string][]string // reason → tests
	pkgFail int
	build   int
}

func newSummary() *summary {
	return &summary{output: map[testID][]string{}, skipped: map[string][]string{}}
}

func (s *summary) failed() bool { return len(s.failed_) > 0 || s.pkgFail > 0 || s.build > 0 }

// read consumes the events, echoing what plain `go test` shows. Lines that
// are not JSON (go's own messages) pass through.
func (s *summary) read(r io.Reader, w io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintln(w, string(line))
			continue
		}
		s.take(e, w)
	}
	return sc.Err()
}

func (s *summary) take(e event, w io.Writer) {
	id := testID{e.Package, e.Test}
	switch {
	case e.Action == "build-output":
		fmt.Fprint(w, e.Output)
	case e.Action == "build-fail":
		s.build++
	case e.Test == "":
		if e.Action == "output" && packageLine(e.Output) {
			fmt.Fprint(w, e.Output)
		}
		if e.Action == "fail" {
			s.pkgFail++
		}
	case e.Action == "output":
		s.output[id] = append(s.output[id], e.Output)
	case e.Action == "pass":
		s.passed++
		delete(s.output, id)
	case e.Action == "fail":
		s.failed_ = append(s.failed_, e.Package+" "+e.Test)
		for _, l := range s.output[id] {
			fmt.Fprint(w, l)
		}
		delete(s.output, id)
	case e.Action == "skip":
		reason := skipReason(s.output[id])
		delete(s.output, id)
		if strings.HasPrefix(reason, helperProcessSkip) {
			// The body of a test that re-runs the test binary as a child
			// process (a writer to kill, say): nothing was left unrun.
			return
		}
		s.skipped[reason] = append(s.skipped[reason], shortPackage(e.Package)+" "+e.Test)
	}
}

// helperProcessSkip begins the skip message of a test that is only the
// body of a child process another test starts; such skips are not listed.
const helperProcessSkip = "helper process:"

// packageLine reports whether a package-level output line is one plain
// `go test` prints: its result ("ok", "FAIL", "?") or a panic or build
// error outside any test.
func packageLine(l string) bool {
	return !strings.HasPrefix(l, "=== ") && !strings.HasPrefix(l, "PASS") && l != "FAIL\n" || strings.HasPrefix(l, "FAIL\t")
}

var location = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: `)

// skipReason is the message of t.Skip: the last output line before the
// "--- SKIP" line, without its file:line. A detail after " — " (which file
// a test needed, say) belongs to that test: tests are grouped by the text
// before it.
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "--- SKIP") || strings.HasPrefix(l, "=== ") {
			continue
		}
		reason, _, _ := strings.Cut(strings.TrimSpace(location.ReplaceAllString(lines[i], "")), " — ")
		return reason
	}
	return "(no reason given)"
}

func shortPackage(p string) string {
	return strings.TrimPrefix(p, "github.com/latscope/latscope/")
}

// print writes the summary: counts, failures, and the skips by reason.
func (s *summary) print(w io.Writer) {
	skipped := 0
	for _, tests := range s.skipped {
		skipped += len(tests)
	}
	fmt.Fprintf(w, "\nmake test: %d tests passed, %d failed, %d skipped", s.passed, len(s.failed_), skipped)
	if s.build > 0 {
		fmt.Fprintf(w, "; %d packages did not build", s.build)
	}
	fmt.Fprintln(w)
	for _, f := range s.failed_ {
		fmt.Fprintf(w, "  FAILED %s\n", f)
	}
	if skipped == 0 {
		return
	}
	fmt.Fprintln(w, "Skipped (not run on this machine), by reason:")
	reasons := make([]string, 0, len(s.skipped))
	for r := range s.skipped {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if len(s.skipped[reasons[i]]) != len(s.skipped[reasons[j]]) {
			return len(s.skipped[reasons[i]]) > len(s.skipped[reasons[j]])
		}
		return reasons[i] < reasons[j]
	})
	for _, r := range reasons {
		tests := s.skipped[r]
		shown := tests
		if len(shown) > 3 {
			shown = append(shown[:3:3], fmt.Sprintf("and %d more", len(tests)-3))
		}
		fmt.Fprintf(w, "  %d × %s\n      (%s)\n", len(tests), r, strings.Join(shown, ", "))
	}
}
