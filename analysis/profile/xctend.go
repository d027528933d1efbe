package profile

import (
	"bytes"
	"io"
	"slices"
	"strings"

	"github.com/latscope/latscope/input"
)

// Transactions counts the XCTEND lines of a session: the ends of its
// transactions, commits (rlbk=0) and rollbacks (rlbk=1). ReadOnly counts
// those of either kind that had changed nothing (rd_only=1).
type Transactions struct {
	Commits   int64 `json:"commits"`
	Rollbacks int64 `json:"rollbacks"`
	ReadOnly  int64 `json:"read_only"`
}

func (t *Transactions) add(o Transactions) {
	t.Commits += o.Commits
	t.Rollbacks += o.Rollbacks
	t.ReadOnly += o.ReadOnly
}

// xctendScanner passes a trace through to the call parser unchanged while
// it counts the XCTEND lines per trcsess process section: ReadCalls hands
// over cursors, calls and waits, not transaction ends (NOTES-prof18b.md).
// Only a line's first maxScanned bytes are looked at.
type xctendScanner struct {
	r    io.Reader
	name string
	diag *input.Diagnostics
	line int
	// partial is the start of the line the last read left unfinished.
	partial []byte
	pid     string
	byPID   map[string]*Transactions
	starts  []int // scratch: where the lines looked at start
}

const maxScanned = 128

var (
	xctendPrefix = []byte("XCTEND ")
	// The trcsess section line, as oracle10046 reads it.
	pidLinePrefix = []byte("*** [ Unix process pid:")
)

func newXctendScanner(r io.Reader, name string, diag *input.Diagnostics) *xctendScanner {
	return &xctendScanner{r: r, name: name, diag: diag, byPID: map[string]*Transactions{}}
}

// Read implements io.Reader.
func (x *xctendScanner) Read(p []byte) (int, error) {
	n, err := x.r.Read(p)
	x.scan(p[:n])
	if err == io.EOF {
		x.finish()
	}
	return n, err
}

// scan reads the lines of b, the first of them the end of the line the
// last read left unfinished. Lines are looked for by their prefixes, not
// one by one: XCTEND and process lines are rare.
func (x *xctendScanner) scan(b []byte) {
	first := bytes.IndexByte(b, '\n')
	if first < 0 {
		x.keep(b)
		return
	}
	x.keep(b[:first])
	x.endLine()
	last := bytes.LastIndexByte(b, '\n')
	whole := b[first+1 : last+1] // complete lines, numbered from x.line+1
	x.starts = x.starts[:0]
	for _, prefix := range [][]byte{xctendPrefix, pidLinePrefix} {
		if bytes.HasPrefix(whole, prefix) {
			x.starts = append(x.starts, 0)
		}
		for at := 0; ; {
			k := bytes.Index(whole[at:], prefix)
			if k < 0 {
				break
			}
			if at+k > 0 && whole[at+k-1] == '\n' {
				x.starts = append(x.starts, at+k)
			}
			at += k + 1
		}
	}
	slices.Sort(x.starts)
	counted, ended := 0, x.line
	for _, start := range x.starts {
		ended += bytes.Count(whole[counted:start], newline)
		counted = start
		end := start + bytes.IndexByte(whole[start:], '\n')
		x.handle(whole[start:min(end, start+maxScanned)], ended+1)
	}
	x.line += bytes.Count(whole, newline)
	x.keep(b[last+1:])
}

var newline = []byte("\n")

// keep adds to the unfinished line, up to maxScanned bytes.
func (x *xctendScanner) keep(b []byte) {
	if room := maxScanned - len(x.partial); room > 0 {
		x.partial = append(x.partial, b[:min(len(b), room)]...)
	}
}

// finish reads a last line without a newline.
func (x *xctendScanner) finish() {
	if len(x.partial) > 0 {
		x.endLine()
	}
}

// endLine reads the unfinished line, now complete.
func (x *xctendScanner) endLine() {
	x.line++
	x.handle(x.partial, x.line)
	x.partial = x.partial[:0]
}

// handle reads line number n (its first maxScanned bytes).
func (x *xctendScanner) handle(line []byte, n int) {
	line = bytes.TrimSuffix(line, []byte("\r"))
	switch {
	case bytes.HasPrefix(line, pidLinePrefix):
		x.pid = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(line[len(pidLinePrefix):])), "]"))
	case bytes.HasPrefix(line, xctendPrefix):
		x.xctend(string(line[len(xctendPrefix):]), n)
	}
}

// xctend reads "rlbk=0, rd_only=1[, tim=T]".
func (x *xctendScanner) xctend(fields string, n int) {
	var rollback, readOnly, seen int
	for f := range strings.SplitSeq(fields, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		var flag *int
		switch k {
		case "rlbk":
			flag = &rollback
		case "rd_only":
			flag = &readOnly
		default:
			continue
		}
		switch v {
		case "0":
		case "1":
			*flag = 1
		default:
			x.diag.Malformed(x.name, n, "bad XCTEND "+k+"="+v)
			return
		}
		seen++
	}
	if seen != 2 {
		x.diag.Malformed(x.name, n, "XCTEND without rlbk= and rd_only=")
		return
	}
	pid := x.pid
	if _, ok := x.byPID[pid]; !ok && len(x.byPID) >= maxSessions {
		pid = overflowSession
	}
	t := x.byPID[pid]
	if t == nil {
		t = &Transactions{}
		x.byPID[pid] = t
	}
	t.add(Transactions{Commits: int64(1 - rollback), Rollbacks: int64(rollback), ReadOnly: int64(readOnly)})
}
