//go:build linux

package benchkit

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// childAttr puts a child in its own process group, so that a terminal's
// Ctrl-C reaches the harness alone (which then stops its children in
// order) and the group can be killed whole. Pdeathsig kills the child if
// the harness itself is killed outright (SIGKILL) and cannot clean up; it
// survives taskset's exec. (It follows the OS thread that started the
// child, and Go's runtime does not end idle threads.)
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// Listening reports whether a socket listens on TCP port, from
// /proc/net/tcp and tcp6: unlike a probe connection, it leaves no trace
// in the server's log or statistics.
func Listening(port int) bool {
	for _, path := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if ok, err := listeningIn(path, port); err == nil && ok {
			return true
		} else if err != nil && path == "/proc/net/tcp" {
			return dialListening(port)
		}
	}
	return false
}

// listeningIn scans one /proc/net/tcp file: "sl local_address rem_address
// st ..." with the local address as HEXADDR:HEXPORT and st 0A for LISTEN.
func listeningIn(path string, port int) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || fields[3] != "0A" {
			continue
		}
		_, hexPort, ok := strings.Cut(fields[1], ":")
		if p, err := strconv.ParseUint(hexPort, 16, 16); ok && err == nil && int(p) == port {
			return true, nil
		}
	}
	return false, sc.Err()
}
