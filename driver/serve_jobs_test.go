package driver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A job created through the API may read a known scheme or an existing
// file named by its absolute path; the check opens no connection.
func TestCheckAPISource(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "app.log")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{file, "iotest:" + dir, "nettest:127.0.0.1:1", "postgres://latscope@127.0.0.1:1/app", "mysql://u@h:3306/", "oracle://u@h/svc", "host:", "host:disk,cpu"} {
		if err := checkAPISource(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for bad, want := range map[string]string{
		"gopher://h/x":                `unknown scheme "gopher"`,
		"file:///etc/passwd":          `unknown scheme "file"`,
		"app.log":                     "absolute path",
		"-":                           "absolute path",
		"../../etc/passwd":            "absolute path",
		filepath.Join(dir, "missing"): "no such file",
		dir:                           "is a directory",
		"":                            "absolute path",
		"1abc:x":                      "absolute path",
	} {
		err := checkAPISource(bad)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want an error saying %q", bad, err, want)
		}
	}
}
