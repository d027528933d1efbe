package archive

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// LockName is the writer's lock file beside the database (the database
// file's name and ".lock" for an archive given as a file): a writer holds
// an exclusive flock on it while the archive is open, so that a second
// writer (another latscope serve, or record --archive) on the same data
// directory is refused instead of interleaving with the first. Readers do
// not take it. The kernel drops the lock when its holder dies, kill -9
// included, so a crash leaves no stale lock behind.
const LockName = DBName + ".lock"

// ErrLocked says another process writes the archive.
var ErrLocked = errors.New("another latscope process is writing this archive")

// lockWriter takes the writer's lock of the database file, or says who
// holds it.
func lockWriter(path, file string) (*os.File, error) {
	name := file + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("archive %s: lock file: %w", path, err)
	}
	if held, err := tryLock(f); err != nil || held {
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("archive %s: locking %s: %w", path, name, err)
		}
		holder := ""
		if b, rerr := os.ReadFile(name); rerr == nil && len(strings.TrimSpace(string(b))) > 0 {
			holder = " (pid " + strings.TrimSpace(string(b)) + ")"
		}
		return nil, fmt.Errorf("archive %s: %w%s: one writer at a time; stop it first (reading it, e.g. latscope report %s, works meanwhile)", path, ErrLocked, holder, path)
	}
	// The holder's pid, for the message above; best effort.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}
