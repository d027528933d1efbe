package authlog_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/latscope/latscope/audit/authlog"
	"github.com/latscope/latscope/input"
)

// Reading an auth.log: the login, the sudo that stopped the database and
// the su to grid, with the year given (--year) since the file has none.
func ExampleReader_Read() {
	log := `Nov 26 08:01:02 dbhost1 sshd[4120]: Accepted publickey for oracle from 192.0.2.10 port 50522 ssh2: ED25519 SHA256:q3T9xW1b
Nov 26 08:01:02 dbhost1 systemd-logind[812]: New session 7 of user oracle.
Nov 26 08:03:40 dbhost1 sudo:   oracle : TTY=pts/0 ; PWD=/home/oracle ; USER=root ; COMMAND=/usr/bin/systemctl stop oracle-db
Nov 26 08:04:10 dbhost1 su[4230]: (to grid) oracle on pts/0
Nov 26 08:04:11 dbhost1 CRON[4300]: pam_unix(cron:session): session opened for user root(uid=0) by (uid=0)
`
	diag := input.NewDiagnostics(os.Stderr, input.DefaultReportLimit)
	err := authlog.Reader{Year: 2026}.Read(context.Background(), "auth.log", strings.NewReader(log), diag, func(r authlog.Record) error {
		fmt.Printf("%d %s %s %s user=%s target=%s addr=%s port=%d method=%s tty=%s session=%s command=%q\n",
			r.Line, r.Time.Format("2006-01-02T15:04:05Z"), r.Program, r.Kind, r.User, r.TargetUser, r.Addr, r.Port, r.Method, r.TTY, r.Session, r.Command)
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// 1 2026-11-26T08:01:02Z sshd ssh-accepted user=oracle target= addr=192.0.2.10 port=50522 method=publickey tty= session= command=""
	// 2 2026-11-26T08:01:02Z systemd-logind logind-new user=oracle target= addr= port=0 method= tty= session=7 command=""
	// 3 2026-11-26T08:03:40Z sudo sudo user=oracle target=root addr= port=0 method= tty=pts/0 session= command="/usr/bin/systemctl stop oracle-db"
	// 4 2026-11-26T08:04:10Z su su user=oracle target=grid addr= port=0 method= tty=pts/0 session= command=""
	// 5 2026-11-26T08:04:11Z CRON session-opened user=root target=root addr= port=0 method= tty= session= command=""
}
