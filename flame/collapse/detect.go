package collapse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/latscope/latscope/input"
)

// OtherFormats returns the collapsers of everything but perf script text,
// in detection order: the three formats with an unmistakable first line
// (DTrace's header or backtick frames, SystemTap's "0x… : " frames,
// bpftrace's "@[" maps), then gdb/pstack backtraces (which may follow a
// few lines of gdb chatter), then folded stacks, the loosest test, last.
// Every detector answers No on perf script text, so the list can follow
// the perf format in any registry.
func OtherFormats() []Format {
	return []Format{DTraceFormat(), StapFormat(), BpftraceFormat(), GdbFormat(), FoldedFormat()}
}

// Detect offers prefix to each format in order and returns the first that
// says Yes. The verdict is NeedMore when none said Yes but one wants a
// longer prefix, No when all refused.
func Detect(formats []Format, prefix []byte) (Format, input.Verdict) {
	verdict := input.No
	for _, f := range formats {
		switch f.Detect(prefix) {
		case input.Yes:
			return f, input.Yes
		case input.NeedMore:
			verdict = input.NeedMore
		}
	}
	return Format{}, verdict
}

// txtDetectScan is how the detectors here read their prefix: complete lines
// only, and only the first 64, as the formats are recognised on their first
// few lines; a longer undecided prefix stays NeedMore.
func txtDetectScan() input.LineScan { return input.LineScan{MaxLines: 64} }

// txtIsBlank reports whether a line holds only white space.
func txtIsBlank(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

// txtIsIndented reports whether a line starts with a space or a tab.
func txtIsIndented(line []byte) bool {
	return len(line) > 0 && (line[0] == ' ' || line[0] == '\t')
}

// txtMaxLine bounds one input line; a longer line is skipped and reported
// (no profiler writes one frame or stack that long, binary garbage does).
const txtMaxLine = 16 << 20

// txtLine is one input line handed to a collapser: its 1-based number and
// its text without the line ending (valid until the next line is read).
type txtLine struct {
	n    int
	text []byte
}

// txtEachLine calls fn for every line of r. Lines that are not text (NUL
// bytes, invalid UTF-8) or longer than txtMaxLine are reported to diag and
// not passed on. It returns read errors wrapped with the input name and the
// line where reading stopped.
func txtEachLine(in Input, fn func(l txtLine)) error {
	br := bufio.NewReaderSize(in.Reader, 64<<10)
	var long []byte // a line longer than the buffer, being gathered
	tooLong := false
	n := 0
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if tooLong = tooLong || len(long)+len(chunk) > txtMaxLine; !tooLong {
				long = append(long, chunk...)
			}
			continue
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
			long = nil
		}
		if len(line) > 0 || tooLong {
			n++
			if tooLong {
				in.Diag.Malformed(in.Name, n, fmt.Sprintf("line longer than %d MiB skipped", txtMaxLine>>20))
			} else {
				txtDeliver(in, n, line, fn)
			}
			tooLong = false
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", in.Name, n+1, err)
		}
	}
}

// txtDeliver strips the line ending and checks that the line is text.
func txtDeliver(in Input, n int, line []byte, fn func(l txtLine)) {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if bytes.IndexByte(line, 0) >= 0 || !utf8.Valid(line) {
		in.Diag.Malformed(in.Name, n, "binary data, not text: line skipped")
		return
	}
	fn(txtLine{n: n, text: line})
}

// txtParseCount parses a non-negative decimal sample count.
func txtParseCount(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// txtIsDigits reports whether b is a non-empty run of ASCII digits.
func txtIsDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
