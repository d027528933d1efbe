package collapse

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/input"
)

// BpftraceFormat collapses bpftrace maps keyed by kstack/ustack, as
// FlameGraph's stackcollapse-bpftrace.pl does: "@[" opens a stack, frames
// follow leaf first, "]: N" closes it with its count. Frames are kept as
// bpftrace prints them, offsets included ("vfs_read+570"), like the script.
// Other key parts become root frames: "@[comm, kstack]" and "@[kstack,
// comm]" both give "comm;root;...;leaf"; "@[kstack, ustack]" joins the two
// stacks (user frames at the root). Maps without stacks are ignored; empty
// stacks ("@[]: N", e.g. user-space time under kstack) are skipped with one
// warning, as the script drops them.
func BpftraceFormat() Format {
	return Format{
		Name: "bpftrace",
		Description: "bpftrace maps keyed by kstack/ustack (bpftrace -e 'profile:hz:99 { @[kstack] = count(); }'): " +
			"\"@[\" then frames leaf first then \"]: N\"; recognised by its first map line; counts are " +
			"per-stack totals",
		Detect:   detectBpftrace,
		Collapse: collapseBpftrace,
	}
}

// detectBpftrace says Yes when the first line after bpftrace's "Attaching
// N probes..." opens a stack-keyed map.
func detectBpftrace(prefix []byte) input.Verdict {
	for l := range txtDetectScan().Lines(prefix) {
		if l.Blank() || bytes.HasPrefix(l.Text, []byte("Attaching ")) {
			continue
		}
		if _, ok := bpftraceOpen(string(l.Text)); ok {
			return input.Yes
		}
		if _, _, ok := bpftraceOneLine(string(l.Text)); ok {
			return input.Yes
		}
		return input.No
	}
	return input.NeedMore
}

// bpftraceMapKey returns what follows "@name[" on a line, if it starts so.
func bpftraceMapKey(line string) (string, bool) {
	if !strings.HasPrefix(line, "@") {
		return "", false
	}
	i := 1
	for i < len(line) && (line[i] == '_' || line[i] >= 'a' && line[i] <= 'z' || line[i] >= 'A' && line[i] <= 'Z' ||
		line[i] >= '0' && line[i] <= '9') {
		i++
	}
	if i == len(line) || line[i] != '[' {
		return "", false
	}
	return line[i+1:], true
}

// bpftraceOpen matches a line opening a multi-line stack key: "@[" alone,
// or "@[comm, " with key parts before the stack (returned as root frames).
func bpftraceOpen(line string) (roots []string, ok bool) {
	key, isMap := bpftraceMapKey(strings.TrimRight(line, " \t"))
	switch {
	case !isMap:
		return nil, false
	case key == "":
		return nil, true
	case strings.HasSuffix(key, ","):
		return splitBpftraceKeys(strings.TrimSuffix(key, ",")), true
	}
	return nil, false
}

// bpftraceOneLine matches a whole entry on one line whose stack is empty:
// "@[]: N", or "@[, comm]: N" and "@[comm, ]: N" (kept as stack "comm",
// as the script does for the first). Plain maps ("@[comm]: N") do not
// match.
func bpftraceOneLine(line string) (stack string, count string, ok bool) {
	key, isMap := bpftraceMapKey(line)
	if !isMap {
		return "", "", false
	}
	i := strings.LastIndex(key, "]: ")
	if i < 0 || !txtIsDigits([]byte(key[i+3:])) {
		return "", "", false
	}
	keys, count := key[:i], key[i+3:]
	switch {
	case keys == "":
		return "", count, true
	case strings.HasPrefix(keys, ", "):
		return keys[2:], count, true
	case strings.HasSuffix(keys, ", "): // "@[comm, ]: N", the symmetric case
		return keys[:len(keys)-2], count, true
	}
	return "", "", false
}

// splitBpftraceKeys splits "comm, 123" into key parts.
func splitBpftraceKeys(keys string) []string {
	var out []string
	for _, k := range strings.Split(keys, ", ") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, strings.ReplaceAll(k, ";", ":"))
		}
	}
	return out
}

// bpftraceCollapser holds the stack being read.
type bpftraceCollapser struct {
	in      Input
	p       *flame.Profile
	inStack bool
	first   int      // line of the "@[" that opened the stack
	roots   []string // key parts printed before the stack
	frames  []string // leaf first
	empty   int64    // samples with an empty stack, skipped
	join    strings.Builder
}

func collapseBpftrace(in Input, _ Options, p *flame.Profile) error {
	c := bpftraceCollapser{in: in, p: p}
	err := txtEachLine(in, c.line)
	if c.inStack {
		in.Diag.Malformed(in.Name, c.first, "stack without its closing \"]: N\" line at the end of the input (truncated?): skipped")
	}
	if c.empty > 0 {
		in.Diag.Warn(in.Name, "%d samples with an empty stack skipped (as stackcollapse-bpftrace.pl does)", c.empty)
	}
	return err
}

func (c *bpftraceCollapser) line(l txtLine) {
	text := string(l.text)
	if !c.inStack {
		c.outside(l.n, text)
		return
	}
	if i := strings.LastIndex(text, "]: "); i >= 0 && txtIsDigits([]byte(strings.TrimSpace(text[i+3:]))) {
		c.close(l.n, text[:i], strings.TrimSpace(text[i+3:]))
		return
	}
	frame := strings.TrimSpace(text)
	if frame == "" || frame == "," {
		return // separates two stacks of one key ("@[kstack, ustack]")
	}
	if _, ok := bpftraceOpen(text); ok && !txtIsIndented(l.text) {
		// A new entry while one is open: the previous lost its end.
		c.in.Diag.Malformed(c.in.Name, c.first, "stack without its closing \"]: N\" line: skipped")
		c.outside(l.n, text)
		return
	}
	c.frames = append(c.frames, strings.ReplaceAll(frame, ";", ":"))
}

// outside handles a line between entries.
func (c *bpftraceCollapser) outside(n int, text string) {
	if roots, ok := bpftraceOpen(text); ok {
		c.inStack, c.first, c.roots, c.frames = true, n, roots, c.frames[:0]
		return
	}
	stack, count, ok := bpftraceOneLine(text)
	if !ok {
		return // "Attaching N probes...", other maps, histogram rows
	}
	v, ok := txtParseCount([]byte(count))
	switch {
	case !ok:
		c.in.Diag.Malformed(c.in.Name, n, "count "+count+" too large: skipped")
	case stack == "":
		c.empty += v
	default:
		c.p.Add(strings.ReplaceAll(stack, ";", ":"), v)
	}
}

// close ends the open stack: rest holds what precedes "]: " (", comm" for
// key parts printed after the stack).
func (c *bpftraceCollapser) close(n int, rest, count string) {
	c.inStack = false
	rest = strings.TrimSpace(rest)
	if strings.HasPrefix(rest, ",") {
		rest = strings.TrimSpace(rest[1:])
		if rest != "" {
			c.roots = append(c.roots, strings.ReplaceAll(rest, ";", ":"))
		}
	} else if rest != "" {
		c.frames = append(c.frames, strings.ReplaceAll(rest, ";", ":"))
	}
	v, ok := txtParseCount([]byte(count))
	switch {
	case !ok:
		c.in.Diag.Malformed(c.in.Name, n, fmt.Sprintf("count %s too large: stack skipped", count))
	case len(c.frames) == 0 && len(c.roots) == 0:
		c.empty += v
	default:
		c.p.Add(c.folded(), v)
	}
}

// folded joins key parts then frames, root first.
func (c *bpftraceCollapser) folded() string {
	c.join.Reset()
	for _, r := range c.roots {
		c.join.WriteString(r)
		c.join.WriteByte(';')
	}
	for i := len(c.frames) - 1; i >= 0; i-- {
		c.join.WriteString(c.frames[i])
		c.join.WriteByte(';')
	}
	s := c.join.String()
	return s[:len(s)-1]
}
