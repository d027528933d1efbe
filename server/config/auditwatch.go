package config

import (
	"fmt"
	"path/filepath"
	"strings"
)

// AuditWatch follows Oracle audit files, Linux audit logs and login logs
// and keeps the chains `latscope audit` finds (who started or stopped a
// database, from which login): `latscope audit FILES --follow` run by the
// server.
type AuditWatch struct {
	Name string `yaml:"name"`
	// Files are files, directories (Oracle's adump: new .aud files are
	// picked up) or globs, absolute.
	Files []string `yaml:"files"`
	// DB keeps only this database's subjects (instance name or DBID).
	DB string `yaml:"db"`
	// Year of login logs' classic syslog stamps (0: from the files'
	// modification times).
	Year int `yaml:"year"`

	// Line is where the watch is defined, for errors.
	Line int `yaml:"-"`
}

// checkAuditWatches validates the audit_watches block.
func checkAuditWatches(name string, ws []AuditWatch, lines []int) error {
	seen := map[string]int{}
	for i := range ws {
		w := &ws[i]
		if i < len(lines) {
			w.Line = lines[i]
		}
		if err := w.check(); err != nil {
			return fmt.Errorf("%s:%d: audit watch %d: %w", name, w.Line, i+1, err)
		}
		if first, dup := seen[w.Name]; dup {
			return fmt.Errorf("%s:%d: audit watch %q is already defined at line %d", name, w.Line, w.Name, first)
		}
		seen[w.Name] = w.Line
	}
	return nil
}

func (w *AuditWatch) check() error {
	if err := CheckAuditWatchName(w.Name); err != nil {
		return err
	}
	if len(w.Files) == 0 {
		return fmt.Errorf("%q has no files: give the Oracle audit directory, the audit.log and the login log", w.Name)
	}
	for _, f := range w.Files {
		if strings.TrimSpace(f) == "" || !filepath.IsAbs(f) {
			return fmt.Errorf("%q: file %q: want an absolute path (a file, a directory or a glob)", w.Name, f)
		}
		if _, err := filepath.Match(f, ""); err != nil {
			return fmt.Errorf("%q: file %q: %w", w.Name, f, err)
		}
	}
	if w.Year < 0 {
		return fmt.Errorf("%q: year must not be negative", w.Name)
	}
	return nil
}

// CheckAuditWatchName: a watch's name names its file DATA/auditwatch/NAME.jsonl
// and its URL, so it is letters, digits, '.', '_' and '-', not starting
// with '.', at most 64 bytes.
func CheckAuditWatchName(name string) error {
	if name == "" {
		return fmt.Errorf("an audit watch needs a name")
	}
	ok := len(name) <= 64 && name[0] != '.'
	for _, r := range name {
		ok = ok && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
	}
	if !ok {
		return fmt.Errorf("audit watch name %q: want letters, digits, '.', '_' or '-' (not first '.'), at most 64: it names a file", name)
	}
	return nil
}
