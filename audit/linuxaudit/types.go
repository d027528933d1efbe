package linuxaudit

import "github.com/latscope/latscope/input"

// kernelTypes are the record types numbered 1300–1999 (the kernel's
// syscall, MAC, AppArmor, anomaly and integrity records), PROCTITLE and EOE
// aside: auparse keeps an event with one of these open for more records of
// the same serial. Every other type (user-space messages 1000–1299 and
// 2000 on: USER_*, CRED_*, LOGIN, DAEMON_*, SERVICE_*, CRYPTO_*, ...) ends
// its event, as do PROCTITLE (the kernel writes it last) and EOE.
var kernelTypes = map[string]bool{
	"SYSCALL": true, "FS_WATCH": true, "PATH": true, "IPC": true, "SOCKETCALL": true,
	"CONFIG_CHANGE": true, "SOCKADDR": true, "CWD": true, "FS_INODE": true, "EXECVE": true,
	"IPC_SET_PERM": true, "MQ_OPEN": true, "MQ_SENDRECV": true, "MQ_NOTIFY": true,
	"MQ_GETSETATTR": true, "KERNEL_OTHER": true, "FD_PAIR": true, "OBJ_PID": true, "TTY": true,
	"BPRM_FCAPS": true, "CAPSET": true, "MMAP": true, "NETFILTER_PKT": true,
	"NETFILTER_CFG": true, "SECCOMP": true, "FEATURE_CHANGE": true, "REPLACE": true,
	"KERN_MODULE": true, "FANOTIFY": true, "TIME_INJOFFSET": true, "TIME_ADJNTPVAL": true,
	"BPF": true, "EVENT_LISTENER": true, "URINGOP": true, "OPENAT2": true, "DM_CTRL": true,
	"DM_EVENT": true,
	"AVC":      true, "SELINUX_ERR": true, "AVC_PATH": true, "MAC_POLICY_LOAD": true,
	"MAC_STATUS": true, "MAC_CONFIG_CHANGE": true, "MAC_UNLBL_ALLOW": true,
	"MAC_CIPSOV4_ADD": true, "MAC_CIPSOV4_DEL": true, "MAC_MAP_ADD": true, "MAC_MAP_DEL": true,
	"MAC_IPSEC_ADDSA": true, "MAC_IPSEC_DELSA": true, "MAC_IPSEC_ADDSPD": true,
	"MAC_IPSEC_DELSPD": true, "MAC_IPSEC_EVENT": true, "MAC_UNLBL_STCADD": true,
	"MAC_UNLBL_STCDEL": true, "MAC_CALIPSO_ADD": true, "MAC_CALIPSO_DEL": true,
	"MAC_TASK_CONTEXTS": true, "MAC_OBJ_CONTEXTS": true,
	"APPARMOR_AUDIT": true, "APPARMOR_ALLOWED": true, "APPARMOR_DENIED": true,
	"APPARMOR_HINT": true, "APPARMOR_STATUS": true, "APPARMOR_ERROR": true, "APPARMOR_KILL": true,
	"ANOM_PROMISCUOUS": true, "ANOM_ABEND": true, "ANOM_LINK": true, "ANOM_CREAT": true,
	"INTEGRITY_DATA": true, "INTEGRITY_METADATA": true, "INTEGRITY_STATUS": true,
	"INTEGRITY_HASH": true, "INTEGRITY_PCR": true, "INTEGRITY_RULE": true,
	"INTEGRITY_EVM_XATTR": true, "INTEGRITY_POLICY_RULE": true,
}

// endsEvent reports whether a record of type typ completes its event.
// UNKNOWN[n] (a type auditd had no name for) is judged by its number.
func endsEvent(typ []byte) bool {
	if n, ok := unknownNumber(typ); ok {
		return n < 1300 || n >= 2000 || n == 1320 || n == 1327
	}
	return !kernelTypes[string(typ)]
}

// unknownNumber returns n of "UNKNOWN[n]".
func unknownNumber(typ []byte) (uint64, bool) {
	const prefix = "UNKNOWN["
	if len(typ) < len(prefix)+2 || string(typ[:len(prefix)]) != prefix || typ[len(typ)-1] != ']' {
		return 0, false
	}
	return input.ParseUint(typ[len(prefix) : len(typ)-1])
}
