package benchkit

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// gnuTime is GNU time, through which children run to measure their peak
// RSS. The rusage wait4 returns cannot give it: Go starts children with
// vfork semantics (CLONE_VM) and Linux carries the parent's high-water RSS
// into the child at exec, so every child would show at least the harness's
// own peak. GNU time forks from a small process.
const gnuTime = "/usr/bin/time"

// WithPeakRSS returns argv run under GNU time writing the peak RSS (%M,
// KiB) to rssFile, or argv itself and "" when GNU time is not installed
// (the peak RSS then comes from the rusage and is a floor of the harness's).
func WithPeakRSS(argv []string, rssFile string) ([]string, string) {
	if !PeakRSSMeasured() {
		return argv, ""
	}
	return append([]string{gnuTime, "-f", "%M", "-o", rssFile}, argv...), rssFile
}

// PeakRSSMeasured says whether GNU time is there to measure peak RSS
// (make bench installs it).
func PeakRSSMeasured() bool {
	st, err := os.Stat(gnuTime)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// ReadPeakRSS reads the file WithPeakRSS named: the peak RSS in KiB on the
// last line (earlier lines are time's notes, e.g. "Command exited with
// non-zero status 1").
func ReadPeakRSS(rssFile string) (int64, error) {
	b, err := os.ReadFile(rssFile)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", gnuTime, err)
	}
	return ParsePeakRSS(b)
}

// ParsePeakRSS parses GNU time's -f %M output.
func ParsePeakRSS(b []byte) (int64, error) {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	kb, err := strconv.ParseInt(last, 10, 64)
	if err != nil || kb < 0 {
		return 0, fmt.Errorf("peak RSS %q: not a number of KiB", last)
	}
	return kb, nil
}
