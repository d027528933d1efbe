// Package authlog reads login logs as a DBA finds them on a host or copied
// off it: /var/log/secure, /var/log/auth.log and /var/log/messages (classic
// syslog lines "Mar 27 13:08:09 host sshd[1361]: msg", rsyslog's
// RSYSLOG_FileFormat with RFC 3339 timestamps, RFC 5424 lines, the old
// "sshd(pam_unix)[pid]:" form) and the systemd journal's `journalctl -o
// export` and `-o json` output. Every line (or journal entry) becomes one
// Record: sshd logins, failures and disconnects, PAM sessions, sudo, su,
// systemd-logind sessions and user changes get a Kind and typed fields;
// everything else is kept as KindOther with its program, pid and message.
//
// Readers are memory bounded: a line (or journal field) longer than
// MaxLineBytes is reported with file:line and skipped; bad input is
// reported through input.Diagnostics while the rest is kept.
package authlog

import "time"

// Format names one of the login log formats this package reads.
type Format string

// The formats, as `--input-format` would name them.
const (
	FormatSyslog        Format = "auth-log"
	FormatJournalExport Format = "journal-export"
	FormatJournalJSON   Format = "journal-json"
)

// Kind says what a record tells about logins and privilege changes.
type Kind string

// The kinds; every other line is KindOther.
const (
	KindSSHAccepted    Kind = "ssh-accepted"     // Accepted METHOD for USER from ADDR port PORT
	KindSSHFailed      Kind = "ssh-failed"       // Failed METHOD for [invalid user] USER from ADDR port PORT
	KindSSHInvalidUser Kind = "ssh-invalid-user" // Invalid user USER from ADDR [port PORT]
	KindSSHDisconnect  Kind = "ssh-disconnect"   // Disconnected from / Connection closed by / Received disconnect from
	KindSessionOpened  Kind = "session-opened"   // pam_unix(SERVICE:session): session opened for user U
	KindSessionClosed  Kind = "session-closed"   // pam_unix(SERVICE:session): session closed for user U
	KindAuthFailure    Kind = "auth-failure"     // pam_unix(SERVICE:auth): authentication failure; ... rhost=ADDR user=U
	KindSudo           Kind = "sudo"             // U : TTY=... ; PWD=... ; USER=T ; COMMAND=C (Result failed: NOT in sudoers, incorrect passwords)
	KindSu             Kind = "su"               // (to T) U on TTY, Successful su for T by U, FAILED su for T by U
	KindLogindNew      Kind = "logind-new"       // New session N of user U.
	KindLogindRemoved  Kind = "logind-removed"   // Removed session N.
	KindUserAdded      Kind = "user-added"       // useradd: new user: name=U, ...
	KindGroupAdded     Kind = "group-added"      // groupadd: new group: name=G, ...
	KindPasswordChange Kind = "password-changed" // chpasswd/passwd: password changed for U
	KindOther          Kind = "other"
)

// Result says whether an attempt succeeded ("" where the line does not
// say).
type Result string

// The results.
const (
	ResultSuccess Result = "success"
	ResultFailed  Result = "failed"
)

// Record is one line of a syslog file or one journal entry.
type Record struct {
	// Source is the input's name and Line the 1-based line the record
	// starts on (a journal export entry's first field).
	Source string
	Line   int
	Format Format
	// Time is when the line was written, in UTC: a classic syslog stamp
	// read in the Reader's Location with the year its policy gives
	// (input.SyslogYear), RFC 3339 stamps with their own offset, the
	// journal's __REALTIME_TIMESTAMP exactly. Zero when the line has none.
	Time    time.Time
	Host    string
	Program string // the syslog tag without pid ("sshd", "sudo", "systemd-logind"), the journal's SYSLOG_IDENTIFIER or _COMM
	PID     int    // 0: none
	Message string // the text after the tag, the journal's MESSAGE
	// Repeated is how many identical messages the line stands for:
	// rsyslog's "message repeated 5 times: [ Failed password ...]" gives
	// 5 and the Message inside the brackets; 0 for a plain line.
	Repeated int

	Kind   Kind
	Result Result
	// User is who acts: the account logging in, running sudo or su, or
	// opening a PAM session (its "by U", else its "for user U").
	User string
	// TargetUser is whom they become: sudo's USER=, su's target, the
	// account a PAM session is opened for.
	TargetUser string
	Addr       string
	Port       int
	Method     string // sshd's password, publickey, keyboard-interactive/pam, gssapi-with-mic...
	Key        string // the key after "ssh2: " (type and fingerprint)
	TTY        string
	PWD        string
	Command    string
	Service    string // the PAM service of a session line (sshd, sudo, su, su-l, login...)
	Session    string // systemd-logind's session number
	// AuditSession and LoginUID are the journal's _AUDIT_SESSION and
	// _AUDIT_LOGINUID: the Linux audit log's ses= and auid=.
	AuditSession string
	LoginUID     string
}
