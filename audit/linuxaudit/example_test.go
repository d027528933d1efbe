package linuxaudit_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/latscope/latscope/audit/linuxaudit"
	"github.com/latscope/latscope/input"
)

// Reading an audit log: the execute watch on srvctl (key oracrs) gives one
// event of four records; the session (ses=3) and login uid (auid=1000)
// lead to the login.
func ExampleRead() {
	log := `type=USER_START msg=audit(1700000000.100:41): pid=900 uid=0 auid=1000 ses=3 msg='op=PAM:session_open grantors=pam_unix acct="grid" exe="/usr/bin/sudo" hostname=? addr=? terminal=/dev/pts/0 res=success'
type=SYSCALL msg=audit(1700000005.200:42): arch=c000003e syscall=59 success=yes exit=0 a0=1 a1=2 a2=3 a3=4 items=2 ppid=950 pid=951 auid=1000 uid=1001 gid=1001 euid=1001 suid=1001 fsuid=1001 egid=1001 sgid=1001 fsgid=1001 tty=pts0 ses=3 comm="srvctl" exe="/u01/app/19.0.0/grid/bin/srvctl" key="oracrs"
type=EXECVE msg=audit(1700000005.200:42): argc=4 a0="srvctl" a1="stop" a2="database" a3=2D64204F52434C
type=CWD msg=audit(1700000005.200:42): cwd="/home/grid"
type=PATH msg=audit(1700000005.200:42): item=0 name="/u01/app/19.0.0/grid/bin/srvctl" inode=4242 dev=08:01 mode=0100755
`
	diag := input.NewDiagnostics(os.Stderr, input.DefaultReportLimit)
	err := linuxaudit.Read(context.Background(), "audit.log", strings.NewReader(log), diag, func(e linuxaudit.Event) error {
		fmt.Printf("%s %s serial %d ses %s auid %s uid %s terminal %q tty %q key %q\n",
			e.Time.Format("2006-01-02T15:04:05.000Z07:00"), strings.Join(e.Types, ","), e.Serial, e.Session, e.AUID, e.UID, e.Terminal, e.TTY, e.Key)
		if e.Command != nil {
			fmt.Printf("  command %q in %s\n", e.Command, e.Cwd)
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// 2023-11-14T22:13:20.100Z USER_START serial 41 ses 3 auid 1000 uid 0 terminal "/dev/pts/0" tty "" key ""
	// 2023-11-14T22:13:25.200Z SYSCALL,EXECVE,CWD,PATH serial 42 ses 3 auid 1000 uid 1001 terminal "" tty "pts0" key "oracrs"
	//   command ["srvctl" "stop" "database" "-d ORCL"] in /home/grid
}
