package terminal

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// TTY is the controlling terminal in raw mode: keys are read from it (the
// data may come on stdin) and its size lays out the screen.
type TTY struct {
	f     *os.File
	fd    int
	state *term.State
	once  sync.Once
	err   error
}

// ttyPath is the controlling terminal on Unix systems.
const ttyPath = "/dev/tty"

// OpenTTY opens the controlling terminal and puts it in raw mode (keys
// arrive one byte at a time, unechoed, Ctrl-C as byte 3). Call Restore when
// done.
func OpenTTY() (*TTY, error) {
	f, err := os.OpenFile(ttyPath, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the terminal for keys: %w", err)
	}
	t := &TTY{f: f}
	// SyscallConn, unlike Fd, keeps the file in non-blocking mode, so Close
	// and deadlines still interrupt a pending Read.
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("opening the terminal for keys: %w", err)
	}
	var rawErr error
	err = rc.Control(func(fd uintptr) {
		t.fd = int(fd)
		t.state, rawErr = term.MakeRaw(t.fd)
	})
	if err = errors.Join(err, rawErr); err != nil {
		f.Close()
		return nil, fmt.Errorf("putting the terminal in raw mode: %w", err)
	}
	return t, nil
}

// Read reads key bytes.
func (t *TTY) Read(p []byte) (int, error) { return t.f.Read(p) }

// SetReadDeadline makes a pending Read return at d.
func (t *TTY) SetReadDeadline(d time.Time) error { return t.f.SetReadDeadline(d) }

// Size returns the terminal's width and height in cells, 120×40 when it
// cannot tell.
func (t *TTY) Size() (w, h int) {
	w, h, err := term.GetSize(t.fd)
	if err != nil || w <= 0 || h <= 0 {
		return defaultWidth, defaultHeight
	}
	return w, h
}

// Restore leaves raw mode and closes the terminal; it is safe to call more
// than once.
func (t *TTY) Restore() error {
	t.once.Do(func() {
		t.err = errors.Join(term.Restore(t.fd, t.state), t.f.Close())
		if t.err != nil {
			t.err = fmt.Errorf("restoring the terminal: %w", t.err)
		}
	})
	return t.err
}
