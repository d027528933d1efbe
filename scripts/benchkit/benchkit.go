// Package benchkit holds what latscope's benchmark harnesses
// (scripts/iobench, netbench, dbbench, flamebench) share: the command line
// and exit codes (Main), medians, ratios, checks and the comparison table,
// the machine facts docs/benchmarks.md quotes, running a measured child
// with its rusage and peak RSS, background servers that are always
// stopped, free loopback ports, data files and the JSON output.
package benchkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Median returns the median of vs (the mean of the middle two for an even
// count, 0 for none); vs is not reordered.
func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MedianOf returns the median of f over items.
func MedianOf[T any](items []T, f func(T) float64) float64 {
	vs := make([]float64, len(items))
	for i, it := range items {
		vs[i] = f(it)
	}
	return Median(vs)
}

// Ratio is a / b, NaN when b is 0 (a check on it then fails).
func Ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// JSONRatio is r for a JSON document: NaN (an undefined ratio), which
// encoding/json refuses, becomes 0.
func JSONRatio(r float64) float64 {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return 0
	}
	return r
}

// Within reports whether ratio r lies within ±tolerance of 1; a tiny slack
// absorbs float rounding on the edge, and NaN is never within.
func Within(r, tolerance float64) bool {
	const slack = 1e-9
	return !math.IsNaN(r) && math.Abs(r-1) <= tolerance+slack
}

// ParseInts reads a comma-separated list of integers from lo to hi
// ("64, 1024").
func ParseInts(s string, lo, hi int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < lo || n > hi {
			return nil, fmt.Errorf("%q is not a whole number from %d to %d", strings.TrimSpace(f), lo, hi)
		}
		out = append(out, n)
	}
	return out, nil
}

// RepoRoot is the nearest directory upwards from the working directory
// holding go.mod, else the working directory.
func RepoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// WriteJSON writes v, indented, to path, creating its directory.
func WriteJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// SaveJSON writes v to path as WriteJSON does and tells stdout where,
// after what the file holds ("raw runs and summary: bench-out/x.json").
func SaveJSON(stdout io.Writer, path, holding string, v any) error {
	if err := WriteJSON(path, v); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stdout, "%s: %s\n", holding, path)
	return err
}

// DecodeJSON reads into v the JSON object a tool printed, after whatever
// it printed first (see JSONStart).
func DecodeJSON(out []byte, v any) error {
	doc, err := JSONStart(out)
	if err != nil {
		return err
	}
	return json.Unmarshal(doc, v)
}

// JSONStart returns out from the first line that opens a JSON object:
// tools print warnings or progress before their report.
func JSONStart(out []byte) ([]byte, error) {
	for off := 0; off < len(out); {
		line := out[off:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i+1]
		}
		if t := bytes.TrimLeft(line, " \t"); len(t) > 0 && t[0] == '{' {
			return out[off:], nil
		}
		off += len(line)
	}
	return nil, errors.New("no JSON object")
}

// Tail returns the last n lines of b, trimmed.
func Tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// Indent puts s on its own indented lines under an error message; "" stays
// "".
func Indent(s string) string {
	if s == "" {
		return ""
	}
	return "\n    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// PassWord is the verdict word of a table.
func PassWord(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}
