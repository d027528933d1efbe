//go:build ignore

// gen writes journal.export and journal.json: a SYNTHETIC journal of an
// ssh login, sudo and su, in `journalctl -o export` and `-o json` form,
// with the field names of systemd.journal-fields(7) and the export format
// of systemd's "Journal Export Formats" (a field whose data is not plain
// text as KEY, newline, 64-bit little-endian length, data, newline). No
// machine at hand had a journal with sshd or sudo entries.
//
//	go run gen.go
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"unicode/utf8"
)

type entry struct {
	comm, ident, exe string
	pid, uid         int
	session, loginID string // _AUDIT_SESSION, _AUDIT_LOGINUID ("" for none)
	message          string
}

const (
	host   = "dbhost1"
	bootID = "6f1b5e2d0c3a4b7f9e8d7c6b5a493827"
	start  = int64(1700000000000000) // 2023-11-14T22:13:20Z, µs
)

var entries = []entry{
	{"sshd", "sshd", "/usr/sbin/sshd", 4101, 0, "", "", "Failed password for oracle from 192.0.2.77 port 40112 ssh2"},
	{"sshd", "sshd", "/usr/sbin/sshd", 4120, 0, "", "", "Accepted publickey for oracle from 192.0.2.10 port 50522 ssh2: ED25519 SHA256:q3T9xW1bZcS0aB6nR2hL8kJ4vM7yE5uF1gD0iP3oQ2w"},
	{"sshd", "sshd", "/usr/sbin/sshd", 4120, 0, "7", "1001", "pam_unix(sshd:session): session opened for user oracle(uid=1001) by (uid=0)"},
	{"systemd-logind", "systemd-logind", "/usr/lib/systemd/systemd-logind", 812, 0, "", "", "New session 7 of user oracle."},
	{"sudo", "sudo", "/usr/bin/sudo", 4188, 1001, "7", "1001", "  oracle : TTY=pts/0 ; PWD=/home/oracle ; USER=root ; COMMAND=/usr/bin/systemctl stop oracle-db"},
	{"sudo", "sudo", "/usr/bin/sudo", 4188, 0, "7", "1001", "pam_unix(sudo:session): session opened for user root(uid=0) by oracle(uid=1001)"},
	{"su", "su", "/usr/bin/su", 4230, 0, "7", "1001", "(to grid) oracle on pts/0"},
	{"su", "su", "/usr/bin/su", 4230, 0, "7", "1001", "pam_unix(su-l:session): session opened for user grid(uid=1002) by oracle(uid=1001)"},
	// A message with a byte that is not UTF-8 (a user name typed in
	// Latin-1): the export writes it as a binary field, JSON as an array.
	{"sshd", "sshd", "/usr/sbin/sshd", 4301, 0, "", "", "Invalid user j\xe9r\xf4me from 192.0.2.99 port 51000"},
	{"sshd", "sshd", "/usr/sbin/sshd", 4120, 0, "7", "1001", "pam_unix(sshd:session): session closed for user oracle"},
	{"systemd-logind", "systemd-logind", "/usr/lib/systemd/systemd-logind", 812, 0, "", "", "Removed session 7."},
}

type field struct{ key, value string }

func fields(i int, e entry) []field {
	us := start + int64(i)*1500000
	f := []field{
		{"__CURSOR", fmt.Sprintf("s=0c5e8a1b2d3f4e5a6b7c8d9e0f1a2b3c;i=%x;b=%s;m=%x;t=%x;x=%x", 0x1a40+i, bootID, 9000000+i, us, 0xabc0+i)},
		{"__REALTIME_TIMESTAMP", strconv.FormatInt(us, 10)},
		{"__MONOTONIC_TIMESTAMP", strconv.Itoa(9000000 + i*1500000)},
		{"_BOOT_ID", bootID},
		{"_TRANSPORT", "syslog"},
		{"PRIORITY", "6"},
		{"SYSLOG_FACILITY", "10"},
		{"SYSLOG_IDENTIFIER", e.ident},
		{"SYSLOG_PID", strconv.Itoa(e.pid)},
		{"_PID", strconv.Itoa(e.pid)},
		{"_UID", strconv.Itoa(e.uid)},
		{"_GID", strconv.Itoa(e.uid)},
		{"_COMM", e.comm},
		{"_EXE", e.exe},
		{"_HOSTNAME", host},
	}
	if e.session != "" {
		f = append(f, field{"_AUDIT_SESSION", e.session}, field{"_AUDIT_LOGINUID", e.loginID})
	}
	return append(f, field{"MESSAGE", e.message})
}

func main() {
	var export, js bytes.Buffer
	for i, e := range entries {
		obj := map[string]any{}
		for _, f := range fields(i, e) {
			if utf8.ValidString(f.value) {
				fmt.Fprintf(&export, "%s=%s\n", f.key, f.value)
				obj[f.key] = f.value
				continue
			}
			var size [8]byte
			binary.LittleEndian.PutUint64(size[:], uint64(len(f.value)))
			export.WriteString(f.key + "\n")
			export.Write(size[:])
			export.WriteString(f.value + "\n")
			nums := make([]int, len(f.value))
			for j := range len(f.value) {
				nums[j] = int(f.value[j])
			}
			obj[f.key] = nums
		}
		export.WriteString("\n")
		line, err := json.Marshal(obj)
		if err != nil {
			panic(err)
		}
		js.Write(append(line, '\n'))
	}
	for name, data := range map[string][]byte{"journal.export": export.Bytes(), "journal.json": js.Bytes()} {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			panic(err)
		}
	}
}
