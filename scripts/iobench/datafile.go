package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/latscope/latscope/internal/bytesize"
	"github.com/latscope/latscope/scripts/benchkit"
)

// dataFile returns the file both tools read: -file (reused, or created and
// kept), else a new one in scratch, which the caller removes.
func dataFile(ctx context.Context, c config, scratch string, stderr io.Writer) (string, error) {
	path := filepath.Join(scratch, "data")
	if c.file != "" {
		path = c.file
		st, err := os.Stat(path)
		switch {
		case err == nil && !st.Mode().IsRegular():
			return "", fmt.Errorf("-file %s: not a regular file", path)
		case err == nil && st.Size() < c.size:
			return "", fmt.Errorf("-file %s: %d bytes, less than -size %d; remove it or lower -size", path, st.Size(), c.size)
		case err == nil:
			fmt.Fprintf(stderr, "iobench: reusing %s\n", path)
			return filepath.Abs(path)
		case !errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("-file: %w", err)
		}
	}
	if s := describeStorage(filepath.Dir(path)); s.InMemory {
		fmt.Fprintf(stderr, "iobench: WARNING: %s is on %s: %s\n", filepath.Dir(path), s.Filesystem, s.Note)
	}
	start := time.Now()
	fmt.Fprintf(stderr, "iobench: writing %s of random bytes to %s\n", bytesize.Format(c.size), path)
	if err := writeRandom(ctx, path, c.size); err != nil {
		return "", err
	}
	fmt.Fprintf(stderr, "iobench: written in %.1f s\n", time.Since(start).Seconds())
	return filepath.Abs(path)
}

// writeRandom fills a new file with size incompressible bytes and syncs
// it, so that neither a compressing layer nor a sparse file makes reads
// cheaper than real data would be.
func writeRandom(ctx context.Context, path string, size int64) error {
	return benchkit.WriteFile(path, func(w io.Writer) error {
		var seed [32]byte
		for i := range seed {
			seed[i] = byte(rand.Uint32())
		}
		rng := rand.NewChaCha8(seed)
		buf := make([]byte, 1<<20)
		for left := size; left > 0; left -= int64(len(buf)) {
			if err := ctx.Err(); err != nil {
				return err
			}
			chunk := buf[:min(int64(len(buf)), left)]
			_, _ = rng.Read(chunk) // ChaCha8.Read never fails
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
		return nil
	})
}
