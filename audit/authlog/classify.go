package authlog

import (
	"strconv"
	"strings"
)

// classify sets the Kind and typed fields of rec from its Program and
// Message; a line it does not know stays KindOther.
func classify(rec *Record) {
	rec.Kind = KindOther
	unwrapRepeated(rec)
	msg := rec.Message
	if svc, rest, ok := cutPAMPrefix(msg); ok {
		if pamSession(rec, svc, rest) || authFailure(rec, svc, rest) {
			return
		}
	}
	switch rec.Program {
	case "sshd":
		sshd(rec, msg)
	case "sudo":
		sudo(rec, msg)
	case "su":
		su(rec, msg)
	case "systemd-logind":
		logind(rec, msg)
	case "useradd", "groupadd":
		userAdd(rec, msg)
	case "chpasswd", "passwd":
		if u, ok := strings.CutPrefix(afterPAM(msg), "password changed for "); ok {
			rec.Kind, rec.Result, rec.TargetUser = KindPasswordChange, ResultSuccess, strings.TrimSpace(u)
		}
	}
	if rec.Kind == KindOther {
		// The old "sshd(pam_unix)[pid]: session opened for user U by
		// (uid=0)" form has no pam_unix(...) prefix: its tag is the service.
		if !pamSession(rec, rec.Program, msg) {
			authFailure(rec, rec.Program, msg)
		}
	}
}

// cutPAMPrefix splits "pam_unix(sshd:session): rest" into the service and
// the rest.
func cutPAMPrefix(msg string) (service, rest string, ok bool) {
	if !strings.HasPrefix(msg, "pam_") {
		return "", "", false
	}
	open := strings.IndexByte(msg, '(')
	end := strings.Index(msg, "): ")
	if open < 0 || end < open {
		return "", "", false
	}
	service, _, _ = strings.Cut(msg[open+1:end], ":")
	return service, msg[end+3:], true
}

// afterPAM drops a "pam_unix(...): " prefix.
func afterPAM(msg string) string {
	if _, rest, ok := cutPAMPrefix(msg); ok {
		return rest
	}
	return msg
}

// pamSession reads "session opened for user U[(uid=N)] by [B](uid=M)" and
// "session closed for user U".
func pamSession(rec *Record, service, msg string) bool {
	var kind Kind
	switch {
	case strings.HasPrefix(msg, "session opened for user "):
		kind, msg = KindSessionOpened, msg[len("session opened for user "):]
	case strings.HasPrefix(msg, "session closed for user "):
		kind, msg = KindSessionClosed, msg[len("session closed for user "):]
	default:
		return false
	}
	target, by, _ := strings.Cut(msg, " by ")
	rec.Kind, rec.Result, rec.Service = kind, ResultSuccess, service
	rec.TargetUser = userName(target)
	rec.User = userName(by)
	if rec.User == "" {
		rec.User = rec.TargetUser
	}
	return true
}

// authFailure reads PAM's "authentication failure; logname= uid=0 euid=0
// tty=ssh ruser= rhost=ADDR [user=U]".
func authFailure(rec *Record, service, msg string) bool {
	rest, ok := strings.CutPrefix(msg, "authentication failure;")
	if !ok {
		return false
	}
	rec.Kind, rec.Result, rec.Service = KindAuthFailure, ResultFailed, service
	for field := range strings.FieldsSeq(rest) {
		key, value, _ := strings.Cut(field, "=")
		switch key {
		case "rhost":
			rec.Addr = value
		case "user":
			rec.User = value
		case "tty":
			rec.TTY = value
		}
	}
	return true
}

// userName drops the "(uid=N)" after a name and the blanks around it.
func userName(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '('); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// sshd reads sshd's login lines.
func sshd(rec *Record, msg string) {
	switch {
	case strings.HasPrefix(msg, "Accepted "):
		sshAttempt(rec, KindSSHAccepted, ResultSuccess, msg[len("Accepted "):])
	case strings.HasPrefix(msg, "Failed "):
		sshAttempt(rec, KindSSHFailed, ResultFailed, msg[len("Failed "):])
	case strings.HasPrefix(msg, "Invalid user "):
		rest := msg[len("Invalid user "):]
		i := strings.LastIndex(rest, " from ")
		if i < 0 {
			return
		}
		rec.Kind, rec.Result, rec.User = KindSSHInvalidUser, ResultFailed, rest[:i]
		rec.Addr, rec.Port = addrPort(rest[i+len(" from "):])
	default:
		for _, p := range []string{"Disconnected from ", "Connection closed by ", "Received disconnect from "} {
			if rest, ok := strings.CutPrefix(msg, p); ok {
				sshDisconnect(rec, rest)
				return
			}
		}
	}
}

// sshAttempt reads "METHOD for [invalid user ]USER from ADDR port PORT
// ssh2[: KEY]".
func sshAttempt(rec *Record, kind Kind, result Result, s string) {
	method, rest, ok := strings.Cut(s, " for ")
	i := strings.LastIndex(rest, " from ")
	if !ok || i < 0 || strings.ContainsRune(method, ' ') {
		return
	}
	rec.Kind, rec.Result, rec.Method = kind, result, method
	rec.User = strings.TrimPrefix(rest[:i], "invalid user ")
	where := rest[i+len(" from "):]
	if head, key, ok := strings.Cut(where, ": "); ok {
		where, rec.Key = head, key
	}
	rec.Addr, rec.Port = addrPort(where)
}

// sshDisconnect reads "[authenticating |invalid ]user U ADDR port P
// [preauth]" or "ADDR[ port P][: reason]".
func sshDisconnect(rec *Record, s string) {
	rec.Kind = KindSSHDisconnect
	for _, p := range []string{"authenticating user ", "invalid user ", "user "} {
		if rest, ok := strings.CutPrefix(s, p); ok {
			user, where, _ := strings.Cut(rest, " ")
			rec.User, s = user, where
			break
		}
	}
	if head, _, ok := strings.Cut(s, ":"); ok && !strings.Contains(head, "::") && strings.Count(s, ":") < 3 {
		s = head // "ADDR port P:11: reason", not an IPv6 address
	}
	rec.Addr, rec.Port = addrPort(s)
}

// addrPort reads "ADDR[ port PORT][ ssh2][ [preauth]]".
func addrPort(s string) (string, int) {
	addr, rest, _ := strings.Cut(strings.TrimSpace(s), " ")
	port := 0
	if p, ok := strings.CutPrefix(rest, "port "); ok {
		p, _, _ = strings.Cut(p, " ")
		port, _ = strconv.Atoi(strings.TrimRight(p, ":"))
	}
	return strings.TrimRight(addr, ":"), port
}

// sudo reads "U : [reason ; ]TTY=T ; PWD=P ; USER=R ; COMMAND=C".
func sudo(rec *Record, msg string) {
	user, rest, ok := strings.Cut(msg, " : ")
	if !ok || !strings.Contains(rest, "COMMAND=") {
		return
	}
	rec.Kind, rec.Result, rec.User = KindSudo, ResultSuccess, strings.TrimSpace(user)
	for part := range strings.SplitSeq(rest, " ; ") {
		key, value, ok := strings.Cut(part, "=")
		switch {
		case !ok:
			rec.Result = ResultFailed // "user NOT in sudoers", "3 incorrect password attempts"
		case key == "TTY":
			rec.TTY = value
		case key == "PWD":
			rec.PWD = value
		case key == "USER":
			rec.TargetUser = value
		case key == "COMMAND":
			// COMMAND is last and may hold " ; " itself.
			rec.Command = rest[strings.Index(rest, "COMMAND=")+len("COMMAND="):]
			return
		}
	}
}

// su reads "(to T) U on TTY", "Successful su for T by U", "FAILED su for T
// by U" and "FAILED SU (to T) U on TTY".
func su(rec *Record, msg string) {
	switch {
	case strings.HasPrefix(msg, "(to "), strings.HasPrefix(msg, "FAILED SU (to "):
		rec.Result = ResultSuccess
		if strings.HasPrefix(msg, "FAILED") {
			rec.Result, msg = ResultFailed, msg[len("FAILED SU "):]
		}
		target, rest, ok := strings.Cut(msg[len("(to "):], ") ")
		user, tty, _ := strings.Cut(rest, " on ")
		if ok {
			rec.Kind, rec.TargetUser, rec.User, rec.TTY = KindSu, target, user, tty
		}
	case strings.HasPrefix(msg, "Successful su for "), strings.HasPrefix(msg, "FAILED su for "):
		rec.Result = ResultSuccess
		if msg[0] == 'F' {
			rec.Result = ResultFailed
		}
		_, rest, _ := strings.Cut(msg, " su for ")
		target, user, ok := strings.Cut(rest, " by ")
		if ok {
			rec.Kind, rec.TargetUser, rec.User = KindSu, target, user
		}
	}
}

// logind reads "New session N of user U." and "Removed session N.".
func logind(rec *Record, msg string) {
	if rest, ok := strings.CutPrefix(msg, "New session "); ok {
		n, user, ok := strings.Cut(strings.TrimSuffix(rest, "."), " of user ")
		if ok {
			rec.Kind, rec.Session, rec.User = KindLogindNew, n, user
		}
	} else if rest, ok := strings.CutPrefix(msg, "Removed session "); ok {
		rec.Kind, rec.Session = KindLogindRemoved, strings.TrimSuffix(rest, ".")
	}
}

// userAdd reads "new user: name=U, UID=N, ..." and "new group: name=G,
// GID=N".
func userAdd(rec *Record, msg string) {
	kind := KindUserAdded
	rest, ok := strings.CutPrefix(msg, "new user: name=")
	if !ok {
		if rest, ok = strings.CutPrefix(msg, "new group: name="); !ok {
			return
		}
		kind = KindGroupAdded
	}
	name, _, _ := strings.Cut(rest, ",")
	rec.Kind, rec.Result, rec.TargetUser = kind, ResultSuccess, name
}

// unwrapRepeated reads rsyslog's "message repeated N times: [ MSG]".
func unwrapRepeated(rec *Record) {
	rest, ok := strings.CutPrefix(rec.Message, "message repeated ")
	if !ok {
		return
	}
	count, inner, ok := strings.Cut(rest, " times: [")
	n, err := strconv.Atoi(count)
	if !ok || err != nil {
		return
	}
	rec.Repeated = n
	rec.Message = strings.TrimSuffix(strings.TrimPrefix(inner, " "), "]")
}
