// Command auditgen writes a synthetic, seeded host's audit trail for the
// `latscope audit` benchmark and memory tests (issue 21): DIR/audit.log of
// about -mb megabytes, DIR/auth.log and DIR/adump/*.aud, made from the
// record shapes of testdata/audit (correlate-synthetic and the real
// audit logs): ssh logins (CRED_ACQ, LOGIN, USER_START, USER_LOGIN and
// sshd's Accepted line), sudo to oracle in the same session (USER_CMD,
// CRED_ACQ, USER_START), commands as SYSCALL+EXECVE+CWD+PATH+PROCTITLE
// events, file-watch syscalls of daemons without a session, now and then a
// `sqlplus / as sysdba` SHUTDOWN or STARTUP (an .aud file named by the
// bequeath server's pid) or a `srvctl stop|start database` under the
// execute watch key oracrs (an .aud file with terminal UNKNOWN), and
// sessions closed by USER_END, CRED_DISP and USER_LOGOUT. About 40
// sessions are open at a time; time advances about 1 s an event.
//
//	go run ./scripts/auditgen -mb 100 -out /tmp/audit100
package main

import (
	"bufio"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	mb := flag.Int("mb", 100, "size of audit.log in MB (10^6 bytes)")
	out := flag.String("out", "auditgen-out", "directory to write audit.log, auth.log and adump/ into")
	seed := flag.Int64("seed", 21, "random seed")
	open := flag.Int("sessions", 40, "sessions open at a time")
	flag.Parse()
	if err := run(*out, int64(*mb)*1_000_000, *seed, *open); err != nil {
		fmt.Fprintln(os.Stderr, "auditgen:", err)
		os.Exit(1)
	}
}

// session is an ssh login being replayed.
type session struct {
	ses, auid, sshdPID int
	user, addr         string
	port, tty          int
	sudo               bool // sudo to oracle done
	left               int  // commands left before logout
}

type gen struct {
	rnd     *rand.Rand
	audit   *bufio.Writer
	auth    *bufio.Writer
	adump   string
	written int64
	t       time.Time
	serial  int
	pid     int
	nextSes int
	auds    int
}

var (
	users    = []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"}
	commands = [][]string{{"ls", "-l"}, {"ps", "-ef"}, {"grep", "-i", "ora-", "alert_ORCL.log"}, {"df", "-h"},
		{"tail", "-100", "/u01/app/oracle/diag/rdbms/orcl/ORCL/trace/alert_ORCL.log"}, {"cat", "/etc/oratab"},
		{"vi", "/home/oracle/notes.txt"}, {"lsnrctl", "status"}, {"top", "-b", "-n", "1"}, {"du", "-sh", "/u01/app/oracle"}}
)

func run(dir string, size, seed int64, open int) error {
	if err := os.MkdirAll(filepath.Join(dir, "adump"), 0o755); err != nil {
		return err
	}
	af, err := os.Create(filepath.Join(dir, "audit.log"))
	if err != nil {
		return err
	}
	defer af.Close()
	lf, err := os.Create(filepath.Join(dir, "auth.log"))
	if err != nil {
		return err
	}
	defer lf.Close()
	g := &gen{rnd: rand.New(rand.NewSource(seed)), audit: bufio.NewWriterSize(af, 1<<20), auth: bufio.NewWriterSize(lf, 64<<10),
		adump: filepath.Join(dir, "adump"), t: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), serial: 1000, pid: 3000, nextSes: 100}
	var live []*session
	for g.written < size {
		for len(live) < open {
			live = append(live, g.login())
		}
		g.tick()
		switch x := g.rnd.Intn(100); {
		case x < 45:
			g.daemonSyscall()
		default:
			i := g.rnd.Intn(len(live))
			s := live[i]
			if s.left == 0 {
				g.logout(s)
				live[i] = live[len(live)-1]
				live = live[:len(live)-1]
				continue
			}
			s.left--
			g.command(s)
		}
	}
	for _, s := range live {
		g.tick()
		g.logout(s)
	}
	if err := g.audit.Flush(); err != nil {
		return err
	}
	if err := g.auth.Flush(); err != nil {
		return err
	}
	fmt.Printf("auditgen: %s: %d bytes of audit.log, %d .aud files, %s to %s\n", dir, g.written, g.auds,
		time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339), g.t.Format(time.RFC3339))
	return nil
}

// tick advances the clock by 0.2–1.8 s.
func (g *gen) tick() { g.t = g.t.Add(time.Duration(200+g.rnd.Intn(1600)) * time.Millisecond) }

func (g *gen) stamp() string {
	g.serial++
	return fmt.Sprintf("msg=audit(%d.%03d:%d):", g.t.Unix(), g.t.Nanosecond()/1e6, g.serial)
}

func (g *gen) rec(typ, stamp, body string) {
	n, _ := fmt.Fprintf(g.audit, "type=%s %s %s\n", typ, stamp, body)
	g.written += int64(n)
}

func (g *gen) authLine(format string, args ...any) {
	fmt.Fprintf(g.auth, "%s db1 %s\n", g.t.Format("Jan _2 15:04:05"), fmt.Sprintf(format, args...))
}

func (g *gen) newPID() int {
	g.pid++
	if g.pid > 4_000_000 {
		g.pid = 3000
	}
	return g.pid
}

func (g *gen) login() *session {
	g.nextSes++
	u := g.rnd.Intn(len(users))
	s := &session{ses: g.nextSes, auid: 1001 + u, sshdPID: g.newPID(), user: users[u],
		addr: fmt.Sprintf("203.0.113.%d", 1+g.rnd.Intn(250)), port: 30000 + g.rnd.Intn(30000), tty: g.rnd.Intn(64),
		left: 5 + g.rnd.Intn(60)}
	g.tick()
	g.authLine("sshd[%d]: Accepted publickey for %s from %s port %d ssh2: RSA SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8", s.sshdPID, s.user, s.addr, s.port)
	g.rec("CRED_ACQ", g.stamp(), fmt.Sprintf(`pid=%d uid=0 auid=4294967295 ses=4294967295 msg='op=PAM:setcred grantors=pam_env,pam_unix acct="%s" exe="/usr/sbin/sshd" hostname=%s addr=%s terminal=ssh res=success'`, s.sshdPID, s.user, s.addr, s.addr))
	g.rec("LOGIN", g.stamp(), fmt.Sprintf("pid=%d uid=0 old-auid=4294967295 auid=%d tty=(none) old-ses=4294967295 ses=%d res=1", s.sshdPID, s.auid, s.ses))
	g.rec("USER_START", g.stamp(), fmt.Sprintf(`pid=%d uid=0 auid=%d ses=%d msg='op=PAM:session_open grantors=pam_selinux,pam_loginuid,pam_keyinit,pam_limits,pam_systemd,pam_unix acct="%s" exe="/usr/sbin/sshd" hostname=%s addr=%s terminal=ssh res=success'`, s.sshdPID, s.auid, s.ses, s.user, s.addr, s.addr))
	g.rec("USER_LOGIN", g.stamp(), fmt.Sprintf(`pid=%d uid=0 auid=%d ses=%d msg='op=login id=%d exe="/usr/sbin/sshd" hostname=%s addr=%s terminal=/dev/pts/%d res=success'`, s.sshdPID, s.auid, s.ses, s.auid, s.addr, s.addr, s.tty))
	g.authLine("sshd[%d]: pam_unix(sshd:session): session opened for user %s(uid=%d) by (uid=0)", s.sshdPID, s.user, s.auid)
	return s
}

func (g *gen) sudo(s *session) {
	pid := g.newPID()
	g.authLine("sudo:    %s : TTY=pts/%d ; PWD=/home/%s ; USER=oracle ; COMMAND=/bin/bash", s.user, s.tty, s.user)
	g.rec("USER_CMD", g.stamp(), fmt.Sprintf(`pid=%d uid=%d auid=%d ses=%d msg='cwd="/home/%s" cmd=%s terminal=pts/%d res=success'`, pid, s.auid, s.auid, s.ses, s.user, strings.ToUpper(hex.EncodeToString([]byte("-iu oracle"))), s.tty))
	g.rec("CRED_ACQ", g.stamp(), fmt.Sprintf(`pid=%d uid=0 auid=%d ses=%d msg='op=PAM:setcred grantors=pam_env,pam_unix acct="oracle" exe="/usr/bin/sudo" hostname=db1 addr=? terminal=/dev/pts/%d res=success'`, pid, s.auid, s.ses, s.tty))
	g.rec("USER_START", g.stamp(), fmt.Sprintf(`pid=%d uid=0 auid=%d ses=%d msg='op=PAM:session_open grantors=pam_keyinit,pam_limits,pam_unix acct="oracle" exe="/usr/bin/sudo" hostname=db1 addr=? terminal=/dev/pts/%d res=success'`, pid, s.auid, s.ses, s.tty))
	g.authLine("sudo: pam_unix(sudo:session): session opened for user oracle(uid=1100) by %s(uid=%d)", s.user, s.auid)
	s.sudo = true
}

// exec writes a SYSCALL+EXECVE+CWD+PATH+PROCTITLE event and returns its pid.
func (g *gen) exec(s *session, ppid int, uid int, key, exe string, argv []string) int {
	pid := g.newPID()
	st := g.stamp()
	tty := fmt.Sprintf("pts%d", s.tty)
	g.rec("SYSCALL", st, fmt.Sprintf(`arch=c000003e syscall=59 success=yes exit=0 a0=55d1f3c0a0 a1=55d1f3c2b0 a2=55d1f3b010 a3=7ffc1a2b3c40 items=2 ppid=%d pid=%d auid=%d uid=%d gid=%d euid=%d suid=%d fsuid=%d egid=%d sgid=%d fsgid=%d tty=%s ses=%d comm="%s" exe="%s" subj=unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023 key="%s"`,
		ppid, pid, s.auid, uid, uid, uid, uid, uid, uid, uid, uid, tty, s.ses, filepath.Base(exe), exe, key))
	var args strings.Builder
	fmt.Fprintf(&args, "argc=%d", len(argv))
	for i, a := range argv {
		fmt.Fprintf(&args, ` a%d="%s"`, i, a)
	}
	g.rec("EXECVE", st, args.String())
	g.rec("CWD", st, fmt.Sprintf(`cwd="/home/%s"`, s.user))
	g.rec("PATH", st, fmt.Sprintf(`item=0 name="%s" inode=%d dev=fd:00 mode=0100755 ouid=0 ogid=0 rdev=00:00 obj=system_u:object_r:bin_t:s0 nametype=NORMAL cap_fp=0 cap_fi=0 cap_fe=0 cap_fver=0 cap_frootid=0`, exe, 100000+g.rnd.Intn(900000)))
	g.rec("PATH", st, `item=1 name="/lib64/ld-linux-x86-64.so.2" inode=33595521 dev=fd:00 mode=0100755 ouid=0 ogid=0 rdev=00:00 obj=system_u:object_r:ld_so_t:s0 nametype=NORMAL cap_fp=0 cap_fi=0 cap_fe=0 cap_fver=0 cap_frootid=0`)
	g.rec("PROCTITLE", st, "proctitle="+strings.ToUpper(hex.EncodeToString([]byte(strings.Join(argv, "\x00")))))
	return pid
}

func (g *gen) command(s *session) {
	switch x := g.rnd.Intn(1000); {
	case !s.sudo && x < 300:
		g.sudo(s)
	case s.sudo && x < 12:
		g.sqlplus(s)
	case s.sudo && x < 18:
		g.srvctl(s)
	default:
		argv := commands[g.rnd.Intn(len(commands))]
		uid := s.auid
		if s.sudo {
			uid = 1100
		}
		g.exec(s, g.newPID(), uid, "exec", "/usr/bin/"+argv[0], argv)
	}
}

var dbActions = []string{"SHUTDOWN", "STARTUP"}

// sqlplus runs `sqlplus / as sysdba` and a shutdown or startup: the exec
// of sqlplus and of its bequeath server, whose pid names the .aud file.
func (g *gen) sqlplus(s *session) {
	sq := g.exec(s, g.newPID(), 1100, "oracmd", "/u01/app/oracle/product/19.0.0/dbhome_1/bin/sqlplus", []string{"sqlplus", "/", "as", "sysdba"})
	g.tick()
	server := g.exec(s, sq, 1100, "oracmd", "/u01/app/oracle/product/19.0.0/dbhome_1/bin/oracle", []string{"oracleORCL", "(DESCRIPTION=(LOCAL=YES)(ADDRESS=(PROTOCOL=beq)))"})
	g.aud(server, fmt.Sprintf("pts/%d", s.tty), "CONNECT", dbActions[g.rnd.Intn(2)])
}

// srvctl runs srvctl under the execute watch; the database's record is
// written by a Grid process without a terminal a few seconds later.
func (g *gen) srvctl(s *session) {
	verb := []string{"stop", "start"}[g.rnd.Intn(2)]
	g.exec(s, g.newPID(), 1100, "oracrs", "/usr/bin/bash", []string{"/bin/sh", "/u01/app/19.0.0/grid/bin/srvctl", verb, "database", "-d", "ORCL"})
	g.tick()
	g.tick()
	action := "SHUTDOWN"
	if verb == "start" {
		action = "STARTUP"
	}
	g.aud(g.newPID(), "UNKNOWN", action)
}

// aud writes an .aud file of the server process pid with its records.
func (g *gen) aud(pid int, terminal string, actions ...string) {
	g.auds++
	name := filepath.Join(g.adump, fmt.Sprintf("ORCL_ora_%d_%s%012d.aud", pid, g.t.Format("20060102150405"), g.auds))
	var b strings.Builder
	fmt.Fprintf(&b, `Audit file /u01/app/oracle/admin/ORCL/adump/%s
Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production
Version 19.3.0.0.0
Build label:    RDBMS_19.3.0.0.0DBRU_LINUX.X64_190417
ORACLE_HOME:    /u01/app/oracle/product/19.0.0/dbhome_1
System name:	Linux
Node name:	db1
Release:	3.10.0-1127.19.1.el7.x86_64
Version:	#1 SMP Tue Aug 25 17:23:54 UTC 2020
Machine:	x86_64
Instance name: ORCL
Redo thread mounted by this instance: 1
Oracle process number: 45
Unix process pid: %d, image: oracle@db1 (TNS V1-V3)
`, filepath.Base(name), pid)
	numbers := map[string]string{"CONNECT": "100", "SHUTDOWN": "138", "STARTUP": "138"}
	for i, a := range actions {
		t := g.t.Add(time.Duration(i) * 3 * time.Second)
		field := func(k, v string) string { return fmt.Sprintf("%s:[%d] '%s'\n", k, len(v), v) }
		body := "ACTION :" + field("", a)[1:] + field("DATABASE USER", "/") + "PRIVILEGE :" + field("", "SYSDBA")[1:] +
			field("CLIENT USER", "oracle") + field("CLIENT TERMINAL", terminal) + field("STATUS", "0") +
			field("DBID", "1601345032") + field("SESSIONID", "4294967295") + field("USERHOST", "db1") +
			field("CLIENT ADDRESS", "") + field("ACTION NUMBER", numbers[a])
		fmt.Fprintf(&b, "\n%s\nLENGTH : '%d'\n%s", t.Format("Mon Jan _2 15:04:05 2006 -07:00"), len(body), body)
	}
	if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "auditgen:", err)
		os.Exit(1)
	}
}

// daemonSyscall is a file-watch syscall of a daemon without a session.
func (g *gen) daemonSyscall() {
	st := g.stamp()
	pid := 600 + g.rnd.Intn(400)
	g.rec("SYSCALL", st, fmt.Sprintf(`arch=c000003e syscall=257 success=yes exit=3 a0=ffffff9c a1=7f3b2c1d0e10 a2=80000 a3=0 items=1 ppid=1 pid=%d auid=4294967295 uid=0 gid=0 euid=0 suid=0 fsuid=0 egid=0 sgid=0 fsgid=0 tty=(none) ses=4294967295 comm="sssd_nss" exe="/usr/libexec/sssd/sssd_nss" subj=system_u:system_r:sssd_t:s0 key="identity"`, pid))
	g.rec("CWD", st, `cwd="/"`)
	g.rec("PATH", st, `item=0 name="/etc/passwd" inode=16787937 dev=fd:00 mode=0100644 ouid=0 ogid=0 rdev=00:00 obj=system_u:object_r:passwd_file_t:s0 nametype=NORMAL cap_fp=0 cap_fi=0 cap_fe=0 cap_fver=0 cap_frootid=0`)
	g.rec("PROCTITLE", st, "proctitle=2F7573722F6C6962657865632F737373642F737373645F6E7373002D2D756964003000")
}

func (g *gen) logout(s *session) {
	if s.sudo {
		g.rec("USER_END", g.stamp(), fmt.Sprintf(`pid=%d uid=0 auid=%d ses=%d msg='op=PAM:session_close grantors=pam_keyinit,pam_limits,pam_unix acct="oracle" exe="/usr/bin/sudo" hostname=db1 addr=? terminal=/dev/pts/%d res=success'`, s.sshdPID+1, s.auid, s.ses, s.tty))
	}
	g.rec("USER_END", g.stamp(), fmt.Sprintf(`pid=%d uid=0 auid=%d ses=%d msg='op=PAM:session_close grantors=pam_selinux,pam_loginuid,pam_keyinit,pam_limits,pam_systemd,pam_unix acct="%s" exe="/usr/sbin/sshd" hostname=%s addr=%s terminal=ssh res=success'`, s.sshdPID, s.auid, s.ses, s.user, s.addr, s.addr))
	g.rec("CRED_DISP", g.stamp(), fmt.Sprintf(`pid=%d uid=0 auid=%d ses=%d msg='op=PAM:setcred grantors=pam_env,pam_unix acct="%s" exe="/usr/sbin/sshd" hostname=%s addr=%s terminal=ssh res=success'`, s.sshdPID, s.auid, s.ses, s.user, s.addr, s.addr))
	g.rec("USER_LOGOUT", g.stamp(), fmt.Sprintf(`pid=%d uid=0 auid=%d ses=%d msg='op=login id=%d exe="/usr/sbin/sshd" hostname=%s addr=%s terminal=/dev/pts/%d res=success'`, s.sshdPID, s.auid, s.ses, s.auid, s.addr, s.addr, s.tty))
	g.authLine("sshd[%d]: pam_unix(sshd:session): session closed for user %s", s.sshdPID, s.user)
}
