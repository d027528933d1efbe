package oracleaud_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/latscope/latscope/audit/oracleaud"
	"github.com/latscope/latscope/input"
)

// A SHUTDOWN record of a text .aud file: the process comes from the
// header (and the file name), the rest from the record's fields.
func ExampleRead() {
	aud := `Audit file /u01/app/oracle/admin/DB1/adump/DB1_ora_4242_20261126141009123456789012.aud
Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production
Version 19.21.0.0.0
Node name:	db1.example.com
Instance name: DB1
Unix process pid: 4242, image: oracle@db1.example.com (TNS V1-V3)

Thu Nov 26 14:10:09 2026 +01:00
LENGTH : '257'
ACTION :[8] 'SHUTDOWN'
DATABASE USER:[1] '/'
PRIVILEGE :[6] 'SYSDBA'
CLIENT USER:[6] 'oracle'
CLIENT TERMINAL:[5] 'pts/1'
STATUS:[1] '0'
DBID:[10] '2824230686'
SESSIONID:[1] '0'
USERHOST:[15] 'db1.example.com'
CLIENT ADDRESS:[0] ''
ACTION NUMBER:[3] '138'

`
	diag := input.NewDiagnostics(os.Stderr, input.DefaultReportLimit)
	err := oracleaud.Read(context.Background(), "DB1_ora_4242_20261126141009123456789012.aud", strings.NewReader(aud), diag,
		func(r oracleaud.Record) error {
			fmt.Printf("%s %s by OS user %s on %s as %s, %s process %d of %s@%s (line %d)\n",
				r.Time.UTC().Format("2006-01-02 15:04:05Z"), r.Kind, r.ClientUser, r.ClientTerminal, r.Privilege,
				r.Process.Name, r.Process.PID, r.Process.Instance, r.Process.Host, r.Line)
			return nil
		})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// 2026-11-26 13:10:09Z SHUTDOWN by OS user oracle on pts/1 as SYSDBA, ora process 4242 of DB1@db1.example.com (line 8)
}
