package host

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/latscope/latscope/input"
)

// procFile is one /proc file read again every sample through the same
// descriptor (a seq_file regenerates at offset 0) into the same buffer.
type procFile struct {
	path string
	f    *os.File
	buf  []byte
}

// read returns the file's current contents (valid until the next read).
func (p *procFile) read() ([]byte, error) {
	if p.f == nil {
		f, err := os.Open(p.path)
		if err != nil {
			return nil, err
		}
		p.f = f
	}
	if p.buf == nil {
		p.buf = make([]byte, 0, 8192)
	}
	b := p.buf[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := p.f.ReadAt(b[len(b):cap(b)], int64(len(b)))
		b = b[:len(b)+n]
		if errors.Is(err, io.EOF) || (err == nil && n == 0) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p.path, err)
		}
	}
	p.buf = b
	return b, nil
}

func (p *procFile) close() {
	if p.f != nil {
		p.f.Close()
		p.f = nil
	}
}

// sampler reads the files of the enabled groups into snapshots.
type sampler struct {
	groups                                 groups
	stat, disks, nets, snmp, mem, vm, load procFile
	psi                                    [len(psiResources)]procFile
	sysBlock, sysNet                       string
	whole                                  map[string]bool // device name → has a /sys/block entry
	links                                  map[string]link // interface → its speed, read once
	// report receives the lines a parser skipped and the files that
	// could not be read.
	report func(file string, line int, reason string)
}

// newSampler reads under procDir and sysDir (/proc and /sys, or captures
// of them in tests).
func newSampler(procDir, sysDir string, g groups, report func(file string, line int, reason string)) *sampler {
	p := func(rel string) procFile { return procFile{path: filepath.Join(procDir, rel)} }
	s := &sampler{groups: g, stat: p("stat"), disks: p("diskstats"), nets: p("net/dev"), snmp: p("net/snmp"),
		mem: p("meminfo"), vm: p("vmstat"), load: p("loadavg"), sysBlock: filepath.Join(sysDir, "block"),
		sysNet: filepath.Join(sysDir, "class", "net"), whole: map[string]bool{}, links: map[string]link{}, report: report}
	for i, r := range psiResources {
		s.psi[i] = p(filepath.Join("pressure", r))
	}
	return s
}

func (s *sampler) close() {
	for _, f := range []*procFile{&s.stat, &s.disks, &s.nets, &s.snmp, &s.mem, &s.vm, &s.load} {
		f.close()
	}
	for i := range s.psi {
		s.psi[i].close()
	}
}

// sample reads every file the groups need into snap. A file that cannot
// be read leaves its part out of this window (reported).
func (s *sampler) sample(snap *snapshot) {
	g := s.groups
	snap.haveStat = (g.cpu || g.load) && s.parse(&s.stat, func(b []byte) []problem { return parseStat(b, &snap.stat) })
	snap.haveDisks = g.disk && s.parse(&s.disks, func(b []byte) (p []problem) { snap.disks, p = parseDiskstats(b, snap.disks); return p })
	snap.haveNets = g.net && s.parse(&s.nets, func(b []byte) (p []problem) { snap.nets, p = parseNetDev(b, snap.nets); return p })
	snap.haveRetrans = g.net && s.parse(&s.snmp, func(b []byte) []problem {
		v, ok, p := parseRetransSegs(b)
		snap.retrans = v
		if !ok && p == nil {
			p = []problem{{0, "no Tcp: lines"}}
		}
		return p
	})
	snap.haveMem = g.mem && s.parse(&s.mem, func(b []byte) []problem { return parseMeminfo(b, &snap.mem) })
	snap.haveVM = g.mem && s.parse(&s.vm, func(b []byte) []problem { return parseVmstat(b, &snap.vm) })
	snap.haveLoad = g.load && s.parse(&s.load, func(b []byte) []problem { return parseLoadavg(b, &snap.load) })
	for i := range s.psi {
		snap.havePSI[i] = g.psi && s.parse(&s.psi[i], func(b []byte) []problem { return parsePressure(b, &snap.psi[i]) })
	}
}

// parse reads f and parses it, reporting what was skipped; false when the
// file could not be read or nothing of it could be parsed.
func (s *sampler) parse(f *procFile, parse func([]byte) []problem) bool {
	b, err := f.read()
	if err != nil {
		s.report(f.path, 0, err.Error())
		return false
	}
	probs := parse(b)
	for _, p := range probs {
		s.report(f.path, p.line, p.reason)
	}
	return len(probs) == 0 || len(b) > 0 && !allBad(b, probs)
}

// allBad reports whether every non-blank line of b was skipped.
func allBad(b []byte, probs []problem) bool {
	n := 0
	lines(b, func(_ int, line []byte) {
		if len(strings.TrimSpace(string(line))) > 0 {
			n++
		}
	})
	return len(probs) >= n
}

// listDisk says whether iostat lists the device by default: it has a
// /sys/block entry (a whole disk, not a partition). Kernels write "/" in
// device names as "!" there (cciss/c0d0).
func (s *sampler) listDisk(name string) bool {
	whole, ok := s.whole[name]
	if !ok {
		_, err := os.Stat(filepath.Join(s.sysBlock, strings.ReplaceAll(name, "/", "!")))
		whole = err == nil
		s.whole[name] = whole
	}
	return whole
}

// link is an interface's speed and duplex as /sys/class/net says them.
type link struct {
	mbps       float64
	fullDuplex bool
	ok         bool
}

// linkSpeed reads /sys/class/net/NAME/speed and duplex the first time an
// interface is seen (reading speed fails for lo and most virtual
// interfaces, and says -1 for a link that is down: unknown).
func (s *sampler) linkSpeed(name string) (float64, bool, bool) {
	l, seen := s.links[name]
	if !seen {
		l = readLink(filepath.Join(s.sysNet, name))
		s.links[name] = l
	}
	return l.mbps, l.fullDuplex, l.ok
}

func readLink(dir string) link {
	speed, err := os.ReadFile(filepath.Join(dir, "speed"))
	if err != nil {
		return link{}
	}
	mbps, ok := input.ParseUint(bytes.TrimSpace(speed))
	if !ok || mbps == 0 {
		return link{}
	}
	duplex, _ := os.ReadFile(filepath.Join(dir, "duplex"))
	return link{mbps: float64(mbps), fullDuplex: string(bytes.TrimSpace(duplex)) == "full", ok: true}
}

// forget drops the link speeds of interfaces that are gone, so that one
// that comes back (perhaps at another speed) is read again.
func (s *sampler) forget(snap *snapshot) {
	if len(s.links) <= len(snap.nets) {
		return
	}
	for name := range s.links {
		if !slices.ContainsFunc(snap.nets, func(c ifCounters) bool { return c.name == name }) {
			delete(s.links, name)
		}
	}
}
