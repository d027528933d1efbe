//go:build linux

package nettest

import (
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawTick is how long one blocking read or write may wait before the loop
// looks at its stop flag and deadline (SO_RCVTIMEO/SO_SNDTIMEO); it also
// bounds how long a garbage-collection pause can wait for a client's
// blocked round trip.
const rawTick = 100 * time.Millisecond

// syscallFunc is unix.RawSyscall6 or unix.Syscall6.
type syscallFunc func(trap, a1, a2, a3, a4, a5, a6 uintptr) (r1, r2 uintptr, err unix.Errno)

// The calls a blockingConn makes: recvfrom and sendto, as sockperf does,
// rather than read and write, which pass through the VFS layers
// (fdget_pos, vfs_read/vfs_write, rw_verify_area, sock_*_iter: 3.2 % of
// the server's CPU in its profile) before reaching the same socket code.
// MSG_NOSIGNAL: a peer gone makes the send fail with EPIPE, no SIGPIPE.
const (
	sysRecv = unix.SYS_RECVFROM
	sysSend = unix.SYS_SENDTO
)

// blockingConn does reads and writes as blocking system calls on a
// duplicate of the connection's socket. Through Go's netpoller each
// message costs a failed read, a park, an epoll wait and a second read
// (3.8 system calls per round trip against sockperf's 2, measured with
// strace), which put p50 8–10 % and p90 25–35 % above sockperf's on
// loopback; a blocking read wakes the thread directly.
type blockingConn struct {
	f   *os.File
	fd  uintptr
	sys syscallFunc
}

// newBlockingConn is the sync client's blockingConn: its calls keep the Go
// processor (unix.RawSyscall6), which is safe because each of its
// connections has its own (GOMAXPROCS ≥ connections + 1).
func newBlockingConn(c net.Conn) *blockingConn { return takeOver(c, unix.RawSyscall6) }

// takeOver moves c's socket out of Go's hands: it duplicates the
// descriptor in blocking mode and closes c, so that the netpoller stops
// watching the socket (while it does, every message wakes one of its
// threads for nothing: an epoll event per read and per write). On
// failure it returns nil and leaves c as it was.
func takeOver(c net.Conn, sys syscallFunc) *blockingConn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	fd, dupErr := -1, error(nil)
	if err := rc.Control(func(s uintptr) { fd, dupErr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil || dupErr != nil {
		return nil
	}
	// O_NONBLOCK belongs to the socket, not the descriptor: from here on
	// c must not be read or written, and it is closed at once.
	tv := unix.NsecToTimeval(int64(rawTick))
	if unix.SetNonblock(fd, false) != nil ||
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv) != nil ||
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv) != nil {
		_ = unix.SetNonblock(fd, true)
		unix.Close(fd)
		return nil
	}
	c.Close()
	return &blockingConn{f: os.NewFile(uintptr(fd), "nettest"), fd: uintptr(fd), sys: sys}
}

func (b *blockingConn) Close() error { return b.f.Close() }

// writeAll writes p, giving up when stop reports true or deadline passes.
func (b *blockingConn) writeAll(p []byte, stop func() bool, deadline time.Time) error {
	return b.loop(sysSend, p, stop, waitLimit{deadline: deadline})
}

// readFull fills p, giving up when stop reports true or deadline passes.
func (b *blockingConn) readFull(p []byte, stop func() bool, deadline time.Time) error {
	return b.loop(sysRecv, p, stop, waitLimit{deadline: deadline})
}

func (b *blockingConn) loop(trap uintptr, p []byte, stop func() bool, limit waitLimit) error {
	for done := 0; done < len(p); {
		n, err := b.once(trap, p[done:], stop, limit)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("connection closed by the server after %d of %d bytes", done, len(p))
		}
		done += n
	}
	return nil
}

// waitLimit bounds one blocking read or write: by an absolute deadline,
// or by a timeout counted from the start of the wait (zero: unbounded).
// The timeout's deadline is set when the first tick ends, as if the wait
// had begun rawTick earlier, so that a call that does not wait reads no
// clock: on this VM a clock read (time.Now) costs 70–300 ns, and three a
// message were 7 % of the server's CPU (perf).
type waitLimit struct {
	deadline time.Time
	timeout  time.Duration
}

// once does one read or write of p (not empty), waiting tick by tick
// until some bytes move, the peer closes (0), stop reports true
// (net.ErrClosed) or the limit passes (os.ErrDeadlineExceeded).
func (b *blockingConn) once(trap uintptr, p []byte, stop func() bool, limit waitLimit) (int, error) {
	for {
		var flags uintptr
		if trap == sysSend {
			flags = unix.MSG_NOSIGNAL
		}
		n, _, errno := b.sys(trap, b.fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), flags, 0, 0)
		switch {
		case errno == unix.EAGAIN || errno == unix.EINTR:
			if stop() {
				return 0, net.ErrClosed
			}
			if limit.deadline.IsZero() {
				if limit.timeout > 0 {
					limit.deadline = time.Now().Add(limit.timeout - rawTick)
				}
			} else if time.Now().After(limit.deadline) {
				return 0, os.ErrDeadlineExceeded
			}
		case errno != 0:
			return 0, errno
		default:
			return int(n), nil
		}
	}
}

// serverConn is a test's connection as the server's exchange loop uses
// it: reads and writes are blocking system calls, so that a request wakes
// the thread that answers it directly, with no netpoller, park or
// scheduler in between: two system calls per round trip, as sockperf's
// server (recvfrom, sendto), against 2.5 and the wake-ups of other
// threads through the netpoller (counted with strace -c). A
// goroutine blocked in a system call keeps its OS thread, so each test
// has one of its own; it is not locked to it (runtime.LockOSThread)
// because a locked goroutine's yield (see yieldEvery) hands the thread
// over through the scheduler: 10 µs of CPU and 35 µs of wall-clock time
// on this VM against 0.09 µs unlocked, long enough to delay the next
// request. The timeouts bound each wait for the peer, and stop reports
// that the server is stopping; both are seen within rawTick.
type serverConn struct {
	b                         *blockingConn
	stop                      func() bool
	readTimeout, writeTimeout time.Duration
	reads                     uint32 // counts reads to the next clock check
	lastYield                 time.Time
}

// yieldEvery is how often a test's loop passes through the scheduler.
// The runtime takes the Go processor from a goroutine that has not been
// scheduled for 10 ms, even one that only sits in system calls, and its
// monitor thread then wakes every 20 µs for a while (measured: about
// 5 000 wake-ups a second on the server's CPU during a test). A yield
// every 5 ms keeps the monitor at a few hundred. The clock is read every
// yieldCheckReads reads, not at each (see waitLimit for its cost).
const (
	yieldEvery      = 5 * time.Millisecond
	yieldCheckReads = 16
)

// blockingTestConn returns c's socket as a serverConn (c is closed), and
// the function that closes the socket; c itself when blocking calls are
// impossible.
func blockingTestConn(c net.Conn, stop func() bool) (testConn, func()) {
	// unix.Syscall6, not RawSyscall6: the runtime may hand the Go processor
	// of a blocked call to other goroutines, since the server cannot know
	// how many clients will come.
	b := takeOver(c, unix.Syscall6)
	if b == nil {
		return &deadlineConn{Conn: c}, func() {}
	}
	return &serverConn{b: b, stop: stop}, func() { b.Close() }
}

func (s *serverConn) Read(p []byte) (int, error) {
	if s.stop() { // a busy client would keep the loop from ever waiting
		return 0, net.ErrClosed
	}
	if len(p) == 0 {
		return 0, nil
	}
	if s.reads++; s.reads%yieldCheckReads == 0 {
		if now := time.Now(); now.Sub(s.lastYield) > yieldEvery {
			s.lastYield = now
			runtime.Gosched()
		}
	}
	n, err := s.b.once(sysRecv, p, s.stop, waitLimit{timeout: s.readTimeout})
	if err == nil && n == 0 {
		if s.stop() {
			return 0, net.ErrClosed
		}
		return 0, io.EOF
	}
	return n, err
}

func (s *serverConn) Write(p []byte) (int, error) {
	for done := 0; done < len(p); {
		n, err := s.b.once(sysSend, p[done:], s.stop, waitLimit{timeout: s.writeTimeout})
		if err != nil {
			return done, err
		}
		done += n
	}
	return len(p), nil
}

func (s *serverConn) SetReadTimeout(d time.Duration)  { s.readTimeout = d }
func (s *serverConn) SetWriteTimeout(d time.Duration) { s.writeTimeout = d }
