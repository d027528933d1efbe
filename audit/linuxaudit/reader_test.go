package linuxaudit

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// realFiles are the real audit logs: the repository's and, with the shared
// test data, the GPL ones that may not be copied into it.
func realFiles(t *testing.T) []string {
	t.Helper()
	files := testenv.DataFiles(t, "audit/linux-audit/*/*")
	if len(files) == 0 {
		t.Fatal("no real audit logs found")
	}
	return files
}

// readAll reads a file and returns its events and diagnostics.
func readAll(t testing.TB, path string) ([]Event, *input.Diagnostics) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return readBytes(t, path, data)
}

func readBytes(t testing.TB, name string, data []byte) ([]Event, *input.Diagnostics) {
	t.Helper()
	diag := input.NewDiagnostics(nil, 100)
	var events []Event
	err := Read(context.Background(), name, bytes.NewReader(data), diag, func(e Event) error {
		events = append(events, e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return events, diag
}

// recordStarts counts, independently of the parser, the lines holding a
// record start (grep -c 'msg=audit(') and the other non-blank lines.
func recordStarts(data []byte) (records, others int) {
	for line := range strings.SplitSeq(string(data), "\n") {
		switch {
		case strings.Contains(line, "msg=audit("):
			records++
		case strings.TrimSpace(line) != "":
			others++
		}
	}
	return records, others
}

func TestEveryRecordOfTheRealFiles(t *testing.T) {
	for _, rel := range realFiles(t) {
		t.Run(rel, func(t *testing.T) {
			path := testenv.DataFile(t, rel)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			events, diag := readBytes(t, path, data)
			wantRecords, wantSkipped := recordStarts(data)
			records := 0
			for _, e := range events {
				records += len(e.Records)
				for _, r := range e.Records {
					if r.Serial != e.Serial || r.Node != e.Node || !r.Time.Equal(e.Time) {
						t.Errorf("%s:%d: record of serial %d in event %d", path, r.Line, r.Serial, e.Serial)
					}
				}
			}
			if records != wantRecords || diag.Count(path) != wantSkipped {
				t.Errorf("read %d records and skipped %d lines; the file has %d record starts and %d other lines",
					records, diag.Count(path), wantRecords, wantSkipped)
			}
			if len(diag.Warnings()) > 0 {
				t.Errorf("warnings: %q", diag.Warnings())
			}
			t.Logf("%d records in %d events, %d lines skipped", records, len(events), diag.Count(path))
		})
	}
}

// event returns the event with this serial and first type.
func event(t *testing.T, events []Event, serial uint64, typ string) Event {
	t.Helper()
	for _, e := range events {
		if e.Serial == serial && e.Types[0] == typ {
			return e
		}
	}
	t.Fatalf("no %s event %d", typ, serial)
	return Event{}
}

func TestInterleavedOutOfOrderEvents(t *testing.T) {
	events, _ := readAll(t, testenv.DataFile(t, "audit/linux-audit/linux-audit-audit-userspace/test3.log"))
	if len(events) != 8 {
		t.Fatalf("%d events, want 8 (7 syscalls and ADD_GROUP)", len(events))
	}
	sshd := event(t, events, 194435, "SYSCALL")
	if !slices.Equal(sshd.Types, []string{"SYSCALL", "PROCTITLE"}) || sshd.Proctitle != "sshd: burn [priv]" ||
		sshd.Node != "auditdtest.a1959.org" || sshd.Comm != "sshd" || sshd.AUID != "1000" || sshd.Session != "1" {
		t.Errorf("event 194435: %+v", sshd)
	}
	group := event(t, events, 194894, "ADD_GROUP")
	if group.Acct != "frodo" || group.Terminal != "pts/0" || group.Exe != "/usr/sbin/useradd" || group.Result != "success" {
		t.Errorf("ADD_GROUP: %+v", group)
	}
}

func TestLongExecveArguments(t *testing.T) {
	events, _ := readAll(t, testenv.DataFile(t, "audit/linux-audit/linux-audit-audit-userspace/test4.log"))
	if len(events) != 2 {
		t.Fatalf("%d events, want 2", len(events))
	}
	ld, m4 := events[0], events[1]
	if len(ld.Command) != 48 || ld.Command[0] != "/bin/sh" || ld.Command[2] != "/usr/bin/ld" ||
		len(ld.Paths) != 3 || ld.Paths[0] != "/usr/bin/ld" || ld.Cwd != "/usr/src/RPM/BUILD/zlib-1.2.11-alt1" {
		t.Errorf("ld: %d args %q, paths %q, cwd %q", len(ld.Command), ld.Command, ld.Paths, ld.Cwd)
	}
	if len(m4.Command) != 216 || m4.Command[0] != "/usr/bin/m4" || !strings.HasPrefix(m4.Proctitle, "/usr/bin/m4 --nesting-limit=1024 --gnu") {
		t.Errorf("m4: %d args, proctitle %q", len(m4.Command), m4.Proctitle)
	}
}

func TestHexEncodedValues(t *testing.T) {
	events, diag := readAll(t, testenv.DataFile(t, "audit/linux-audit/elastic-go-libaudit/audit-rhel7.log"))
	if cwd := event(t, events, 1208725, "CWD").Cwd; cwd != "/tmp/a b c" {
		t.Errorf("CWD %q", cwd)
	}
	if cmd := event(t, events, 475, "USER_CMD").Cmd; cmd != "./metricbeat -c mb.dev.yml" {
		t.Errorf("USER_CMD %q", cmd)
	}
	if exe := event(t, events, 512226, "SYSCALL").Exe; exe != "/usr/bin/python2.7;58d1ccfb (deleted)" {
		t.Errorf("exe %q", exe)
	}
	jq := event(t, events, 1075898, "EXECVE")
	if len(jq.Command) != 3 || !strings.HasPrefix(jq.Command[2], "{\n        \"dev\": \"08:01\",") {
		t.Errorf("jq: %q", jq.Command)
	}
	syscall := event(t, events, 17, "SYSCALL") // hex-looking a1=41a15c is a syscall argument, not text
	if a1, _ := syscall.Records[0].Get("a1"); a1 != "41a15c" {
		t.Errorf("SYSCALL a1 = %q", a1)
	}
	if key := event(t, events, 1095517, "SYSCALL").Key; key != "kill_signals" {
		t.Errorf("key %q", key)
	}
	if p := diag.Problems(); len(p) != 1 || p[0].First[0].Line != 31 {
		t.Errorf("problems %+v, want line 31 (type=UNKNOWN[1329] msg=?)", p)
	}
}

func TestSudoAndSuInOneSession(t *testing.T) {
	events, _ := readAll(t, testenv.DataFile(t, "audit/linux-audit/elastic-beats/auditbeat_testdata_sudo.log"))
	if len(events) != 20 {
		t.Fatalf("%d events, want 20", len(events))
	}
	for _, e := range events {
		if e.Session != "15" || e.AUID != "1002" || (e.Addr != "127.0.0.1") != (e.Types[0] == "USER_CMD") {
			t.Errorf("%s %d: ses %q auid %q addr %q", e.Types[0], e.Serial, e.Session, e.AUID, e.Addr)
		}
	}
	if e := event(t, events, 429, "USER_CMD"); e.Cmd != "su" || e.Cwd != "/home/alice" || e.Terminal != "pts/1" {
		t.Errorf("USER_CMD: %+v", e)
	}
	if e := event(t, events, 457, "USER_AUTH"); e.Outcome() != "failed" || e.Acct != "alice" || e.Op != "PAM:authentication" {
		t.Errorf("failed USER_AUTH: %+v", e)
	}
}

func TestEnrichedFormatAndEOE(t *testing.T) {
	events, _ := readAll(t, testenv.DataFile(t, "audit/linux-audit/threathunters-io-laurel/record-service-start.txt"))
	if len(events) != 2 {
		t.Fatalf("%d events, want SERVICE_START and its syscall", len(events))
	}
	service := events[0]
	if service.Unit != "apt-daily" || service.AUID != Unset || len(service.Records[0].Enriched()) != 2 ||
		service.Records[0].Enriched()[0] != (Field{Key: "UID", Value: "root"}) {
		t.Errorf("SERVICE_START: %+v", service)
	}
	syscall := events[1]
	if !slices.Equal(syscall.Types, []string{"SYSCALL", "SOCKADDR", "UNKNOWN[1420]", "EOE"}) {
		t.Errorf("types %q", syscall.Types)
	}
	if got := syscall.Records[1].Enriched(); len(got) != 1 || got[0].Value != "{ fam=netlink nlnk-fam=16 nlnk-pid=0 }" {
		t.Errorf("SOCKADDR enriched %+v", got)
	}
	if e := syscall.Records[0].Enriched(); len(e) != 11 || e[1] != (Field{Key: "SYSCALL", Value: "sendto"}) {
		t.Errorf("SYSCALL enriched %+v", e)
	}

	events, _ = readAll(t, testenv.DataFile(t, "audit/linux-audit/threathunters-io-laurel/record-syscall-key.txt"))
	var keys []string
	for _, e := range events {
		keys = append(keys, e.Key)
		if !slices.Equal(e.Types, []string{"SYSCALL", "EOE"}) {
			t.Errorf("event %d: %q", e.Serial, e.Types)
		}
	}
	if !slices.Equal(keys, []string{"filter-this", "filter-this", "this-too"}) {
		t.Errorf("keys %q", keys)
	}
}

func TestNodePrefix(t *testing.T) {
	events, _ := readAll(t, testenv.DataFile(t, "audit/linux-audit/elastic-beats/filebeat_auditd_audit-cent7-node.log"))
	if len(events) != 10 {
		t.Fatalf("%d events", len(events))
	}
	for _, e := range events {
		if e.Node != "localhost.localdomain" {
			t.Errorf("event %d: node %q", e.Serial, e.Node)
		}
	}
	if e := event(t, events, 6, "SERVICE_START"); e.Unit != "auditd" || e.Comm != "systemd" || e.UID != "0" || e.AUID != Unset {
		t.Errorf("SERVICE_START: %+v", e)
	}
}
