package linuxaudit

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// Synthetic records in the shapes of testdata/audit/correlate-synthetic.
const wantLog = `type=USER_LOGIN msg=audit(1795168801.201:1004): pid=5001 uid=0 auid=1001 ses=42 msg='op=login id=1001 exe="/usr/sbin/sshd" hostname=203.0.113.7 addr=203.0.113.7 terminal=/dev/pts/1 res=success'
type=SYSCALL msg=audit(1795168920.401:1020): arch=c000003e syscall=59 success=yes exit=0 ppid=5150 pid=5200 auid=1001 uid=1100 tty=pts1 ses=42 comm="sqlplus" exe="/u01/app/oracle/product/19.0.0/dbhome_1/bin/sqlplus" key="oracmd"
type=EXECVE msg=audit(1795168920.401:1020): argc=4 a0="sqlplus" a1="/" a2="as" a3="sysdba"
type=PROCTITLE msg=audit(1795168920.401:1020): proctitle=73716C706C7573
type=SYSCALL msg=audit(1795168921.000:1021): arch=c000003e syscall=257 success=yes exit=3 pid=700 auid=4294967295 ses=4294967295 comm="sssd_nss" key="identity"
type=PATH msg=audit(1795168921.000:1021): item=0 name="/etc/passwd" "unterminated
type=PROCTITLE msg=audit(1795168921.000:1021): proctitle=737373
`

// TestWantDropsEventsUnparsed: with Want, only the events with a wanted
// record type are handed on; the rest are counted, and not tokenized
// (the damaged PATH record of the dropped event is not warned about).
func TestWantDropsEventsUnparsed(t *testing.T) {
	var got []string
	dropped := 0
	diag := input.NewDiagnostics(nil, 0)
	rd := Reader{Want: func(typ []byte) bool { return string(typ) == "EXECVE" || string(typ) == "USER_LOGIN" }, Dropped: &dropped}
	err := rd.Read(context.Background(), "want.log", strings.NewReader(wantLog), diag, func(e Event) error {
		got = append(got, strings.Join(e.Types, ","))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "USER_LOGIN SYSCALL,EXECVE,PROCTITLE" || dropped != 1 {
		t.Errorf("events %q, %d dropped", got, dropped)
	}
	if w := diag.Warnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
}

// TestFlushIdleHandsOnTheLastEvent: a followed log whose last event is a
// syscall still open (no PROCTITLE, no later record) hands it on once the
// file has been idle for FlushIdle, while the reader goes on waiting.
func TestFlushIdleHandsOnTheLastEvent(t *testing.T) {
	p := filepath.Join(t.TempDir(), "audit.log")
	lines := strings.Split(wantLog, "\n")
	os.WriteFile(p, []byte(strings.Join(lines[:3], "\n")+"\n"), 0o644)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	fl := input.Follow(ctx, p, f, 20*time.Millisecond)
	defer fl.Close()
	events := make(chan Event, 4)
	done := make(chan error, 1)
	go func() {
		done <- Reader{FlushIdle: 100 * time.Millisecond}.Read(ctx, p, fl, nil, func(e Event) error {
			events <- e
			return nil
		})
	}()
	for _, want := range []string{"USER_LOGIN", "SYSCALL,EXECVE"} {
		select {
		case e := <-events:
			if got := strings.Join(e.Types, ","); got != want {
				t.Fatalf("event %s, want %s", got, want)
			}
		case <-ctx.Done():
			t.Fatalf("no %s event handed on", want)
		}
	}
	select {
	case err := <-done:
		t.Fatalf("reader ended: %v", err)
	default:
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("after cancel: %v", err)
	}
}

// TestFieldsOnlySameFields: read FieldsOnly, every real file's events have
// the same fields as read whole, without their Records.
func TestFieldsOnlySameFields(t *testing.T) {
	files := testenv.DataFiles(t, "audit/linux-audit/*/*")
	files = append(files, "") // and the synthetic log above
	for _, rel := range files {
		read := func(fieldsOnly bool) []Event {
			var r io.Reader = strings.NewReader(wantLog)
			if rel != "" {
				f, err := os.Open(testenv.DataFile(t, rel))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				r = f
			}
			var out []Event
			err := Reader{FieldsOnly: fieldsOnly}.Read(context.Background(), rel, r, nil, func(e Event) error {
				e.Records = nil
				out = append(out, e)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		whole, only := read(false), read(true)
		if len(whole) == 0 {
			t.Errorf("%s: no events", rel)
		}
		if !reflect.DeepEqual(whole, only) {
			t.Errorf("%s: FieldsOnly events differ", rel)
		}
	}
}

// TestSkipLeavesThoseFieldsEmpty: records of a skipped type are not
// tokenized (the damaged PATH record is not warned about); the other
// fields are as read whole.
func TestSkipLeavesThoseFieldsEmpty(t *testing.T) {
	diag := input.NewDiagnostics(nil, 0)
	var got []Event
	rd := Reader{Skip: func(typ []byte) bool { return string(typ) == "PATH" || string(typ) == "PROCTITLE" }}
	if err := rd.Read(context.Background(), "skip.log", strings.NewReader(wantLog), diag, func(e Event) error {
		got = append(got, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[1].Proctitle != "" || got[2].Paths != nil || got[1].Comm != "sqlplus" ||
		strings.Join(got[1].Command, " ") != "sqlplus / as sysdba" || got[2].Key != "identity" {
		t.Errorf("events %+v", got)
	}
	if w := diag.Warnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
}
