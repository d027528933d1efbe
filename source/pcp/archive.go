package pcp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Archive is an opened pmlogger archive: BASE.meta, BASE.index and the
// data volumes BASE.0, BASE.1, ...
type Archive struct {
	Base    string
	Meta    *Meta
	volumes []volume
	index   []indexEntry
	// Problems are the malformed parts met so far (metadata, index):
	// reading goes on with what was readable.
	Problems []error
}

type volume struct {
	n    int
	path string
}

// indexEntry is one entry of the temporal index: from At on, data is in
// volume Vol at byte offset Off.
type indexEntry struct {
	At  time.Time
	Vol int
	Off int64
}

// BaseName returns the archive base name of a path naming an archive: the
// base itself or any of its files (BASE.meta, BASE.index, BASE.N).
func BaseName(path string) (string, bool) {
	if ext := filepath.Ext(path); ext != "" {
		suffix := ext[1:]
		if suffix == "meta" || suffix == "index" || allDigits(suffix) {
			base := strings.TrimSuffix(path, ext)
			if isMeta(base + ".meta") {
				return base, true
			}
		}
	}
	if isMeta(path + ".meta") {
		return path, true
	}
	return "", false
}

// isMeta reports whether a file starts with an archive label.
func isMeta(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [8]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return false
	}
	return versionOf(head[:]) != 0
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Open opens the archive a path names and reads its metadata and index.
// Malformed metadata or index records end that file's reading and are kept
// in Problems; an unreadable label is an error.
func Open(path string) (*Archive, error) {
	base, ok := BaseName(path)
	if !ok {
		return nil, fmt.Errorf("%s: %w", path, ErrNotArchive)
	}
	a := &Archive{Base: base}
	if err := a.readMeta(); err != nil {
		return nil, err
	}
	if err := a.findVolumes(); err != nil {
		return nil, err
	}
	a.readIndex()
	return a, nil
}

func (a *Archive) readMeta() error {
	name := a.Base + ".meta"
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	rr := &recordReader{name: name, r: bufio.NewReader(f)}
	label, err := readLabel(rr)
	if err != nil {
		return err
	}
	a.Meta = newMeta(label)
	for {
		rec, at, err := rr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			a.Problems = append(a.Problems, err)
			return nil
		}
		if err := a.Meta.add(rec); err != nil {
			a.Problems = append(a.Problems, rr.fail(at, err))
			return nil
		}
	}
}

// readLabel reads the label record that starts every file.
func readLabel(rr *recordReader) (Label, error) {
	rec, at, err := rr.next()
	if err == io.EOF {
		return Label{}, rr.fail(0, fmt.Errorf("empty file: %w", ErrNotArchive))
	}
	if err != nil {
		return Label{}, err
	}
	l, err := decodeLabel(rec)
	if err != nil {
		return Label{}, rr.fail(at, err)
	}
	return l, nil
}

func (a *Archive) findVolumes() error {
	paths, err := filepath.Glob(globEscape(a.Base) + ".*")
	if err != nil {
		return err
	}
	for _, p := range paths {
		suffix := strings.TrimPrefix(p, a.Base+".")
		if !allDigits(suffix) {
			continue
		}
		n, err := strconv.Atoi(suffix)
		if err != nil {
			continue
		}
		a.volumes = append(a.volumes, volume{n: n, path: p})
	}
	sort.Slice(a.volumes, func(i, j int) bool { return a.volumes[i].n < a.volumes[j].n })
	if len(a.volumes) == 0 {
		return fmt.Errorf("%s: archive has no data volume (%s.0)", a.Base+".meta", a.Base)
	}
	return nil
}

// globEscape quotes the glob characters of a literal path.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// readIndex reads the temporal index; it is optional (only a shortcut to
// --from), so a missing one is fine and a bad one is a problem noted.
func (a *Archive) readIndex() {
	name := a.Base + ".index"
	data, err := os.ReadFile(name)
	if err != nil {
		return
	}
	v := versionOf(data)
	size := map[int]int{2: labelLenV2, 3: labelLenV3}[v]
	entry := map[int]int{2: 20, 3: 32}[v]
	if v != a.Meta.Label.Version || len(data) < size {
		a.Problems = append(a.Problems, &FormatError{File: name, Offset: 0, Err: errors.New("index label does not match the archive's")})
		return
	}
	for off := size; off+entry <= len(data); off += entry {
		d := &decoder{b: data[off : off+entry]}
		e := indexEntry{At: d.stamp(v), Vol: int(d.i32())}
		if v == 2 {
			d.u32() // .meta offset
			e.Off = int64(d.u32())
		} else {
			d.u64()
			e.Off = int64(d.u64())
		}
		a.index = append(a.index, e)
	}
}

// start returns where reading for a window from `from` begins: the last
// index entry at or before from (a sample before the window, for the
// first rate), else the first volume's first record.
func (a *Archive) start(from time.Time) (vol int, off int64) {
	vol, off = a.volumes[0].n, -1
	if from.IsZero() {
		return vol, off
	}
	for _, e := range a.index {
		if e.At.After(from) {
			break
		}
		vol, off = e.Vol, e.Off
	}
	return vol, off
}

// Results calls fn with every pmResult from the volume holding `from` on,
// in order. broken says a volume went bad before this record, so it
// follows a discontinuity like a mark. A malformed record ends its volume:
// problem hears it (file and offset) and reading goes on with the next
// volume. Reading stops when fn returns an error.
func (a *Archive) Results(from time.Time, fn func(r Result, broken bool) error, problem func(error)) error {
	vol, off := a.start(from)
	broken := false
	for _, v := range a.volumes {
		if v.n < vol {
			continue
		}
		seek := int64(-1)
		if v.n == vol {
			seek = off
		}
		err := a.readVolume(v, seek, func(r Result) error {
			err := fn(r, broken)
			broken = false
			return err
		})
		var fe *FormatError
		if errors.As(err, &fe) {
			problem(err)
			broken = true
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// readVolume reads one data volume from its label, or from byte offset
// seek when it is not negative (an index entry).
func (a *Archive) readVolume(v volume, seek int64, fn func(Result) error) error {
	f, err := os.Open(v.path)
	if err != nil {
		return err
	}
	defer f.Close()
	rr := &recordReader{name: v.path, r: bufio.NewReader(f)}
	label, err := readLabel(rr)
	if err != nil {
		return err
	}
	if label.Version != a.Meta.Label.Version || label.Host != a.Meta.Label.Host {
		return rr.fail(0, fmt.Errorf("volume label (version %d, host %q) does not match the archive's (version %d, host %q)",
			label.Version, label.Host, a.Meta.Label.Version, a.Meta.Label.Host))
	}
	start := rr.off
	moveTo := func(off int64) error {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return err
		}
		rr.r.Reset(f)
		rr.off = off
		return nil
	}
	if seek > start {
		if err := moveTo(seek); err != nil {
			return err
		}
	}
	for first := true; ; first = false {
		rec, at, err := rr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil && first && at > start {
			// The index pointed at no record (a stale or damaged
			// index): read the volume from its start instead.
			if err := moveTo(start); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		r, err := decodeResult(rec, a.Meta.Label.Version, a.Meta)
		if err != nil {
			return rr.fail(at, err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
}
