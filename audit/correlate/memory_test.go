package correlate

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
)

// writeSessions writes n ssh sessions' audit records (real record shapes,
// as scripts/auditgen's), one starting every 2 s, each with a login, three
// commands and a logout within a minute, and a few sessions that never
// close.
func writeSessions(w io.Writer, n int) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	serial := 0
	rec := func(at time.Time, typ, body string) {
		serial++
		fmt.Fprintf(w, "type=%s msg=audit(%d.%03d:%d): %s\n", typ, at.Unix(), at.Nanosecond()/1e6, serial, body)
	}
	for i := range n {
		at := t0.Add(time.Duration(i) * 2 * time.Second)
		ses, pid := 100+i, 10000+i*10
		if i%1000 == 0 {
			ses = 1 + i/1000 // never closed: held for good, a few events each
		}
		rec(at, "USER_LOGIN", fmt.Sprintf(`pid=%d uid=0 auid=1001 ses=%d msg='op=login id=1001 exe="/usr/sbin/sshd" hostname=203.0.113.7 addr=203.0.113.7 terminal=/dev/pts/%d res=success'`, pid, ses, i%64))
		for c := range 3 {
			at := at.Add(time.Duration(10+c*10) * time.Second)
			serial++
			st := fmt.Sprintf("msg=audit(%d.000:%d):", at.Unix(), serial)
			fmt.Fprintf(w, `type=SYSCALL %s arch=c000003e syscall=59 success=yes exit=0 ppid=%d pid=%d auid=1001 uid=1001 euid=1001 tty=pts%d ses=%d comm="ls" exe="/usr/bin/ls" key="exec"`+"\n", st, pid, pid+1+c, i%64, ses)
			fmt.Fprintf(w, `type=EXECVE %s argc=2 a0="ls" a1="-l"`+"\n", st)
			fmt.Fprintf(w, `type=PROCTITLE %s proctitle=6C73002D6C`+"\n", st)
		}
		if ses >= 100 {
			rec(at.Add(50*time.Second), "USER_LOGOUT", fmt.Sprintf(`pid=%d uid=0 auid=1001 ses=%d msg='op=login id=1001 exe="/usr/sbin/sshd" hostname=203.0.113.7 addr=203.0.113.7 terminal=/dev/pts/%d res=success'`, pid, ses, i%64))
		}
	}
}

// TestMemoryBoundedBySessions: reading 3 times as many sessions keeps
// about as many audit events at once (the horizon's and the open
// sessions'), far fewer than the file's.
func TestMemoryBoundedBySessions(t *testing.T) {
	peak := func(n int) (int, int) {
		pr, pw := io.Pipe()
		go func() { writeSessions(pw, n); pw.Close() }()
		m := newModel(Options{MaxAge: 2 * time.Minute, WatchWindow: time.Minute})
		sum, err := m.add(context.Background(), "gen.log", pr, input.NewDiagnostics(nil, 0), true)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d sessions: %d events read, %d kept, %d pruned, peak %d held, %d sessions tracked at the end",
			n, sum.Read, sum.Kept, m.Pruned, m.Peak, len(m.sessions))
		return m.Peak, sum.Kept
	}
	small, _ := peak(20000)
	big, kept := peak(60000)
	if big > small+small/5 || big > kept/8 {
		t.Errorf("peak %d events held for 60000 sessions (%d kept), %d for 20000: not bounded", big, kept, small)
	}
}
