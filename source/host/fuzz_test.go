package host

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// parsers are every /proc parser, by the file it reads, for the fuzz
// target: each returns how many entries it kept and its problems.
var parsers = []struct {
	file  string
	parse func([]byte) (int, []problem)
}{
	{"stat", func(b []byte) (int, []problem) { var s statSnap; p := parseStat(b, &s); return len(s.cpus), p }},
	{"diskstats", func(b []byte) (int, []problem) { d, p := parseDiskstats(b, nil); return len(d), p }},
	{"net/dev", func(b []byte) (int, []problem) { d, p := parseNetDev(b, nil); return len(d), p }},
	{"net/snmp", func(b []byte) (int, []problem) { _, ok, p := parseRetransSegs(b); return boolInt(ok), p }},
	{"meminfo", func(b []byte) (int, []problem) { var m memSnap; return 0, parseMeminfo(b, &m) }},
	{"vmstat", func(b []byte) (int, []problem) { var v vmSnap; return 0, parseVmstat(b, &v) }},
	{"pressure/io", func(b []byte) (int, []problem) { var s psiTotals; return 0, parsePressure(b, &s) }},
	{"loadavg", func(b []byte) (int, []problem) { var l loadSnap; return 0, parseLoadavg(b, &l) }},
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// FuzzParsers feeds every parser damaged /proc files: none may panic, each
// problem names a line of the input, no parser keeps more entries than
// the input has lines, and two snapshots of anything give no negative
// figure. Seeds: the real captures, each file given to its own parser
// (which) and to the others.
func FuzzParsers(f *testing.F) {
	dir := captureDir(f)
	for i, p := range parsers {
		for _, at := range []string{"t0", "t1"} {
			b, err := os.ReadFile(filepath.Join(dir, at, "proc", p.file))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(i), b)
		}
	}
	f.Add(uint8(1), []byte("   8 0 sda 1 2 3\n   8 0 sda 18446744073709551615 0 0 0 0 0 0 0 0 0 0\n"))
	f.Add(uint8(2), []byte("h\nh\n eth0:1 2 3\n:\n"))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		p := parsers[int(which)%len(parsers)]
		n, probs := p.parse(data)
		lineCount := bytes.Count(data, []byte{'\n'}) + 1
		for _, pr := range probs {
			if pr.line < 1 || pr.line > lineCount {
				t.Fatalf("%s: problem at line %d of %d: %s", p.file, pr.line, lineCount, pr.reason)
			}
		}
		if n > lineCount {
			t.Fatalf("%s: %d entries from %d lines", p.file, n, lineCount)
		}
		var a, b snapshot
		a.haveStat, a.haveDisks, a.haveNets, a.haveMem, a.haveVM, a.haveLoad = true, true, true, true, true, true
		b = a
		parseStat(data, &a.stat)
		a.disks, _ = parseDiskstats(data, nil)
		a.nets, _ = parseNetDev(data, nil)
		b.disks, _ = parseDiskstats(bytes.ReplaceAll(data, []byte("1"), []byte("9")), nil)
		b.nets, _ = parseNetDev(bytes.ReplaceAll(data, []byte("1"), []byte("9")), nil)
		parseStat(bytes.ReplaceAll(data, []byte("1"), []byte("9")), &b.stat)
		for _, m := range means(&a, &b, time.Second, all, nil, nil) {
			if !(m.Sum >= 0 && m.Count >= 0) {
				t.Fatalf("%s: %v/%v", m.Key, m.Sum, m.Count)
			}
		}
	})
}
