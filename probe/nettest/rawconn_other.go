//go:build !linux

package nettest

import (
	"net"
	"time"
)

// blockingConn is Linux-only; elsewhere the sync client uses net.Conn.
type blockingConn struct{}

func newBlockingConn(net.Conn) *blockingConn { return nil }

func (*blockingConn) Close() error { return nil }

func (*blockingConn) writeAll([]byte, func() bool, time.Time) error { return nil }

func (*blockingConn) readFull([]byte, func() bool, time.Time) error { return nil }

// blockingTestConn is Linux-only: elsewhere the server's tests go
// through Go's netpoller.
func blockingTestConn(c net.Conn, _ func() bool) (testConn, func()) {
	return &deadlineConn{Conn: c}, func() {}
}
