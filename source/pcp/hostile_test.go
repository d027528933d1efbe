package pcp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
)

// copyArchive copies a committed archive into a temporary directory, to
// be damaged there.
func copyArchive(t *testing.T, name string) string {
	t.Helper()
	src := archiveBase(t, name)
	dir := t.TempDir()
	paths, _ := filepath.Glob(src + ".*")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, name)
}

// readDamaged reads an archive with diagnostics printed to a buffer.
func readDamaged(t *testing.T, base string) (windows, gaps int, report string) {
	t.Helper()
	var out bytes.Buffer
	ivs := readAll(t, base, readOptions{diag: input.NewDiagnostics(&out, 100)})
	for _, iv := range ivs {
		if iv.Gap {
			gaps++
		} else {
			windows++
		}
	}
	return windows, gaps, out.String()
}

// TestTruncatedVolume: a volume cut inside a record is reported with its
// file and the record's offset; the records before it are kept, and the
// next volume is read after a gap.
func TestTruncatedVolume(t *testing.T) {
	base := copyArchive(t, "host-v3")
	vol := base + ".1"
	st, err := os.Stat(vol)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(vol, st.Size()/2); err != nil {
		t.Fatal(err)
	}
	windows, gaps, report := readDamaged(t, base)
	if !regexp.MustCompile(`host-v3\.1: offset \d+: truncated record`).MatchString(report) {
		t.Errorf("no report naming the file and offset:\n%s", report)
	}
	// 59 windows whole; half of volume 1's 20 records lost, and the
	// first record after the break starts no window.
	if gaps != 1 || windows < 45 || windows > 50 {
		t.Errorf("%d windows and %d gaps after truncating volume 1 in half:\n%s", windows, gaps, report)
	}
}

// TestCorruptedRecordLength: a record whose length and trailer disagree
// ends its volume at that offset, with what came before kept.
func TestCorruptedRecordLength(t *testing.T) {
	base := copyArchive(t, "host-v2")
	vol := base + ".0"
	data, err := os.ReadFile(vol)
	if err != nil {
		t.Fatal(err)
	}
	off := recordOffset(t, data, 30)
	binary.BigEndian.PutUint32(data[off:], binary.BigEndian.Uint32(data[off:])+4)
	if err := os.WriteFile(vol, data, 0o644); err != nil {
		t.Fatal(err)
	}
	windows, _, report := readDamaged(t, base)
	if want := fmt.Sprintf("host-v2.0: offset %d: record length", off); !strings.Contains(report, want) {
		t.Errorf("report %q lacks %q", report, want)
	}
	// Records 0 (pmcd's prologue) to 29 read: 28 windows.
	if windows != 28 {
		t.Errorf("%d windows before the bad record 30, want 28", windows)
	}
}

// recordOffset returns the byte offset of a volume's record n (0: the
// first after the label).
func recordOffset(t *testing.T, data []byte, n int) int {
	t.Helper()
	off := int(binary.BigEndian.Uint32(data))
	for i := 0; i < n; i++ {
		off += int(binary.BigEndian.Uint32(data[off:]))
	}
	return off
}

// TestTruncatedMeta: metadata cut short keeps the descriptions read
// before the cut (fewer series), and says where.
func TestTruncatedMeta(t *testing.T) {
	base := copyArchive(t, "host-v3")
	if err := os.Truncate(base+".meta", 4000); err != nil {
		t.Fatal(err)
	}
	windows, _, report := readDamaged(t, base)
	if !regexp.MustCompile(`host-v3\.meta: offset \d+: truncated record`).MatchString(report) {
		t.Errorf("no report naming the metadata file and offset:\n%s", report)
	}
	if windows == 0 {
		t.Errorf("nothing read with the metadata before the cut")
	}
}

// TestNotAnArchive: a label that is not PCP's is an error naming the file.
func TestNotAnArchive(t *testing.T) {
	base := copyArchive(t, "host-v2")
	if err := os.WriteFile(base+".0", []byte("not a volume at all, just text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, report := readDamaged(t, base)
	if !strings.Contains(report, "host-v2.0: offset 0") {
		t.Errorf("report %q does not name the bad volume", report)
	}
}

// FuzzRead feeds any bytes to the record decoders: framing, metadata
// records, and pmResult records against the real archive's metadata in
// both versions. No panic, no runaway allocation; errors are values.
func FuzzRead(f *testing.F) {
	meta := realMeta(f)
	for _, name := range []string{"host-v2.0", "host-v3.1", "host-v3.meta", "host-v2.meta"} {
		data, err := os.ReadFile(archiveBase(f, strings.Split(name, ".")[0]) + "." + strings.Split(name, ".")[1])
		if err != nil {
			f.Fatal(err)
		}
		lab := int(binary.BigEndian.Uint32(data))
		f.Add(data[lab:min(len(data), lab+6000)])
		f.Add(data[:min(len(data), 1200)])
	}
	// Synthetic: counters in situ and in value blocks, a mark, a delta
	// instance domain, a value block pointing outside its record.
	t0 := time.Unix(1_800_000_000, 0)
	var synth []byte
	for _, r := range append(diskMeta(3, t0), sample(3, t0, 1, 2, 3), result(3, t0),
		indomRecord(3, typeIndomDelta, t0, indomDisk, []int32{1, 0}, []string{"vdb", ""})) {
		synth = append(synth, r...)
	}
	f.Add(synth)
	bad := sample(2, t0, 1, 2, 3)
	binary.BigEndian.PutUint32(bad[len(bad)-52:], 0xffff)
	f.Add(bad)
	f.Fuzz(func(t *testing.T, data []byte) {
		rr := &recordReader{name: "fuzz", r: newBufReader(data)}
		m := newMeta(Label{Version: 3})
		for i := 0; i < 100; i++ {
			rec, _, err := rr.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				var fe *FormatError
				if !asFormatError(err, &fe) {
					t.Fatalf("error of type %T: %v", err, err)
				}
				break
			}
			_ = m.add(rec)
			_, _ = decodeLabel(rec)
			for _, version := range []int{2, 3} {
				r, err := decodeResult(rec, version, meta)
				if err == nil && len(r.Sets) > len(rec)/12 {
					t.Fatalf("%d sets from %d bytes", len(r.Sets), len(rec))
				}
			}
		}
	})
}

// TestStaleIndex: an index whose offsets point into the middle of
// records costs nothing: the volume is read from its start.
func TestStaleIndex(t *testing.T) {
	base := copyArchive(t, "host-v3")
	data, err := os.ReadFile(base + ".index")
	if err != nil {
		t.Fatal(err)
	}
	for off := labelLenV3; off+32 <= len(data); off += 32 {
		vol := binary.BigEndian.Uint64(data[off+24:])
		binary.BigEndian.PutUint64(data[off+24:], vol+6)
	}
	if err := os.WriteFile(base+".index", data, 0o644); err != nil {
		t.Fatal(err)
	}
	all := readAll(t, archiveBase(t, "host-v3"), readOptions{})
	from, to := all[25].Start, all[45].Start
	var out bytes.Buffer
	got := readAll(t, base, readOptions{from: from, to: to, diag: input.NewDiagnostics(&out, 10)})
	if len(got) != 20 || !got[0].Start.Equal(from) || out.Len() > 0 {
		t.Errorf("with a stale index: %d windows from %s, want 20 from %s\n%s", len(got), got[0].Start, from, out.String())
	}
}
