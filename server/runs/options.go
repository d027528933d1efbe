package runs

import (
	"net/http"
	"strconv"
)

// ParamSpec describes one parameter of a kind for a client that builds a
// form: its JSON name, the CLI flag it becomes, its default and its
// bounds, as the kind's check applies them.
type ParamSpec struct {
	Name  string `json:"name"`
	Label string `json:"label"`
	// Type is string, duration ("30s"), size ("16m"), integer, number,
	// boolean, integers or numbers (lists, written "1,2,4" in a form and
	// sent as JSON arrays).
	Type string `json:"type"`
	// Flag is the CLI's flag (or argument) the parameter becomes.
	Flag     string   `json:"flag"`
	Default  string   `json:"default,omitempty"`
	Hint     string   `json:"hint,omitempty"`
	Required bool     `json:"required,omitempty"`
	Min      *float64 `json:"min,omitempty"`
	Max      *float64 `json:"max,omitempty"`
	// Choices are the only values allowed; Suggest are values to offer
	// (others may be allowed too).
	Choices []string `json:"choices,omitempty"`
	Suggest []string `json:"suggest,omitempty"`
}

// KindSpec describes one kind of run.
type KindSpec struct {
	Kind    string      `json:"kind"`
	Title   string      `json:"title"`
	Command string      `json:"command"`
	Outputs []string    `json:"outputs"`
	Params  []ParamSpec `json:"params"`
}

// RunOptions is what a client needs to offer runs: the kinds and their
// parameters, and what the server's configuration allows them to touch.
type RunOptions struct {
	Kinds []KindSpec `json:"kinds"`
	// IOTestDirs are the directories iotest runs may use (or a directory
	// below one).
	IOTestDirs []string `json:"iotest_dirs"`
	// NetTestTargets are the HOST:PORT nettest runs may measure; empty
	// with LoopbackOnly when the configuration names none.
	NetTestTargets []string `json:"nettest_targets"`
	LoopbackOnly   bool     `json:"nettest_loopback_only"`
	// MaxDuration bounds a run's planned time.
	MaxDuration Duration `json:"max_duration"`
}

// Options describes the kinds of run with this server's policy filled in.
func (e *Executor) Options() RunOptions {
	p := e.policy
	return RunOptions{Kinds: kindSpecs(p), IOTestDirs: append([]string{}, p.iotestDirs...), NetTestTargets: append([]string{}, p.nettestTargets...),
		LoopbackOnly: p.loopbackOnly, MaxDuration: Duration(MaxDuration)}
}

func (h handlers) options(w http.ResponseWriter, r *http.Request) (int, any, error) {
	return http.StatusOK, h.e.Options(), nil
}

func bound(v float64) *float64 { return &v }

func itoa(n int) string { return strconv.Itoa(n) }

// kindSpecs are the parameters of every kind, in the order of Kinds();
// a test keeps them equal to the params structs' fields.
func kindSpecs(p policy) []KindSpec {
	duration := ParamSpec{Name: "duration", Label: "Duration", Type: "duration", Flag: "--duration", Default: Duration(defaultTest).String()}
	interval := ParamSpec{Name: "interval", Label: "Interval", Type: "duration", Flag: "--interval", Default: Duration(defaultInterval).String(),
		Hint: "the heat maps' column width; at most the duration"}
	target := ParamSpec{Name: "target", Label: "Target", Type: "string", Flag: "TARGET", Required: true,
		Hint: "HOST:PORT of a latscope nettest server", Suggest: p.nettestTargets}
	if p.loopbackOnly {
		target.Hint += "; the configuration names no runs.nettest_targets, so loopback addresses only"
		target.Suggest = []string{"127.0.0.1:7878"}
	} else {
		target.Choices, target.Suggest = p.nettestTargets, nil
	}
	return []KindSpec{
		{Kind: "flame", Title: "Flame graph capture", Command: "latscope flame --pid PID | --all -o flame.html",
			Outputs: []string{"flame.html", FoldedName}, Params: []ParamSpec{
				{Name: "pid", Label: "Process id", Type: "integer", Flag: "--pid", Min: bound(1), Hint: "profile this process (or give all)"},
				{Name: "all", Label: "Every CPU", Type: "boolean", Flag: "--all", Hint: "profile every CPU (perf record -a) instead of one process"},
				withHint(duration, "how long perf records"),
				{Name: "frequency", Label: "Frequency", Type: "integer", Flag: "--frequency", Default: itoa(defaultFlameHz),
					Min: bound(1), Max: bound(maxFlameHz), Hint: "samples per second, Hz"},
				{Name: "call_graph", Label: "Call graph", Type: "string", Flag: "--call-graph", Default: defaultCallGraph,
					Choices: []string{"fp", "dwarf", "lbr"}, Hint: "stack unwinding: frame pointers, DWARF or LBR"},
			}},
		{Kind: "iotest", Title: "Storage latency test", Command: "latscope iotest DIR -o report.html --format json",
			Outputs: []string{"report.html", "report.json"}, Params: []ParamSpec{
				{Name: "dir", Label: "Directory", Type: "string", Flag: "DIR", Required: true, Suggest: p.iotestDirs,
					Hint: "where the scratch file is made: a configured runs.iotest_dirs entry or a directory below one"},
				withHint(duration, "each step's measured time"),
				{Name: "warmup", Label: "Warm-up", Type: "duration", Flag: "--warmup", Default: Duration(defaultWarmup).String(),
					Hint: "before each step, not measured"},
				interval,
				{Name: "size", Label: "Scratch size", Type: "size", Flag: "--size", Default: defaultIOSize,
					Hint: "the scratch file's size, at most 16g (k, m, g)"},
				{Name: "bs", Label: "Block size", Type: "size", Flag: "--bs", Default: defaultBS, Hint: "a multiple of 512"},
				{Name: "concurrency", Label: "Concurrency", Type: "integer", Flag: "--concurrency", Min: bound(1), Max: bound(maxReaders),
					Hint: "readers at once, one step (or give steps)"},
				{Name: "steps", Label: "Steps", Type: "integers", Flag: "--steps", Min: bound(1), Max: bound(maxReaders),
					Hint: "a sweep: readers per step, e.g. 1,2,4,8 (at most " + itoa(maxSteps) + " steps)"},
				{Name: "rates", Label: "Rates", Type: "numbers", Flag: "--rate", Min: bound(0), Max: bound(maxRate),
					Hint: "open loop instead: I/Os per second per step, e.g. 500,1000"},
				{Name: "write", Label: "Write", Type: "boolean", Flag: "--write", Hint: "measure writes instead of reads"},
			}},
		{Kind: "nettest", Title: "Network round-trip test", Command: "latscope nettest client TARGET -o report.html --format json",
			Outputs: []string{"report.html", "report.json"}, Params: []ParamSpec{
				target,
				duration,
				interval,
				{Name: "mode", Label: "Mode", Type: "string", Flag: "--mode", Default: defaultNetMode, Choices: []string{"sync", "stream", "connect"},
					Hint: "sync: request and answer; stream: pipelined; connect: a new connection each time"},
				{Name: "size", Label: "Message size", Type: "size", Flag: "--size", Default: defaultNetSize, Hint: "bytes per message, 8 to 1m"},
				{Name: "connections", Label: "Connections", Type: "integer", Flag: "--connections", Default: itoa(defaultConnection),
					Min: bound(1), Max: bound(maxConns)},
				{Name: "rate", Label: "Rate", Type: "number", Flag: "--rate", Min: bound(0), Max: bound(maxRate),
					Hint: "round trips per second (open loop); empty: closed loop"},
			}},
		{Kind: "report", Title: "Report of the archive", Command: "latscope report DATA -o report.json|report.html",
			Outputs: []string{"report.html", "report.json"}, Params: []ParamSpec{
				{Name: "series", Label: "Series", Type: "string", Flag: "--series", Hint: "a glob of event names; empty: every series"},
				{Name: "from", Label: "From", Type: "string", Flag: "--from", Hint: "RFC 3339, now or relative (-1h); empty: the start"},
				{Name: "to", Label: "To", Type: "string", Flag: "--to", Hint: "as from; empty: the end"},
			}},
	}
}

func withHint(s ParamSpec, hint string) ParamSpec {
	s.Hint = hint
	return s
}
