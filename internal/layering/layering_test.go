// Package layering keeps latscope's import graph to the rules written in
// docs/architecture.md: the test reads the rules table from the document
// and the graph from `go list`, so neither can drift from the other.
package layering

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

const module = "github.com/latscope/latscope"

// rule is one row of the table: the packages it governs, what they may
// import of latscope's packages, and what they must never import.
type rule struct {
	line              int
	packages, allowed []string
	forbidden         []string
}

func TestImportsFollowTheArchitecture(t *testing.T) {
	root := testenv.RepoRoot(t)
	rules := readRules(t, filepath.Join(root, "docs", "architecture.md"))
	graph := importGraph(t, root)
	used := make([]bool, len(rules))
	for _, pkg := range sortedKeys(graph) {
		i := ruleFor(rules, pkg)
		if i < 0 {
			t.Errorf("%s: no row of the layering table in docs/architecture.md governs it: add one", pkg)
			continue
		}
		used[i] = true
		r := rules[i]
		for _, imp := range graph[pkg] {
			switch {
			case matchesAny(r.forbidden, imp):
				t.Errorf("%s imports %s, which docs/architecture.md (line %d) forbids", pkg, imp, r.line)
			case !matchesAny(r.allowed, imp):
				t.Errorf("%s imports %s, which docs/architecture.md (line %d) does not allow (allowed: %s)", pkg, imp, r.line, strings.Join(r.allowed, ", "))
			}
		}
	}
	for i, r := range rules {
		if !used[i] {
			t.Errorf("docs/architecture.md line %d: the row for %s governs no package (stale?)", r.line, strings.Join(r.packages, ", "))
		}
	}
}

// TestPatterns pins the meaning of the table's patterns.
func TestPatterns(t *testing.T) {
	for _, c := range []struct {
		pattern, pkg string
		want         bool
	}{
		{"source", "source", true}, {"source", "source/awr", false},
		{"source/*", "source/awr", true}, {"source/*", "source", false}, {"source/*", "sourcex/a", false},
		{"*", "anything/at/all", true}, {"internal/testkit/*", "internal/testkit/testenv", true},
	} {
		if got := match(c.pattern, c.pkg); got != c.want {
			t.Errorf("match(%q, %q) = %v", c.pattern, c.pkg, got)
		}
	}
}

// ruleFor returns the index of the first row governing pkg: rows are read
// in order, so specific rows stand above the globs that would also match.
func ruleFor(rules []rule, pkg string) int {
	for i, r := range rules {
		if matchesAny(r.packages, pkg) {
			return i
		}
	}
	return -1
}

func matchesAny(patterns []string, pkg string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return match(p, pkg) })
}

// match: "*" is any package, "a/*" any package below a, else exact.
func match(pattern, pkg string) bool {
	switch {
	case pattern == "*":
		return true
	case strings.HasSuffix(pattern, "/*"):
		return strings.HasPrefix(pkg, strings.TrimSuffix(pattern, "*"))
	}
	return pattern == pkg
}

var backticked = regexp.MustCompile("`([^`]+)`")

// readRules parses the table between <!-- layering:begin --> and
// <!-- layering:end -->: | packages | may import | never imports |, each
// cell a list of `patterns` ("nothing" for none).
func readRules(t *testing.T, path string) []rule {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rules []rule
	in := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "<!-- layering:begin -->":
			in = true
			continue
		case line == "<!-- layering:end -->":
			in = false
		}
		if !in || !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 3 {
			t.Fatalf("%s:%d: a layering row has 3 cells, this one %d", path, n, len(cells))
		}
		r := rule{line: n, packages: patterns(cells[0]), allowed: patterns(cells[1]), forbidden: patterns(cells[2])}
		if len(r.packages) == 0 {
			continue // the heading
		}
		rules = append(rules, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rules) < 10 {
		t.Fatalf("%s: found %d layering rows between the markers", path, len(rules))
	}
	return rules
}

func patterns(cell string) []string {
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

// importGraph returns every package of the module (relative to it) with
// the module's packages its non-test files import.
func importGraph(t *testing.T, root string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := relative(fields[0])
		graph[pkg] = nil
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, module+"/") {
				graph[pkg] = append(graph[pkg], relative(imp))
			}
		}
	}
	return graph
}

func relative(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, module), "/") }

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
