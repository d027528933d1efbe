package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// checkDocExamples runs each "$ latscope ..." example of docs/name (want
// of them) from the repository root and checks that every line shown
// after it is in its output ("..." skips lines; a trailing "…" marks a
// line the page cuts).
func checkDocExamples(t *testing.T, name string, want int) {
	t.Helper()
	root := testenv.RepoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", name))
	if err != nil {
		t.Fatal(err)
	}
	examples := strings.Split(string(doc), "\n$ latscope ")[1:]
	if len(examples) != want {
		t.Fatalf("docs/%s has %d examples, want %d", name, len(examples), want)
	}
	for _, block := range examples {
		block, _, _ = strings.Cut(block, "\n```")
		lines := strings.Split(block, "\n")
		args := splitQuoted(lines[0])
		cmd := exec.Command(binary, args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("latscope %v: %v", args, err)
		}
		for _, l := range lines[1:] {
			if l == "..." {
				continue
			}
			l = strings.TrimSuffix(l, "…")
			if !strings.Contains(string(out), l) {
				t.Errorf("docs/%s shows %q, latscope %v prints no such line", name, l, args)
			}
		}
	}
}

// splitQuoted splits a shell command line on spaces, keeping '...' whole.
func splitQuoted(line string) []string {
	var args []string
	for i, part := range strings.Split(line, "'") {
		if i%2 == 1 {
			args = append(args, part)
		} else {
			args = append(args, strings.Fields(part)...)
		}
	}
	return args
}
