package testenv

import (
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// sharedOnly lists the real test data that is not in the repository because
// its licence does not allow redistribution (testdata/README.md, "Not copied
// here"): tests that need it read the workplace's shared copy and skip
// without it, also when integration components are required.
var sharedOnly = map[string]string{
	"trc10046/apress-top1e_10.2.0.3_11.1.0.6/":       "Antognini's freeware licence does not allow redistribution",
	"audit/linux-audit/linux-audit-audit-userspace/": "audit-userspace's test logs are GPL-2.0/LGPL-2.1, not redistributable under Apache-2.0",
	"audit/linux-audit/threathunters-io-laurel/":     "laurel's test data is GPL-3.0, not redistributable under Apache-2.0",
	"audit/oracle-aud/elastic-beats/":                "Elastic License (x-pack) fixtures: not redistributable under Apache-2.0",
	"audit/oracle-aud/elastic-integrations/":         "Elastic License 2.0: not redistributable under Apache-2.0",
	"audit/oracle-aud/ddkk-page_11.2.0.4/":           "copied from a tutorial page that states no licence",
	"audit/auth-log/logpai-loghub/":                  "loghub's data is licensed for research and academic use only",
}

// DataDir returns the repository's real test data directory (testdata/ at
// the module root).
func DataDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(RepoRoot(t), "testdata")
}

// DataFile returns the path of a real test file, e.g.
// DataFile(t, "pylatencymap/example_latency_data.txt"): the repository's
// copy (a gzip-stored one is unpacked into a temporary directory), or, for
// files whose licence keeps them out of the repository, the shared copy;
// the test skips when that is absent and fails for a file that should be in
// the repository but is not.
func DataFile(t testing.TB, rel string) string {
	t.Helper()
	rel = filepath.ToSlash(rel)
	if why, ok := sharedOnlyReason(rel); ok {
		return sharedFile(t, rel, why)
	}
	p := filepath.Join(DataDir(t), filepath.FromSlash(rel))
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if _, err := os.Stat(p + ".gz"); err == nil {
		return gunzipped(t, p+".gz")
	}
	t.Fatalf("real test file %s is not in the repository's testdata/", rel)
	return ""
}

// DataFiles returns the real test files matching a glob relative to the
// data directory (e.g. "trc10046/*/*.trc"), as names DataFile accepts:
// those of the repository (gzip-stored ones under their unpacked names) and,
// when the shared data is present, the shared-only ones.
func DataFiles(t testing.TB, pattern string) []string {
	t.Helper()
	seen := map[string]bool{}
	add := func(dir, suffix string) {
		paths, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(pattern)+suffix))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			rel, _ := filepath.Rel(dir, p)
			rel = strings.TrimSuffix(filepath.ToSlash(rel), suffix)
			if _, only := sharedOnlyReason(rel); only == (dir != DataDir(t)) {
				seen[rel] = true
			}
		}
	}
	add(DataDir(t), "")
	add(DataDir(t), ".gz")
	if dir, ok := sharedDir(); ok {
		add(dir, "")
	}
	rels := make([]string, 0, len(seen))
	for rel := range seen {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	return rels
}

// WalkData calls fn with the path of every real test file: the
// repository's (gzip-stored ones unpacked; not README.md and LICENSES/) and
// the shared-only ones when the shared data is present.
func WalkData(t testing.TB, fn func(path string)) {
	t.Helper()
	var rels []string
	collect := func(dir string, shared bool) {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			rel = filepath.ToSlash(rel)
			switch {
			case d.IsDir() && rel == "LICENSES":
				return filepath.SkipDir
			case d.IsDir() || rel == "README.md":
				return nil
			}
			if _, only := sharedOnlyReason(rel); only == shared {
				rels = append(rels, strings.TrimSuffix(rel, ".gz"))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	collect(DataDir(t), false)
	if dir, ok := sharedDir(); ok {
		collect(dir, true)
	}
	for _, rel := range rels {
		fn(DataFile(t, rel))
	}
}

func sharedOnlyReason(rel string) (string, bool) {
	for prefix, why := range sharedOnly {
		if strings.HasPrefix(rel, prefix) {
			return why, true
		}
	}
	return "", false
}

// sharedDir returns the workplace's shared test data: $LATSCOPE_TESTDATA,
// else ../shared/testdata beside the repository.
func sharedDir() (string, bool) {
	dir := os.Getenv("LATSCOPE_TESTDATA")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", false
		}
		root, ok := findRoot(wd)
		if !ok {
			return "", false
		}
		dir = filepath.Join(root, "..", "shared", "testdata")
	}
	if _, err := os.Stat(dir); err != nil {
		return "", false
	}
	return dir, true
}

func sharedFile(t testing.TB, rel, why string) string {
	t.Helper()
	dir, ok := sharedDir()
	if !ok {
		t.Skipf("needs shared test data that is not in the repository (%s) and absent here (../shared/testdata or $LATSCOPE_TESTDATA) — %s", why, rel)
	}
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		t.Skipf("needs a real test file the shared test data at %s lacks — %s", dir, rel)
	}
	return p
}

// gunzipped unpacks a gzip-stored test file into the test's temporary
// directory under its original name.
func gunzipped(t testing.TB, gz string) string {
	t.Helper()
	in, err := os.Open(gz)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		t.Fatalf("%s: %v", gz, err)
	}
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(gz), ".gz"))
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, zr); err != nil {
		t.Fatalf("%s: %v", gz, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}
