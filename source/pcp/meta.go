package pcp

import (
	"fmt"
	"sort"
	"time"
)

// Desc is a metric's description (pmDesc) with its names.
type Desc struct {
	PMID  uint32
	Type  int32
	Indom uint32
	Sem   int32
	Units Units
	Names []string
}

// Units are a metric's dimensions and scales (the bit-packed pmUnits).
type Units struct {
	DimSpace, DimTime, DimCount       int
	ScaleSpace, ScaleTime, ScaleCount int
}

// unpackUnits decodes pmUnits as a big-endian word: dimSpace, dimTime,
// dimCount, scaleSpace, scaleTime, scaleCount in 4-bit fields from the
// top, 8 bits of padding.
func unpackUnits(w uint32) Units {
	signed := func(v uint32) int { return int(int8(uint8(v&0xf)<<4) >> 4) }
	return Units{
		DimSpace:   signed(w >> 28),
		DimTime:    signed(w >> 24),
		DimCount:   signed(w >> 20),
		ScaleSpace: int(w >> 16 & 0xf),
		ScaleTime:  int(w >> 12 & 0xf),
		ScaleCount: signed(w >> 8),
	}
}

// timeScale is the length of one unit of PM_TIME_NSEC ... PM_TIME_HOUR.
var timeScale = [...]time.Duration{time.Nanosecond, time.Microsecond, time.Millisecond, time.Second, time.Minute, time.Hour}

// Seconds returns how many seconds one unit of a time metric is (0 when
// the metric is not a time or its scale is unknown).
func (u Units) Seconds() float64 {
	if u.DimTime != 1 || u.DimSpace != 0 || u.DimCount != 0 || u.ScaleTime >= len(timeScale) {
		return 0
	}
	return timeScale[u.ScaleTime].Seconds()
}

// KB returns how many kibibytes one unit of a space metric is (0 when the
// metric is not a size).
func (u Units) KB() float64 {
	if u.DimSpace != 1 || u.DimTime != 0 || u.DimCount != 0 || u.ScaleSpace > 8 {
		return 0
	}
	kb := 1.0 / 1024
	for i := 0; i < u.ScaleSpace; i++ {
		kb *= 1024
	}
	return kb
}

// indomObs is one observation of an instance domain: its instances from
// a time on.
type indomObs struct {
	at    time.Time
	names map[int32]string
}

// Meta is an archive's metadata: descriptions by PMID and by name, and
// every observation of every instance domain.
type Meta struct {
	Label  Label
	descs  map[uint32]*Desc
	byName map[string]*Desc
	indoms map[uint32][]indomObs
}

func newMeta(l Label) *Meta {
	return &Meta{Label: l, descs: map[uint32]*Desc{}, byName: map[string]*Desc{}, indoms: map[uint32][]indomObs{}}
}

// Desc returns a metric's description by PMID.
func (m *Meta) Desc(pmid uint32) (*Desc, bool) {
	d, ok := m.descs[pmid]
	return d, ok
}

// Lookup returns a metric's description by name.
func (m *Meta) Lookup(name string) (*Desc, bool) {
	d, ok := m.byName[name]
	return d, ok
}

// InstName returns an instance's external name at time at: from the
// domain's latest observation not after at (else its first), or the
// instance number when no observation names it.
func (m *Meta) InstName(indom uint32, inst int32, at time.Time) string {
	obs := m.indoms[indom]
	i := sort.Search(len(obs), func(i int) bool { return obs[i].at.After(at) }) - 1
	if i < 0 {
		i = 0
	}
	if i < len(obs) {
		if name, ok := obs[i].names[inst]; ok {
			return name
		}
	}
	return fmt.Sprint(inst)
}

// add decodes one .meta record (the payload after the length word).
// Labels and help text carry nothing latscope maps, and are skipped.
func (m *Meta) add(rec []byte) error {
	d := &decoder{b: rec}
	switch tag := d.u32(); tag {
	case typeDesc:
		return m.addDesc(d)
	case typeIndomV2, typeIndom, typeIndomDelta:
		return m.addIndom(d, tag)
	case typeLabelV2, typeLabel, typeText:
		return nil
	default:
		return fmt.Errorf("unknown metadata record type %d", tag)
	}
}

func (m *Meta) addDesc(d *decoder) error {
	desc := &Desc{PMID: d.u32(), Type: d.i32(), Indom: d.u32(), Sem: d.i32(), Units: unpackUnits(d.u32())}
	n := d.u32()
	if d.err == nil && int(n) > len(d.b)/4 {
		return fmt.Errorf("metric description: %d names cannot fit in %d bytes", n, len(d.b))
	}
	for i := 0; i < int(n) && d.err == nil; i++ {
		size := d.u32()
		if size > uint32(len(d.b)) {
			return fmt.Errorf("metric description: name of %d bytes overruns the record", size)
		}
		desc.Names = append(desc.Names, string(d.bytes(int(size))))
	}
	if d.err != nil {
		return fmt.Errorf("metric description: %w", d.err)
	}
	m.descs[desc.PMID] = desc
	for _, name := range desc.Names {
		m.byName[name] = desc
	}
	return nil
}

// addIndom decodes a full (v2, v3) or delta (v3) instance domain: n
// instance numbers, n string-table offsets (-1: deleted, deltas only),
// then the NUL-terminated names.
func (m *Meta) addIndom(d *decoder, tag uint32) error {
	version := 3
	if tag == typeIndomV2 {
		version = 2
	}
	at := d.stamp(version)
	indom, n := d.u32(), d.u32()
	if d.err == nil && uint64(n)*8 > uint64(len(d.b)-d.pos) {
		return fmt.Errorf("instance domain %s: %d instances cannot fit in %d bytes", indomString(indom), n, len(d.b))
	}
	insts := make([]int32, n)
	for i := range insts {
		insts[i] = d.i32()
	}
	offs := make([]int32, n)
	for i := range offs {
		offs[i] = d.i32()
	}
	if d.err != nil {
		return fmt.Errorf("instance domain %s: %w", indomString(indom), d.err)
	}
	strtab := d.b[d.pos:]
	names := map[int32]string{}
	prev := m.indoms[indom]
	if tag == typeIndomDelta {
		if len(prev) == 0 {
			return fmt.Errorf("instance domain %s: a delta record before any full one", indomString(indom))
		}
		for k, v := range prev[len(prev)-1].names {
			names[k] = v
		}
	}
	for i, inst := range insts {
		off := offs[i]
		switch {
		case off == -1 && tag == typeIndomDelta:
			delete(names, inst)
		case off < 0 || int(off) >= len(strtab):
			return fmt.Errorf("instance domain %s: name offset %d outside the %d-byte string table", indomString(indom), off, len(strtab))
		default:
			names[inst] = cString(strtab[off:])
		}
	}
	obs := indomObs{at: at, names: names}
	// Records are in time order in pmlogger's archives; insert in order
	// anyway, so that a merged archive looks instances up correctly.
	i := sort.Search(len(prev), func(i int) bool { return prev[i].at.After(at) })
	prev = append(prev, indomObs{})
	copy(prev[i+1:], prev[i:])
	prev[i] = obs
	m.indoms[indom] = prev
	return nil
}

// pmidString and indomString print identifiers as PCP's tools do
// (domain.cluster.item, domain.serial).
func pmidString(p uint32) string {
	return fmt.Sprintf("%d.%d.%d", p>>22&0x1ff, p>>10&0xfff, p&0x3ff)
}

func indomString(i uint32) string {
	if i == 0xffffffff {
		return "PM_INDOM_NULL"
	}
	return fmt.Sprintf("%d.%d", i>>22&0x1ff, i&0x3fffff)
}
