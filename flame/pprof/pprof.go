// Package pprof converts between flame.Profile's folded stacks and the
// pprof protobuf (github.com/google/pprof/profile), the profile format of
// `go tool pprof`, Pyroscope and Parca.
//
// A frame is a function: its text, latscope's annotations included (_[k]
// kernel, _[j] JIT, decoded database operations), is the function's name,
// so folded → pprof → folded gives the same stacks back and every pprof
// viewer shows the frames as latscope's flame graphs do.
package pprof

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/latscope/latscope/flame"
)

// WriteOptions name the one sample type written.
type WriteOptions struct {
	// SampleType is what a stack's count is (default: the profile's
	// SampleType, else "samples"); Unit its unit (default: the profile's
	// SampleUnit, else "count").
	SampleType, Unit string
}

// Write writes the profile as gzip-compressed pprof protobuf (the .pb.gz
// that every pprof reader takes); uncompressed writes the bare protobuf.
func Write(w io.Writer, p *flame.Profile, o WriteOptions, uncompressed bool) error {
	pp, err := Build(p, o)
	if err != nil {
		return err
	}
	if uncompressed {
		return pp.WriteUncompressed(w)
	}
	return pp.Write(w)
}

// Build converts folded stacks into a pprof profile: one function and one
// location per distinct frame, one sample per stack (leaf first, as pprof
// orders them) whose value is the stack's count.
func Build(p *flame.Profile, o WriteOptions) (*profile.Profile, error) {
	if p.Diff {
		return nil, errors.New("pprof output holds one profile, not a differential: write BASE and NEW separately")
	}
	o.SampleType = cmp.Or(o.SampleType, p.SampleType, "samples")
	o.Unit = cmp.Or(o.Unit, p.SampleUnit, "count")
	vt := &profile.ValueType{Type: o.SampleType, Unit: o.Unit}
	// One mapping that says the names are already symbolized, so pprof
	// tools do not look for binaries to symbolize with.
	m := &profile.Mapping{ID: 1, File: "latscope", HasFunctions: true}
	pp := &profile.Profile{
		SampleType: []*profile.ValueType{vt}, PeriodType: &profile.ValueType{Type: o.SampleType, Unit: o.Unit}, Period: 1,
		DefaultSampleType: o.SampleType, Mapping: []*profile.Mapping{m},
	}
	locs := map[string]*profile.Location{}
	location := func(name string) *profile.Location {
		if l := locs[name]; l != nil {
			return l
		}
		id := uint64(len(pp.Function) + 1)
		// No SystemName: the frames are already demangled, and pprof
		// "simplifies" a name it sees equal to its system name (Rust's
		// "<T as Trait>::f" would show as "::f").
		fn := &profile.Function{ID: id, Name: name}
		l := &profile.Location{ID: id, Mapping: m, Line: []profile.Line{{Function: fn}}}
		pp.Function = append(pp.Function, fn)
		pp.Location = append(pp.Location, l)
		locs[name] = l
		return l
	}
	for _, s := range p.InOrder() {
		frames := strings.Split(s.Frames, ";")
		sample := &profile.Sample{Value: []int64{s.Count}, Location: make([]*profile.Location, len(frames))}
		for i, name := range frames {
			sample.Location[len(frames)-1-i] = location(name)
		}
		pp.Sample = append(pp.Sample, sample)
	}
	return pp, pp.CheckValid()
}

// ReadOptions choose what a pprof input's stacks count.
type ReadOptions struct {
	// SampleIndex picks the sample type by index or name, as pprof's
	// -sample_index: "1", "alloc_space", "sample_index=cpu". Empty takes
	// the profile's default type, else its last (pprof's default).
	SampleIndex string
}

// LooksLikePprof says whether data starts as an uncompressed pprof
// protobuf: every field in it is a field of pprof's Profile message with
// that field's wire type. whole says data is the entire input (a field may
// not run past its end); otherwise data is a prefix and the last field may.
// Stack text fails within a few bytes: few printable characters are valid
// tags, and they must line up across the whole prefix.
func LooksLikePprof(data []byte, whole bool) bool {
	fields, end := walkFields(data)
	switch end {
	case fieldsEnd:
		return fields >= 2 || (whole && fields >= 1)
	case fieldsCut:
		return !whole && fields >= 1
	}
	return false
}

// StartsLikePprof says whether data starts with two whole fields of
// pprof's Profile message: a profile cut short does, and reading it as
// pprof names what is wrong better than "not a stack format".
func StartsLikePprof(data []byte) bool {
	fields, end := walkFields(data)
	return fields >= 2 && end != fieldsBad
}

// How a walk over protobuf fields ended.
const (
	fieldsEnd = iota // at the end of the data, after a whole field
	fieldsCut        // in a field that runs past the data
	fieldsBad        // at a field Profile does not have
)

// walkFields counts the whole Profile fields data starts with.
func walkFields(data []byte) (fields, end int) {
	for len(data) > 0 {
		tag, n := uvarint(data)
		if n < 0 || (n > 0 && !profileField(tag)) {
			return fields, fieldsBad
		}
		if n == 0 {
			return fields, fieldsCut
		}
		data = data[n:]
		v, n := uvarint(data)
		if n < 0 {
			return fields, fieldsBad
		}
		if n == 0 {
			return fields, fieldsCut
		}
		data = data[n:]
		if tag&7 == wireBytes {
			if v > uint64(len(data)) {
				return fields, fieldsCut
			}
			data = data[v:]
		}
		fields++
	}
	return fields, fieldsEnd
}

// Wire types of protobuf fields.
const (
	wireVarint = 0
	wireBytes  = 2
)

// profileField says whether tag is a field of pprof's Profile message
// (profile.proto) with its wire type.
func profileField(tag uint64) bool {
	switch field, wire := tag>>3, tag&7; field {
	case 1, 2, 3, 4, 5, 6, 11: // sample_type, sample, mapping, location, function, string_table, period_type
		return wire == wireBytes
	case 7, 8, 9, 10, 12, 14, 15: // drop_frames, keep_frames, time_nanos, duration_nanos, period, default_sample_type, doc_url
		return wire == wireVarint
	case 13: // comment: packed or not
		return wire == wireVarint || wire == wireBytes
	}
	return false
}

// uvarint decodes a protobuf varint: n is 0 when data ends inside it, -1
// when it is longer than 10 bytes.
func uvarint(data []byte) (v uint64, n int) {
	for i, b := range data {
		if i == 10 {
			return 0, -1
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// Read parses a pprof profile (gzip-compressed or not) named name and adds
// its stacks to p, root first, with the chosen sample type's values as
// counts, and sets p's sample type. Inlined calls become frames of their
// own, as pprof shows them.
func Read(name string, data []byte, o ReadOptions, p *flame.Profile) (err error) {
	defer func() {
		// The parser is fuzzed upstream; a panic on hostile bytes must
		// still be an error naming the file, not a crash.
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: not a valid pprof profile: %v", name, r)
		}
	}()
	pp, err := profile.ParseData(data)
	if err != nil {
		return fmt.Errorf("%s: not a valid pprof profile: %w", name, err)
	}
	idx, err := sampleIndex(pp, o.SampleIndex)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := checkValues(pp, idx); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := setSampleType(p, pp.SampleType[idx]); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var frames []string
	for _, s := range pp.Sample {
		if s.Value[idx] == 0 {
			continue
		}
		frames = stackFrames(frames[:0], s)
		if len(frames) == 0 {
			continue
		}
		p.Add(strings.Join(frames, ";"), s.Value[idx])
	}
	return nil
}

// setSampleType gives p the sample type read, unless inputs read before
// count something else: nanoseconds and bytes do not add up.
func setSampleType(p *flame.Profile, t *profile.ValueType) error {
	if p.Len() == 0 {
		p.SampleType, p.SampleUnit = t.Type, t.Unit
		return nil
	}
	if p.SampleType == "" {
		p.SampleType, p.SampleUnit = "samples", "count"
	}
	if p.SampleType != t.Type || p.SampleUnit != t.Unit {
		return fmt.Errorf("its %s/%s cannot be added to the %s/%s of the inputs before it (choose one with --sample-index)", t.Type, t.Unit, p.SampleType, p.SampleUnit)
	}
	return nil
}

// checkValues refuses a profile whose samples lack the chosen value or
// carry a negative one before any stack is added, so a bad profile adds
// nothing.
func checkValues(pp *profile.Profile, idx int) error {
	for i, s := range pp.Sample {
		if idx >= len(s.Value) {
			return fmt.Errorf("sample %d has %d values, want %d (one per sample type)", i+1, len(s.Value), len(pp.SampleType))
		}
		if v := s.Value[idx]; v < 0 {
			return fmt.Errorf("sample %d has a negative %s (%d): a pprof -diff_base profile? draw a differential with latscope flame --diff BASE NEW",
				i+1, pp.SampleType[idx].Type, v)
		}
	}
	return nil
}

// stackFrames appends the sample's frames root first: pprof lists
// locations leaf first, and a location's lines innermost (inlined) first.
func stackFrames(frames []string, s *profile.Sample) []string {
	for i := len(s.Location) - 1; i >= 0; i-- {
		l := s.Location[i]
		if len(l.Line) == 0 {
			frames = append(frames, unsymbolized(l))
			continue
		}
		for j := len(l.Line) - 1; j >= 0; j-- {
			name := ""
			if fn := l.Line[j].Function; fn != nil {
				name = fn.Name
			}
			frames = append(frames, frameName(name))
		}
	}
	return frames
}

// unsymbolized names a location without function names by its address,
// as pprof does, with its binary when known.
func unsymbolized(l *profile.Location) string {
	addr := "0x" + strconv.FormatUint(l.Address, 16)
	if l.Mapping != nil && l.Mapping.File != "" {
		file := l.Mapping.File
		if i := strings.LastIndexByte(file, '/'); i >= 0 {
			file = file[i+1:]
		}
		return frameName(file + "+" + addr)
	}
	return addr
}

// frameNames keeps a function name from breaking a folded line: ';'
// separates frames and a newline ends the stack.
var frameNames = strings.NewReplacer(";", ":", "\n", " ", "\r", " ")

func frameName(name string) string {
	if strings.ContainsAny(name, ";\n\r") {
		return frameNames.Replace(name)
	}
	return name
}

// sampleIndex resolves a -sample_index value against the profile's sample
// types.
func sampleIndex(pp *profile.Profile, want string) (int, error) {
	n := len(pp.SampleType)
	if n == 0 {
		return 0, errors.New("the profile has no sample types")
	}
	if want == "" {
		if pp.DefaultSampleType != "" {
			if i := slices.IndexFunc(pp.SampleType, func(t *profile.ValueType) bool { return t.Type == pp.DefaultSampleType }); i >= 0 {
				return i, nil
			}
		}
		return n - 1, nil
	}
	want = strings.TrimPrefix(want, "sample_index=")
	if i, err := strconv.Atoi(want); err == nil {
		if i < 0 || i >= n {
			return 0, fmt.Errorf("--sample-index %d: the profile has sample types 0 to %d (%s)", i, n-1, typeNames(pp))
		}
		return i, nil
	}
	if i := slices.IndexFunc(pp.SampleType, func(t *profile.ValueType) bool { return t.Type == want }); i >= 0 {
		return i, nil
	}
	return 0, fmt.Errorf("--sample-index %q: no such sample type (the profile has %s)", want, typeNames(pp))
}

func typeNames(pp *profile.Profile) string {
	var b bytes.Buffer
	for i, t := range pp.SampleType {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d %s/%s", i, t.Type, t.Unit)
	}
	return b.String()
}
