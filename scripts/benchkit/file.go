package benchkit

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

// WriteFile creates the file path (emptying one already there), fills it
// through write, buffered, and syncs it to storage, so that what reads it
// next reads real data. A file left incomplete by an error is removed.
func WriteFile(path string, write func(io.Writer) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(path)
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	if err := write(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", path, err)
	}
	return f.Close()
}
