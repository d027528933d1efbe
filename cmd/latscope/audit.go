package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/latscope/latscope/driver"
)

func newAuditCommand(env environment) *cobra.Command {
	var (
		ac           driver.AuditConfig
		since, until string
	)
	cmd := &cobra.Command{
		Use:   "audit FILE...",
		Short: "Who started or stopped the database: Oracle audit files, Linux audit and login logs correlated",
		Long: `List every database start, stop, mount, open and SYSDBA/SYSOPER connection of the Oracle
audit files given, and every clusterware command (srvctl, crsctl) under the Linux audit execute
watch with key oracrs, each with the chain that explains it: the server process (its pid from
the .aud file name, exec'd by sqlplus), or the terminal (CLIENT TERMINAL pts/N) and time, or,
for Grid Infrastructure's records without a terminal, the srvctl/crsctl command just before
it; then the Linux audit session (ses=, which survives sudo and su), its sudo/su steps, and the
ssh login with its address and port. Every link says its confidence: exact (same ses, same
process), by process id, by terminal and time, by execute watch and time, by address and
time, ambiguous (several clusterware commands fit: none taken, each listed as a candidate),
or unknown: never guessed. No link joins two hosts (audit node=, the Oracle header's host,
the login log's host).

FILEs are Oracle audit trails (.aud text, XML, UNIFIED_AUDIT_TRAIL CSV, syslog), Linux
audit.log files and login logs (auth.log, secure, journalctl -o export/json), gzip or not, the
format of each detected (--input-format forces one for all; - reads the standard input).
docs/audit.md lists the auditctl rules and Oracle settings to set.`,
		Example: `  latscope audit /u01/app/oracle/admin/ORCL/adump/*.aud /var/log/audit/audit.log* /var/log/secure
  latscope audit adump/*.aud audit.log auth.log --year 2026 --since 2026-11-20 --db ORCL
  latscope audit adump/*.aud audit.log auth.log --year 2026 -o timeline.html
  latscope audit /u01/app/oracle/admin/ORCL/adump /var/log/audit/audit.log /var/log/secure --follow --format jsonl
  latscope audit adump/*.aud audit.log auth.log --format json | jq '.chains[] | {t: .subject.time, who: .login}'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("%s needs at least one FILE: an Oracle .aud file, a Linux audit.log or a login log; see --help", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			switch ac.Format {
			case "table", "json", "jsonl":
			default:
				return usagef("--format %q: want table, json or jsonl", ac.Format)
			}
			if ac.Follow && ac.Format == "json" {
				return usagef("--follow prints one chain at a time: --format jsonl or table, not json")
			}
			if ac.Follow && (ac.Output != "" || slices.Contains(args, "-")) {
				return usagef("--follow reads files and prints to stdout as they grow: not with -o or - (standard input)")
			}
			var err error
			if since != "" {
				if ac.Filter.Since, err = driver.ParseAuditTime(since); err != nil {
					return usagef("--since %v", err)
				}
			}
			if until != "" {
				if ac.Filter.Until, err = driver.ParseAuditTime(until); err != nil {
					return usagef("--until %v", err)
				}
			}
			if ac.Options.Year < 0 {
				return usagef("--year must not be negative")
			}
			if err := driver.CheckAuditOutput(ac.Output); err != nil {
				return usagef("%v", err)
			}
			if f := ac.Options.InputFormat; f != "" && !slices.Contains(driver.AuditInputFormats(), f) {
				return usagef("--input-format %q: want one of %s", f, strings.Join(driver.AuditInputFormats(), ", "))
			}
			if n := len(slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a != "-" })); n > 1 {
				return usagef("- (standard input) given more than once")
			}
			ac.Files, ac.Options.Stdin, ac.Stdout, ac.Stderr = args, env.stdin, env.stdout, env.stderr
			return driver.Audit(cmd.Context(), ac)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&ac.Format, "format", "table", "stdout format: table, json, or jsonl (one chain a line, for a log pipeline)")
	fl.StringVarP(&ac.Output, "output", "o", "", "write to FILE in its extension's format: .html (the timeline page), .json, .jsonl, else the table")
	fl.StringVar(&ac.Options.InputFormat, "input-format", "", "every FILE's format instead of detecting it: "+strings.Join(driver.AuditInputFormats(), ", "))
	fl.StringVar(&since, "since", "", "only subjects at or after this time (RFC 3339, or 2026-11-20 10:00 in UTC)")
	fl.StringVar(&until, "until", "", "only subjects at or before this time")
	fl.StringVar(&ac.Filter.DB, "db", "", "only this database: instance name or DBID (clusterware commands: their -d argument)")
	fl.IntVar(&ac.Options.Year, "year", 0, "year of login logs' classic syslog stamps (default: from the file's modification time)")
	fl.DurationVar(&ac.Options.WatchWindow, "watch-window", 0, "how long a clusterware command may precede the database record it explains (default 2m)")
	fl.BoolVar(&ac.Follow, "follow", false, "keep reading the files (rotation-safe) and the Oracle audit files new in directories or quoted globs; print each new chain once")
	fl.DurationVar(&ac.FollowOptions.Settle, "settle", 0, "--follow: how long after its subject is read a chain is printed (default 3s): links written later still count")
	fl.DurationVar(&ac.Options.MaxAge, "max-age", 0, "how long before a database record its process's exec or its terminal's last event may be (default 12h)")
	return cmd
}
