package linuxaudit

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// The inputs below are synthetic: no real file shows these kinds of
// damage. Their records are real ones' shapes (audit-rhel7.log, sudo.log).
const (
	syscallRec = `type=SYSCALL msg=audit(1481077231.371:479): arch=c000003e syscall=59 success=yes exit=0 a0=1 a1=2 a2=3 a3=4 items=1 ppid=1 pid=2 auid=1000 uid=0 gid=0 euid=0 suid=0 fsuid=0 egid=0 sgid=0 fsgid=0 tty=pts0 ses=3 comm="srvctl" exe="/u01/app/19.0.0/grid/bin/srvctl" key="oracrs"`
	pathRec    = `type=PATH msg=audit(1481077231.371:479): item=0 name="/u01/app/19.0.0/grid/bin/srvctl" inode=1 dev=08:01 mode=0100755`
	userCmdRec = `type=USER_CMD msg=audit(1481077231.363:475): pid=1382 uid=1000 auid=1000 ses=3 msg='cwd="/home/oracle" cmd=2F7573722F62696E2F73797374656D63746C2073746F70206F7261636C65 terminal=pts/0 res=success'`
)

func lines(ls ...string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }

// problems returns the diagnostics as "line: reason" and the warnings.
func problems(diag *input.Diagnostics) (skipped, warnings []string) {
	for _, p := range diag.Problems() {
		for _, f := range p.First {
			skipped = append(skipped, f.String())
		}
	}
	return skipped, diag.Warnings()
}

func TestBrokenLinesAreReportedAndTheRestKept(t *testing.T) {
	huge := "type=EXECVE msg=audit(1481077231.371:479): argc=1 a0=\"" + strings.Repeat("x", DefaultMaxLineBytes) + "\""
	data := lines(
		"hello, this is not audit",
		syscallRec,
		"type=UNKNOWN[1329] msg=?",
		huge,
		"type=SYSCALL msg=audit(14810x7231.371:480): arch=c000003e",
		pathRec,
		"\xff\xfe type=garbage",
		userCmdRec,
	)
	events, diag := readBytes(t, "damaged.log", data)
	skipped, warnings := problems(diag)
	want := []string{
		"damaged.log:1: not an audit record: no type= at the start",
		"damaged.log:3: audit record without msg=audit(TIME:SERIAL)",
		"damaged.log:4: line longer than 65536 bytes skipped",
		"damaged.log:5: audit record with a damaged msg=audit(TIME:SERIAL)",
		"damaged.log:7: not an audit record: no type= at the start",
	}
	if !slices.Equal(skipped, want) || len(warnings) != 0 {
		t.Errorf("skipped %q, warnings %q", skipped, warnings)
	}
	if len(events) != 2 {
		t.Fatalf("%d events, want USER_CMD and the srvctl syscall", len(events))
	}
	cmd, srvctl := events[0], events[1]
	if cmd.Cmd != "/usr/bin/systemctl stop oracle" || cmd.Cwd != "/home/oracle" || cmd.Session != "3" {
		t.Errorf("USER_CMD %+v", cmd)
	}
	if !slices.Equal(srvctl.Types, []string{"SYSCALL", "PATH"}) || srvctl.Key != "oracrs" || srvctl.Line != 2 ||
		!slices.Equal(srvctl.Paths, []string{"/u01/app/19.0.0/grid/bin/srvctl"}) {
		t.Errorf("srvctl %+v", srvctl)
	}
}

func TestTruncatedRecordIsKeptWithAWarning(t *testing.T) {
	// A record cut inside a quoted value, as a crash leaves the last line.
	cut := syscallRec[:strings.Index(syscallRec, `exe="`)+10]
	events, diag := readBytes(t, "cut.log", lines(userCmdRec, cut))
	if len(events) != 2 || events[1].Exe != "/u01/" || events[1].Comm != "srvctl" {
		t.Fatalf("events %+v", events)
	}
	skipped, warnings := problems(diag)
	if len(skipped) != 0 || len(warnings) != 1 || !strings.HasPrefix(warnings[0], "cut.log:2: a quoted value runs to the end") {
		t.Errorf("skipped %q, warnings %q", skipped, warnings)
	}
}

func TestNonUTF8BytesAreKept(t *testing.T) {
	rec := strings.Replace(pathRec, `name="/u01/app/19.0.0/grid/bin/srvctl"`, "name=2F746D702FFF", 1)
	events, diag := readBytes(t, "bytes.log", lines(syscallRec, rec))
	if len(events) != 1 || !slices.Equal(events[0].Paths, []string{"/tmp/\xff"}) || diag.Count("bytes.log") != 0 {
		t.Errorf("events %+v", events)
	}
}

func TestUnknownTypesAreKept(t *testing.T) {
	events, _ := readBytes(t, "unknown.log", lines(
		syscallRec,
		"type=UNKNOWN[1420] msg=audit(1481077231.371:479): subj_apparmor=unconfined",
		"type=BRAND_NEW msg=audit(1481077232.000:481): pid=1 auid=1000 ses=3 msg='op=x res=success'",
		pathRec,
	))
	if len(events) != 2 || !slices.Equal(events[1].Types, []string{"SYSCALL", "UNKNOWN[1420]", "PATH"}) ||
		events[0].Types[0] != "BRAND_NEW" || events[0].Op != "x" {
		t.Errorf("events %+v", events)
	}
}

// TestEventsCompleteAsAusearchCompletes replays the cases checked with
// ausearch 3.0.9 by hand: interleaved serials join; a record 2 whole
// seconds later completes the earlier events (a later record of one of
// them starts a new event); time going backwards completes nothing;
// PROCTITLE, EOE and user-space records end their event.
func TestEventsCompleteAsAusearchCompletes(t *testing.T) {
	rec := func(typ, stamp, rest string) string { return "type=" + typ + " msg=audit(" + stamp + "): " + rest }
	for _, c := range []struct {
		name  string
		input []string
		want  []string // first type and serial of each event, as ausearch lists them
	}{
		{"interleaved", []string{
			rec("SYSCALL", "100.000:1", "pid=1"), rec("SYSCALL", "100.000:2", "pid=2"),
			rec("PATH", "100.000:1", "item=0"), rec("PATH", "100.000:2", "item=0"),
		}, []string{"SYSCALL 1 [SYSCALL PATH]", "SYSCALL 2 [SYSCALL PATH]"}},
		{"window", []string{
			rec("SYSCALL", "100.500:1", "pid=1"), rec("SYSCALL", "101.900:2", "pid=2"),
			rec("PATH", "100.500:1", "item=0"), rec("SYSCALL", "102.000:3", "pid=3"),
			rec("PATH", "100.500:1", "item=1"), rec("PATH", "101.900:2", "item=0"),
		}, []string{"SYSCALL 1 [SYSCALL PATH]", "PATH 1 [PATH]", "SYSCALL 2 [SYSCALL PATH]", "SYSCALL 3 [SYSCALL]"}},
		{"backwards", []string{
			rec("SYSCALL", "200.000:1", "pid=1"), rec("SYSCALL", "100.000:2", "pid=2"),
			rec("PATH", "200.000:1", "item=0"), rec("PATH", "100.000:2", "item=0"),
		}, []string{"SYSCALL 1 [SYSCALL PATH]", "SYSCALL 2 [SYSCALL PATH]"}},
		{"enders", []string{
			rec("USER_CMD", "100.000:5", "pid=1"), rec("SYSCALL", "100.000:5", "pid=1"),
			rec("PATH", "100.000:6", "item=0"), rec("SYSCALL", "100.000:6", "pid=1"),
			rec("PROCTITLE", "100.000:6", "proctitle=6C73"), rec("CWD", "100.000:6", `cwd="/"`),
			rec("LOGIN", "100.000:7", "pid=1"), rec("SYSCALL", "100.000:7", "pid=1"),
			rec("SYSCALL", "100.000:8", "pid=1"), rec("EOE", "100.000:8", ""), rec("PATH", "100.000:8", "item=0"),
		}, []string{"CWD 6 [CWD]", "LOGIN 7 [LOGIN]", "PATH 6 [PATH SYSCALL PROCTITLE]", "PATH 8 [PATH]",
			"SYSCALL 5 [SYSCALL]", "SYSCALL 7 [SYSCALL]", "SYSCALL 8 [SYSCALL EOE]", "USER_CMD 5 [USER_CMD]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			events, _ := readBytes(t, c.name, lines(c.input...))
			var got []string
			for _, e := range events {
				got = append(got, e.Types[0]+" "+itoa(e.Serial)+" ["+strings.Join(e.Types, " ")+"]")
			}
			slices.Sort(got)
			slices.Sort(c.want)
			if !slices.Equal(got, c.want) {
				t.Errorf("events %q, want %q", got, c.want)
			}
		})
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

func TestSplitExecveArguments(t *testing.T) {
	// The kernel writes an argument longer than its record budget in
	// pieces, a1_len= then a1[0], a1[1]..., over several EXECVE records.
	events, diag := readBytes(t, "split.log", lines(
		syscallRec,
		`type=EXECVE msg=audit(1481077231.371:479): argc=3 a0="srvctl" a1_len=26 a1[0]=73746F70`,
		`type=EXECVE msg=audit(1481077231.371:479): a1[1]=2064617461 a1[2]=62617365`,
		`type=EXECVE msg=audit(1481077231.371:479): a2="-d"`,
	))
	if len(events) != 1 || !slices.Equal(events[0].Command, []string{"srvctl", "stop database", "-d"}) || diag.Count("split.log") != 0 {
		t.Errorf("command %q", events[0].Command)
	}
	events, diag = readBytes(t, "missing.log", lines(syscallRec, `type=EXECVE msg=audit(1481077231.371:479): argc=3 a0="srvctl" a1="stop"`))
	if _, w := problems(diag); len(events) != 1 || !slices.Equal(events[0].Command, []string{"srvctl", "stop"}) ||
		!slices.Equal(w, []string{"missing.log:2: EXECVE has 2 arguments, argc=3"}) {
		t.Errorf("command %q, warnings %q", events[0].Command, w)
	}
}

func TestBoundedOpenEvents(t *testing.T) {
	var in []string
	for i := range 10 {
		in = append(in, strings.Replace(syscallRec, ":479)", ":"+strconv.Itoa(1000+i)+")", 1))
	}
	diag := input.NewDiagnostics(nil, 10)
	n := 0
	err := Reader{MaxOpen: 3}.Read(context.Background(), "many.log", bytes.NewReader(lines(in...)), diag, func(e Event) error {
		if want := uint64(1000 + n); e.Serial != want {
			t.Errorf("event %d handed on as #%d", e.Serial, n)
		}
		n++
		return nil
	})
	if err != nil || n != 10 || len(diag.Warnings()) != 1 || !strings.Contains(diag.Warnings()[0], "more than 3 events open") {
		t.Errorf("err %v, %d events, warnings %q", err, n, diag.Warnings())
	}

	diag = input.NewDiagnostics(nil, 10)
	var parts [][]string
	err = Reader{MaxEventBytes: 600}.Read(context.Background(), "big.log", bytes.NewReader(lines(syscallRec, pathRec, pathRec, pathRec, pathRec)), diag, func(e Event) error {
		parts = append(parts, e.Types)
		return nil
	})
	if err != nil || !slices.Equal(slices.Concat(parts...), []string{"SYSCALL", "PATH", "PATH", "PATH", "PATH"}) || len(parts) != 2 || len(diag.Warnings()) != 1 {
		t.Errorf("err %v, parts %q, warnings %q", err, parts, diag.Warnings())
	}
}

func TestGzipCancelAndCallbackErrors(t *testing.T) {
	raw, err := os.ReadFile(testenv.DataFile(t, "audit/linux-audit/elastic-beats/auditbeat_testdata_sudo.log"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw)
	zw.Close()
	events, _ := readBytes(t, "sudo.log.gz", gz.Bytes())
	if len(events) != 20 {
		t.Errorf("%d events from gzip, want 20", len(events))
	}

	stop := errors.New("stop")
	if err := Read(context.Background(), "x", bytes.NewReader(raw), nil, func(Event) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("callback error: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Read(ctx, "x", bytes.NewReader(raw), nil, func(Event) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestDetect(t *testing.T) {
	for _, rel := range realFiles(t) {
		data, err := os.ReadFile(testenv.DataFile(t, rel))
		if err != nil {
			t.Fatal(err)
		}
		if v := Detect(data[:min(len(data), input.DetectLimit)]); v != input.Yes {
			t.Errorf("%s: %v", rel, v)
		}
	}
	for _, c := range []struct {
		prefix string
		want   input.Verdict
	}{
		{"", input.NeedMore},
		{"type=SYSCALL msg=audit(1.2:3", input.NeedMore},
		{"type=UNKNOWN[1329] msg=?\n" + syscallRec + "\n", input.Yes},
		{"Mar 27 13:06:56 ip-10-77-20-248 sshd[1291]: Accepted publickey for ubuntu\n", input.No},
		{"ACTION :[7] 'STARTUP'\n", input.No},
		{"node=x\n", input.No},
	} {
		if got := Detect([]byte(c.prefix)); got != c.want {
			t.Errorf("Detect(%q) = %v, want %v", c.prefix, got, c.want)
		}
	}
}

func TestSeveralKeysAndUnsetIds(t *testing.T) {
	// Several rule keys are written hex-encoded, 0x01 between them; older
	// kernels write an unset id as -1.
	rec := strings.Replace(syscallRec, `key="oracrs"`, "key=6F7261637273016F7261636D64", 1)
	rec = strings.Replace(rec, "auid=1000", "auid=-1", 1)
	events, _ := readBytes(t, "keys.log", lines(rec))
	if len(events) != 1 || events[0].Key != "oracrs,oracmd" || events[0].AUID != Unset || events[0].UID != "0" {
		t.Errorf("events %+v", events)
	}
	if f := events[0].Records[0].Fields(); f[len(f)-1] != (Field{Key: "key", Value: "oracrs\x01oracmd", Encoded: true}) {
		t.Errorf("key field %+v", f[len(f)-1])
	}
}
