package benchkit

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// FindLatscope returns the latscope binary to measure: bin when it exists;
// when it does not and it is the harness's default (the repository's
// bin/latscope, or "" for none), one built from the repository into
// scratch. A binary the user named must exist.
func FindLatscope(ctx context.Context, bin string, isDefault bool, repo, scratch string, stderr io.Writer) (string, error) {
	if _, err := os.Stat(bin); err == nil || !isDefault {
		if err != nil {
			return "", fmt.Errorf("-latscope %s: %w", bin, err)
		}
		return filepath.Abs(bin)
	}
	built := filepath.Join(scratch, "latscope")
	if bin != "" {
		fmt.Fprintf(stderr, "%s missing; ", bin)
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
