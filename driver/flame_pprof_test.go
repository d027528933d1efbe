package driver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/latscope/latscope/flame/load"
)

// TestCollapseFormatPprof: --format pprof writes a profile to a pipe and
// refuses a terminal, where the binary would garble it.
func TestCollapseFormatPprof(t *testing.T) {
	in := filepath.Join(t.TempDir(), "cpu.folded")
	if err := os.WriteFile(in, []byte("main;parse;read_[k] 3\nmain;render 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tty := range []bool{false, true} {
		var stdout, stderr bytes.Buffer
		err := Collapse(context.Background(), FlameConfig{
			Input: load.Input{Files: []string{in}}, Format: "pprof",
			Stdout: &stdout, Stderr: &stderr, StdoutTTY: tty,
		})
		if tty {
			if err == nil || !strings.Contains(err.Error(), "binary") || stdout.Len() != 0 {
				t.Errorf("terminal: error %v, %d bytes written", err, stdout.Len())
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(&stdout)
		if err != nil {
			t.Fatalf("stdout is not a pprof profile: %v", err)
		}
		if len(p.Sample) != 2 || len(p.Function) != 4 {
			t.Errorf("%d samples and %d functions, want 2 and 4", len(p.Sample), len(p.Function))
		}
	}
}
