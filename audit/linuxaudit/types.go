package linuxaudit

import "github.com/latscope/latscope/input"

// kernelType reports whether typ is one of the record types numbered 1300–1999 (the kernel's
// syscall, MAC, AppArmor, anomaly and integrity records), PROCTITLE and EOE
// aside: auparse keeps an event with one of these open for more records of
// the same serial. Every other type (user-space messages 1000–1299 and
// 2000 on: USER_*, CRED_*, LOGIN, DAEMON_*, SERVICE_*, CRYPTO_*, ...) ends
// its event, as do PROCTITLE (the kernel writes it last) and EOE.
func kernelType(typ []byte) bool {
	switch string(typ) {
	case "SYSCALL", "FS_WATCH", "PATH", "IPC", "SOCKETCALL", "CONFIG_CHANGE", "SOCKADDR", "CWD",
		"FS_INODE", "EXECVE", "IPC_SET_PERM", "MQ_OPEN", "MQ_SENDRECV", "MQ_NOTIFY", "MQ_GETSETATTR",
		"KERNEL_OTHER", "FD_PAIR", "OBJ_PID", "TTY", "BPRM_FCAPS", "CAPSET", "MMAP", "NETFILTER_PKT",
		"NETFILTER_CFG", "SECCOMP", "FEATURE_CHANGE", "REPLACE", "KERN_MODULE", "FANOTIFY",
		"TIME_INJOFFSET", "TIME_ADJNTPVAL", "BPF", "EVENT_LISTENER", "URINGOP", "OPENAT2", "DM_CTRL",
		"DM_EVENT", "AVC", "SELINUX_ERR", "AVC_PATH", "MAC_POLICY_LOAD", "MAC_STATUS", "MAC_CONFIG_CHANGE",
		"MAC_UNLBL_ALLOW", "MAC_CIPSOV4_ADD", "MAC_CIPSOV4_DEL", "MAC_MAP_ADD", "MAC_MAP_DEL",
		"MAC_IPSEC_ADDSA", "MAC_IPSEC_DELSA", "MAC_IPSEC_ADDSPD", "MAC_IPSEC_DELSPD", "MAC_IPSEC_EVENT",
		"MAC_UNLBL_STCADD", "MAC_UNLBL_STCDEL", "MAC_CALIPSO_ADD", "MAC_CALIPSO_DEL",
		"MAC_TASK_CONTEXTS", "MAC_OBJ_CONTEXTS", "APPARMOR_AUDIT", "APPARMOR_ALLOWED", "APPARMOR_DENIED",
		"APPARMOR_HINT", "APPARMOR_STATUS", "APPARMOR_ERROR", "APPARMOR_KILL", "ANOM_PROMISCUOUS",
		"ANOM_ABEND", "ANOM_LINK", "ANOM_CREAT", "INTEGRITY_DATA", "INTEGRITY_METADATA",
		"INTEGRITY_STATUS", "INTEGRITY_HASH", "INTEGRITY_PCR", "INTEGRITY_RULE", "INTEGRITY_EVM_XATTR",
		"INTEGRITY_POLICY_RULE":
		return true
	}
	return false
}

// endsEvent reports whether a record of type typ completes its event.
// UNKNOWN[n] (a type auditd had no name for) is judged by its number.
func endsEvent(typ []byte) bool {
	if n, ok := unknownNumber(typ); ok {
		return n < 1300 || n >= 2000 || n == 1320 || n == 1327
	}
	return !kernelType(typ)
}

// unknownNumber returns n of "UNKNOWN[n]".
func unknownNumber(typ []byte) (uint64, bool) {
	const prefix = "UNKNOWN["
	if len(typ) < len(prefix)+2 || string(typ[:len(prefix)]) != prefix || typ[len(typ)-1] != ']' {
		return 0, false
	}
	return input.ParseUint(typ[len(prefix) : len(typ)-1])
}
