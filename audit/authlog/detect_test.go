package authlog

import (
	"os"
	"testing"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

func TestDetectRealFiles(t *testing.T) {
	for _, rel := range realFiles {
		t.Run(rel, func(t *testing.T) {
			data, err := os.ReadFile(testenv.DataFile(t, rel))
			if err != nil {
				t.Fatal(err)
			}
			if f, v := DetectFormat(data[:min(len(data), input.DetectLimit)]); f != FormatSyslog || v != input.Yes {
				t.Errorf("%q %v", f, v)
			}
		})
	}
	for _, rel := range []string{"audit/linux-audit/elastic-go-libaudit/normal.log", "audit/oracle-aud/xml/averemee-si-oralog_UnmarshallerTest_testCase.xml.txt"} {
		data, err := os.ReadFile(testenv.DataFile(t, rel))
		if err != nil {
			t.Fatal(err)
		}
		if v := Detect(data); v != input.No {
			t.Errorf("%s: %v, want No", rel, v)
		}
	}
}

func TestDetectCases(t *testing.T) {
	for _, c := range []struct {
		prefix string
		want   input.Verdict
	}{
		{"Mar 27 13:08:09 h sshd[1]: x\n", input.Yes},
		{"Mar 27 13:08:09 h kernel: x\nMar 27 13:08:10 h sudo: u : TTY=pts/0 ; USER=root ; COMMAND=/bin/ls\n", input.Yes},
		{"Mar 27 13:08:09 h kernel: x\n", input.NeedMore}, // a messages file whose logins may come later
		{"Mar 27 13:08", input.NeedMore},
		{"2026-11-26T08:01:02+00:00 h su[1]: (to grid) o on pts/0\n", input.Yes},
		{"__CURSOR=s=1\n", input.Yes},
		{`{"__CURSOR":"s","__REALTIME_TIMESTAMP":"1"}` + "\n", input.Yes},
		{`{"a":1}` + "\n", input.No},
		{"type=SYSCALL msg=audit(1.2:3): x\n", input.No},
	} {
		if got := Detect([]byte(c.prefix)); got != c.want {
			t.Errorf("%q: %v, want %v", c.prefix, got, c.want)
		}
	}
}
