package benchkit

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// FindLatscope returns the latscope binary to measure: bin, which must
// exist, when the user named one; else the repository's bin/latscope
// when useRepoBin and it exists; else one built from the repository into
// scratch.
func FindLatscope(ctx context.Context, bin string, useRepoBin bool, repo, scratch string, stderr io.Writer) (string, error) {
	if bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("-latscope %s: %w", bin, err)
		}
		return filepath.Abs(bin)
	}
	built := filepath.Join(scratch, "latscope")
	if useRepoBin {
		repoBin := filepath.Join(repo, "bin", "latscope")
		if _, err := os.Stat(repoBin); err == nil {
			return filepath.Abs(repoBin)
		}
		fmt.Fprintf(stderr, "%s missing; ", repoBin)
	}
	fmt.Fprintf(stderr, "building %s\n", built)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", built, "./cmd/latscope")
	cmd.Dir, cmd.Stdout, cmd.Stderr = repo, stderr, stderr
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building latscope: %w", err)
	}
	return built, nil
}
