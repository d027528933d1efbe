//go:build linux

package nettest

import (
	"fmt"
	"net"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawTick is how long one blocking read or write may wait before the loop
// looks at its stop flag and deadline (SO_RCVTIMEO/SO_SNDTIMEO); it also
// bounds how long a garbage-collection pause can wait for a blocked
// round trip.
const rawTick = 100 * time.Millisecond

// blockingConn does a sync client's reads and writes as raw blocking
// system calls on a duplicate of the connection's socket. Through Go's
// netpoller each reply costs a failed read, a park, an epoll wait and a
// second read (3.8 system calls per round trip against sockperf's 2,
// measured with strace), which put p50 8–10 % and p90 25–35 % above
// sockperf's on loopback; a blocking read wakes the thread directly.
// It is safe because every connection has its own Go processor
// (GOMAXPROCS ≥ connections + 1): a blocked call holds only its own.
type blockingConn struct {
	f  *os.File
	fd uintptr
}

// newBlockingConn duplicates c's socket in blocking mode; nil when that
// is impossible (the caller then uses c).
func newBlockingConn(c net.Conn) *blockingConn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	f, err := tc.File()
	if err != nil {
		return nil
	}
	fd := int(f.Fd())
	tv := unix.NsecToTimeval(int64(rawTick))
	if unix.SetNonblock(fd, false) != nil ||
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv) != nil ||
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv) != nil {
		f.Close()
		return nil
	}
	return &blockingConn{f: f, fd: uintptr(fd)}
}

func (b *blockingConn) Close() error { return b.f.Close() }

// writeAll writes p, giving up when stop reports true or deadline passes.
func (b *blockingConn) writeAll(p []byte, stop func() bool, deadline time.Time) error {
	return b.loop(unix.SYS_WRITE, p, stop, deadline)
}

// readFull fills p, giving up when stop reports true or deadline passes.
func (b *blockingConn) readFull(p []byte, stop func() bool, deadline time.Time) error {
	return b.loop(unix.SYS_READ, p, stop, deadline)
}

func (b *blockingConn) loop(trap uintptr, p []byte, stop func() bool, deadline time.Time) error {
	for done := 0; done < len(p); {
		n, _, errno := unix.RawSyscall(trap, b.fd, uintptr(unsafe.Pointer(&p[done])), uintptr(len(p)-done))
		switch {
		case errno == unix.EAGAIN || errno == unix.EINTR:
			if stop() {
				return net.ErrClosed
			}
			if time.Now().After(deadline) {
				return os.ErrDeadlineExceeded
			}
		case errno != 0:
			return errno
		case n == 0:
			return fmt.Errorf("connection closed by the server after %d of %d bytes", done, len(p))
		default:
			done += int(n)
		}
	}
	return nil
}
