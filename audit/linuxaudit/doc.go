// Package linuxaudit reads the Linux audit daemon's raw log (audit.log):
// records of the form
//
//	[node=NAME ]type=TYPE msg=audit(EPOCH.MILLI:SERIAL): key=value key="quoted" msg='inner=values' [0x1D ENRICHED=values]
//
// joined into events by node, time and serial the way auparse (and so
// ausearch) joins them, with the fields the "who did it" correlation needs:
// ids (unset ones as "unset"), session, process, terminal, address, the
// reassembled EXECVE command line, the working directory and PATH names,
// hex-encoded values decoded.
//
// Memory is bounded: lines longer than MaxLineBytes are reported and
// skipped, an event longer than MaxEventBytes is handed on in parts, and at
// most MaxOpen events are held open at once (docs/audit.md, "Linux audit
// logs", says when an event is complete).
package linuxaudit
