// Package collapse turns sampled stacks as profilers print them (perf
// script, DTrace, SystemTap, bpftrace, gdb/pstack backtraces, folded
// stacks) into a flame.Profile of folded stacks. One file per input
// format; Formats lists them in detection order.
package collapse

import (
	"io"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/input"
)

// Options are the collapsers' choices (most apply to perf input only;
// other formats ignore what they cannot use).
type Options struct {
	// Perl collapses as FlameGraph's Perl scripts do (--compat perl):
	// stackcollapse-perf.pl byte for byte, faults included, and
	// stackcollapse.pl for DTrace (its first lines skipped only when they
	// are dtrace's header). The default collapses as inferno does: C++
	// argument lists cut at the top level only, a last sample without a
	// blank line after it counted, DTrace headers of any form skipped.
	Perl bool
	// PID and TID add "comm-PID" or "comm-PID/TID" to the root frame.
	PID, TID bool
	// Kernel and JIT add "_[k]" / "_[j]" to kernel and JIT frames; All
	// does both (and implies nothing else).
	Kernel, JIT, All bool
	// Addrs keeps raw addresses for unknown symbols.
	Addrs bool
	// EventFilter keeps only samples of this event (default: the first
	// event seen, as stackcollapse-perf.pl does).
	EventFilter string
	// Threads splits the work over this many goroutines (0: GOMAXPROCS).
	// The output does not depend on it.
	Threads int
	// FrameHook, when set, rewrites every frame of inputs that name each
	// frame's module (perf script), after the name is tidied: the
	// database decoder marks frames of the database binary with it
	// (decode.MarkFrame), so a Linux ksys_read is never read as Oracle.
	FrameHook func(name, module string) string
}

// Input is one input to collapse.
type Input struct {
	// Name is the file name used in messages ("-" for stdin).
	Name   string
	Reader io.Reader
	// Diag receives malformed-line reports and warnings.
	Diag *input.Diagnostics
}

// Format is one stack format latscope collapses.
type Format struct {
	Name        string
	Description string
	// Detect looks at the start of the input.
	Detect func(prefix []byte) input.Verdict
	// Collapse adds the input's stacks to p. Malformed lines are counted
	// in in.Diag and skipped; an error means the input could not be read
	// on (what was collapsed before stays in p).
	Collapse func(in Input, opts Options, p *flame.Profile) error
}
