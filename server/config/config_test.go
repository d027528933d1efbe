package config

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/server/jobs"
)

// docExample is the configuration example of docs/serve.md: the first
// yaml block after "## Configuration file".
func docExample(t testing.TB) []byte {
	b, err := os.ReadFile("../../docs/serve.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "## Configuration file")
	if !ok {
		t.Fatal("docs/serve.md has no configuration section")
	}
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/serve.md has no yaml example")
	}
	return []byte(block)
}

func TestDocumentedExampleLoads(t *testing.T) {
	c, err := Parse("latscope.yaml", docExample(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:7879" || c.Data != "/var/lib/latscope" || len(c.Jobs) != 5 {
		t.Fatalf("config %+v", c)
	}
	want := []struct {
		name  string
		every time.Duration
		plan  jobs.Schedule
	}{
		{"db01", time.Second, jobs.Schedule{}},
		{"orders-mysql", 5 * time.Second, jobs.Schedule{}},
		{"u01-io", time.Second, jobs.Schedule{Run: 30 * time.Second, Every: 15 * time.Minute}},
		{"app-latency", DefaultInterval, jobs.Schedule{}},
		{"host", DefaultInterval, jobs.Schedule{}},
	}
	for i, w := range want {
		j := c.Jobs[i]
		if j.Name != w.name || j.Every != w.every || j.Plan != w.plan || j.Line == 0 {
			t.Errorf("job %d = %+v; want %+v", i, j, w)
		}
	}
	if c.Audit.Retention() != 365*24*time.Hour {
		t.Errorf("audit keep %v, want 365 days", c.Audit.Retention())
	}
	if c.Jobs[0].PasswordFile == "" || c.Jobs[1].PasswordEnv != "LATSCOPE_DB02_PASSWORD" {
		t.Errorf("password sources lost: %+v %+v", c.Jobs[0], c.Jobs[1])
	}
	day := 24 * time.Hour
	if want := []archive.Tier{{Keep: 7 * day}, {Step: time.Minute, Keep: 90 * day}}; !reflect.DeepEqual(c.Archive.Parsed, want) || c.Archive.MaxBytes != 20<<30 {
		t.Errorf("archive settings %+v", c.Archive)
	}
	if !c.OTLP.Enabled() || c.OTLP.Every != 10*time.Second || c.OTLP.HeadersFile == "" {
		t.Errorf("otlp settings %+v", c.OTLP)
	}
	if len(c.AuditWatches) != 1 || c.AuditWatches[0].Name != "orcl" || len(c.AuditWatches[0].Files) != 3 || c.AuditWatches[0].Line == 0 {
		t.Errorf("audit watches %+v", c.AuditWatches)
	}
	if c.Jobs[3].Keep != 3*day || c.Jobs[0].Keep != 0 {
		t.Errorf("retentions %s %s", c.Jobs[3].Keep, c.Jobs[0].Keep)
	}
}

func TestParseKeep(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 0, "7d": 7 * 24 * time.Hour, "36h": 36 * time.Hour, "1d12h": 36 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := ParseKeep(in); err != nil || got != want {
			t.Errorf("ParseKeep(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"d", "7", "-1d", "7days", "0d", "1d-1h", "x12h"} {
		if _, err := ParseKeep(in); err == nil {
			t.Errorf("ParseKeep(%q) accepted", in)
		}
	}
}

func TestErrorsNameFileAndLine(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"data: d\nlisten: [\n", "f.yaml:"},
		{"data: d\nlisen: x\n", "f.yaml:2: field lisen not found"},
		{"data: d\njobs:\n  - name: a\n    source: x\n  - name: a\n    source: y\n", "f.yaml:5: job \"a\" is already defined at line 3"},
		{"data: d\njobs:\n  - name: a\n    source: x\n    schedule: 30s\n", "f.yaml:3: job 1: \"a\": schedule"},
		{"data: d\njobs:\n  - name: a\n    source: x\n    interval: soon\n", "f.yaml:3: job 1: \"a\": interval"},
		{"data: d\njobs:\n  - source: x\n", "f.yaml:3: job 1: a job needs a name"},
		{"data: d\njobs:\n  - name: a\n", "f.yaml:3: job 1: \"a\" has no source"},
		{"jobs:\n  - name: a\n    source: x\n    password_file: f\n    password_env: E\n", "not both"},
		{"tls_cert: c\n", "tls_cert and tls_key go together"},
		{"audit:\n  keep: 10m\n", "f.yaml: audit: keep \"10m\": want a duration of at least 1h"},
		{"audit:\n  keep: forever\n", "f.yaml: audit: keep \"forever\""},
		{"audit:\n  kept: 1d\n", "f.yaml:2: field kept not found"},
		{"data: d\njobs:\n  - name: a\n    source: x\n    retention: soon\n", "f.yaml:3: job 1: \"a\": retention: keep \"soon\""},
		{"data: d\narchive:\n  tiers:\n    - resolution: 1s\n", "f.yaml:2: archive: tier 1: resolution \"1s\": the first tier is raw"},
		{"data: d\narchive:\n  tiers:\n    - resolution: raw\n    - resolution: 90s\n    - resolution: 2m\n", "f.yaml:2: archive: tier 3: step 2m0s must be"},
		{"data: d\narchive:\n  max_size: lots\n", "f.yaml:2: archive: max_size \"lots\""},
		{"data: d\narchive:\n  tiers:\n    - resolution: raw\n      keep: 1w\n", "f.yaml:2: archive: tier 1: keep \"1w\""},
		{"data: d\notlp:\n  endpoint: 127.0.0.1:4318\n", "f.yaml:2: otlp: endpoint \"127.0.0.1:4318\": want http://HOST:PORT"},
		{"data: d\notlp:\n  endpoint: http://c:4318\n  interval: 0s\n", "f.yaml:2: otlp: interval \"0s\""},
		{"data: d\notlp:\n  interval: 5s\n", "f.yaml:2: otlp: give endpoint"},
		{"data: d\naudit_watches:\n  - name: orcl\n", "f.yaml:3: audit watch 1: \"orcl\" has no files"},
		{"data: d\naudit_watches:\n  - name: orcl\n    files: [adump]\n", "f.yaml:3: audit watch 1: \"orcl\": file \"adump\": want an absolute path"},
		{"data: d\naudit_watches:\n  - name: a\n    files: [/x]\n  - name: a\n    files: [/y]\n", "f.yaml:5: audit watch \"a\" is already defined at line 3"},
		{"data: d\naudit_watches:\n  - files: [/x]\n", "f.yaml:3: audit watch 1: an audit watch needs a name"},
		{"data: d\naudit_watches:\n  - name: ../../etc/x\n    files: [/x]\n", "f.yaml:3: audit watch 1: audit watch name \"../../etc/x\": want letters"},
		{"", "empty configuration"},
	} {
		_, err := Parse("f.yaml", []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v; want it to contain %q", tc.yaml, err, tc.want)
		}
	}
}

func TestAuditKeep(t *testing.T) {
	for in, want := range map[string]time.Duration{"": DefaultAuditKeep, "keep: 90d": 90 * 24 * time.Hour, "keep: 7d12h": 180 * time.Hour} {
		c, err := Parse("f.yaml", []byte("data: d\naudit: {"+in+"}\n"))
		if err != nil || c.Audit.Retention() != want {
			t.Errorf("audit {%s}: %v, %v; want %v", in, c, err, want)
		}
	}
	if (&Config{}).Audit.Retention() != DefaultAuditKeep {
		t.Error("no configuration file: want the default retention")
	}
}

func FuzzParse(f *testing.F) {
	f.Add(docExample(f))
	f.Add([]byte("data: d\njobs:\n  - name: a\n    source: iotest:/tmp\n    schedule: 1s every 2s\n"))
	f.Add([]byte("jobs: 3\n"))
	f.Add([]byte("archive:\n  tiers:\n    - resolution: raw\n      keep: 1d12h\n    - resolution: 1m\n  max_size: 1.5G\n"))
	f.Add([]byte("- a\n- b\n"))
	f.Add([]byte("remote_write:\n  - url: http://p:9090/api/v1/write\n    native: false\n    max_spool: 10MB\n    max_age: 1d\n"))
	f.Add([]byte("remote_write:\n  - url: https://[::1]:9090/w\n    basic_auth: {username: u, password_file: /p}\n    shards: 2\n    batch: 1\n"))
	f.Add([]byte("remote_write: {url: x}\n"))
	f.Add([]byte("prometheus:\n  host: db01\n  max_events_per_job: -1\n  metric: x_seconds\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse("f.yaml", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		for _, j := range c.Jobs {
			if j.Name == "" || strings.TrimSpace(j.Source) == "" || j.Every <= 0 {
				t.Fatalf("accepted a job without name, source or interval: %+v", j)
			}
		}
	})
}

func TestDocumentedRemoteWrite(t *testing.T) {
	c, err := Parse("latscope.yaml", docExample(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.RemoteWrite) != 2 {
		t.Fatalf("remote_write %+v", c.RemoteWrite)
	}
	prom, vm := c.RemoteWrite[0], c.RemoteWrite[1]
	if prom.Name != "prom" || !prom.IsNative || prom.SpoolBytes != 1<<30 || prom.SpoolAge != 2*time.Hour || prom.Shards != 4 ||
		prom.Batch != 2000 || prom.TLS.CAFile == "" || prom.Line == 0 {
		t.Errorf("prom %+v", prom)
	}
	if vm.Name != "victoria-8428" || vm.IsNative || vm.SpoolBytes != 1<<30 || vm.SpoolAge != DefaultRemoteWriteAge {
		t.Errorf("victoria %+v", vm)
	}
}

func TestRemoteWriteErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"remote_write:\n  - url: prometheus:9090\n", `f.yaml:2: remote_write 1: url "prometheus:9090": want http(s)://`},
		{"remote_write:\n  - url: http://u:pw@p:9090/w\n", "f.yaml:2: remote_write 1: url: no credentials in the URL"},
		{"remote_write:\n  - url: http://p/w\n  - url: http://p/w2\n", `f.yaml:3: remote_write "p" is already defined at line 2`},
		{"remote_write:\n  - url: http://p/w\n    name: ../etc\n", `f.yaml:2: remote_write 1: name "../etc"`},
		{"remote_write:\n  - url: http://p/w\n    max_spool: big\n", `max_spool "big"`},
		{"remote_write:\n  - url: http://p/w\n    max_age: soon\n", `max_age: keep "soon"`},
		{"remote_write:\n  - url: http://p/w\n    shards: -1\n", "shards -1"},
		{"remote_write:\n  - url: http://p/w\n    basic_auth: {username: u}\n", "basic_auth needs username and password_file"},
		{"remote_write:\n  - url: http://p/w\n    bearer_token_file: t\n    basic_auth: {username: u, password_file: p}\n", "not both"},
		{"remote_write:\n  - url: http://p/w\n    tls: {cert_file: c}\n", "cert_file and key_file go together"},
		{"remote_write:\n  - url: http://p/w\n    nativ: false\n", "f.yaml:3: field nativ not found"},
	} {
		_, err := Parse("f.yaml", []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v; want it to contain %q", tc.yaml, err, tc.want)
		}
	}
}
