package runs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/latscope/latscope/internal/bytesize"
	"github.com/latscope/latscope/source"
)

// Bounds of every run's parameters.
const (
	// MaxDuration bounds a run's planned measuring time (all steps).
	MaxDuration = time.Hour
	// MaxScratch bounds an iotest scratch file.
	MaxScratch  = 16 << 30
	maxSteps    = 32
	maxReaders  = 256
	maxRate     = 1e6
	maxConns    = 64
	maxTextLen  = 256
	maxFlameHz  = 1000
	defaultTest = 10 * time.Second
)

// Defaults of the parameters a client leaves out: the CLI's.
const (
	defaultWarmup     = 2 * time.Second
	defaultIOSize     = "256m"
	defaultBS         = "8k"
	defaultNetMode    = "sync"
	defaultNetSize    = "256"
	defaultFlameHz    = 99
	defaultCallGraph  = "fp"
	defaultInterval   = time.Second
	defaultConnection = 1
)

// Kinds are the runs the server can start.
func Kinds() []string { return []string{"flame", "iotest", "nettest", "report"} }

// params are one kind's typed parameters: check validates them against
// the server's policy and fills in the defaults (so that the stored
// parameters say what ran), plan turns them into the commands to run.
type params interface {
	check(p policy) error
	plan(p policy, dir string) plan
}

func newParams(kind string) (params, error) {
	switch kind {
	case "iotest":
		return &IOTestParams{}, nil
	case "nettest":
		return &NetTestParams{}, nil
	case "flame":
		return &FlameParams{}, nil
	case "report":
		return &ReportParams{}, nil
	}
	return nil, fmt.Errorf("kind %q: want one of %s", kind, strings.Join(Kinds(), ", "))
}

// policy is what the configuration allows runs to touch.
type policy struct {
	data           string   // the data directory: the archive a report reads
	iotestDirs     []string // absolute, symlinks resolved
	nettestTargets []string // host:port, as configured
	loopbackOnly   bool     // no nettest_targets configured
	now            time.Time
	processExists  func(pid int) bool
}

// step is one child process: its arguments after the binary, and the
// output file its stdout goes to ("" for the log).
type step struct {
	args   []string
	stdout string
}

// plan is a run's commands, the outputs they write and how long they
// should take (0: unknown).
type plan struct {
	steps    []step
	estimate time.Duration
}

// decodeParams reads a kind's parameters strictly: unknown fields are
// errors naming the field.
func decodeParams(kind string, raw json.RawMessage, p policy) (params, error) {
	v, err := newParams(kind)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return nil, fmt.Errorf("params of %s: %v", kind, strings.TrimPrefix(err.Error(), "json: "))
	}
	if err := v.check(p); err != nil {
		return nil, fmt.Errorf("params of %s: %w", kind, err)
	}
	return v, nil
}

// IOTestParams are an iotest run's: `latscope iotest DIR` on a scratch
// file in an allowed directory.
type IOTestParams struct {
	Dir         string    `json:"dir"`
	Duration    Duration  `json:"duration"`
	Warmup      *Duration `json:"warmup"`
	Interval    Duration  `json:"interval"`
	Size        string    `json:"size"`
	BS          string    `json:"bs"`
	Concurrency int       `json:"concurrency,omitempty"`
	Steps       []int     `json:"steps,omitempty"`
	Rates       []float64 `json:"rates,omitempty"`
	Write       bool      `json:"write"`
}

func (t *IOTestParams) check(p policy) error {
	dir, err := allowedDir(t.Dir, p.iotestDirs)
	if err != nil {
		return err
	}
	t.Dir = dir
	setDefault(&t.Duration, defaultTest)
	setDefault(&t.Interval, defaultInterval)
	if t.Warmup == nil {
		w := Duration(defaultWarmup)
		t.Warmup = &w
	}
	if t.Size == "" {
		t.Size = defaultIOSize
	}
	if t.BS == "" {
		t.BS = defaultBS
	}
	size, err1 := bytesize.Parse(t.Size)
	bs, err2 := bytesize.Parse(t.BS)
	switch {
	case errors.Join(err1, err2) != nil:
		return errors.Join(err1, err2)
	case size <= 0 || size > MaxScratch:
		return fmt.Errorf("size %s: want more than 0 and at most %s", t.Size, bytesize.Format(MaxScratch))
	case bs <= 0 || bs%512 != 0 || bs > 64<<20 || bs > size:
		return fmt.Errorf("bs %s: want a multiple of 512 up to 64 MiB and the size", t.BS)
	case len(t.Steps) > 0 && len(t.Rates) > 0:
		return errors.New("give steps (reader counts) or rates (arrival rates), not both")
	case len(t.Steps) > 0 && t.Concurrency != 0:
		return errors.New("give concurrency or steps, not both")
	case t.Concurrency < 0 || t.Concurrency > maxReaders:
		return fmt.Errorf("concurrency %d: want 1 to %d", t.Concurrency, maxReaders)
	case len(t.Steps) > maxSteps || len(t.Rates) > maxSteps:
		return fmt.Errorf("at most %d steps or rates", maxSteps)
	}
	for _, n := range t.Steps {
		if n < 1 || n > maxReaders {
			return fmt.Errorf("steps: %d readers: want 1 to %d", n, maxReaders)
		}
	}
	for _, r := range t.Rates {
		if !(r > 0 && r <= maxRate) {
			return fmt.Errorf("rates: %g I/Os per second: want more than 0 and at most %g", r, maxRate)
		}
	}
	if time.Duration(*t.Warmup) < 0 {
		return errors.New("warmup must not be negative")
	}
	return checkTotal(t.Duration, t.Interval, time.Duration(t.stepCount())*(time.Duration(t.Duration)+time.Duration(*t.Warmup)))
}

func (t *IOTestParams) stepCount() int { return max(1, len(t.Steps), len(t.Rates)) }

func (t *IOTestParams) plan(p policy, dir string) plan {
	size, _ := bytesize.Parse(t.Size)
	bs, _ := bytesize.Parse(t.BS)
	args := []string{"iotest", t.Dir, "--plain", "--format=json", "--duration=" + t.Duration.String(),
		"--warmup=" + t.Warmup.String(), "--interval=" + t.Interval.String(),
		"--size=" + strconv.FormatInt(size, 10), "--bs=" + strconv.FormatInt(bs, 10)}
	switch {
	case len(t.Steps) > 0:
		args = append(args, "--steps="+joinNumbers(t.Steps))
	case len(t.Rates) > 0:
		args = append(args, "--rate="+joinNumbers(t.Rates))
	}
	if t.Concurrency > 0 {
		args = append(args, "--concurrency="+strconv.Itoa(t.Concurrency))
	}
	if t.Write {
		args = append(args, "--write")
	}
	args = append(args, "-o", filepath.Join(dir, "report.html"))
	return plan{steps: []step{{args: args, stdout: "report.json"}},
		estimate: time.Duration(t.stepCount()) * (time.Duration(t.Duration) + time.Duration(*t.Warmup))}
}

// NetTestParams are a nettest run's: `latscope nettest client TARGET`
// against an allowed target.
type NetTestParams struct {
	Target      string   `json:"target"`
	Duration    Duration `json:"duration"`
	Interval    Duration `json:"interval"`
	Mode        string   `json:"mode"`
	Size        string   `json:"size"`
	Connections int      `json:"connections"`
	Rate        float64  `json:"rate,omitempty"`
}

func (n *NetTestParams) check(p policy) error {
	target, err := allowedTarget(n.Target, p)
	if err != nil {
		return err
	}
	n.Target = target
	setDefault(&n.Duration, defaultTest)
	setDefault(&n.Interval, defaultInterval)
	if n.Mode == "" {
		n.Mode = defaultNetMode
	}
	if n.Size == "" {
		n.Size = defaultNetSize
	}
	if n.Connections == 0 {
		n.Connections = defaultConnection
	}
	size, err := bytesize.Parse(n.Size)
	switch {
	case err != nil:
		return err
	case !slices.Contains([]string{"sync", "stream", "connect"}, n.Mode):
		return fmt.Errorf("mode %q: want sync, stream or connect", n.Mode)
	case size < 8 || size > 1<<20:
		return fmt.Errorf("size %s: want 8 bytes to 1m", n.Size)
	case n.Connections < 1 || n.Connections > maxConns:
		return fmt.Errorf("connections %d: want 1 to %d", n.Connections, maxConns)
	case n.Rate < 0 || n.Rate > maxRate:
		return fmt.Errorf("rate %g: want 0 (closed loop) to %g round trips per second", n.Rate, maxRate)
	}
	return checkTotal(n.Duration, n.Interval, time.Duration(n.Duration))
}

func (n *NetTestParams) plan(p policy, dir string) plan {
	size, _ := bytesize.Parse(n.Size)
	args := []string{"nettest", "client", n.Target, "--plain", "--format=json", "--duration=" + n.Duration.String(),
		"--interval=" + n.Interval.String(), "--mode=" + n.Mode, "--size=" + strconv.FormatInt(size, 10),
		"--connections=" + strconv.Itoa(n.Connections)}
	if n.Rate > 0 {
		args = append(args, "--rate="+strconv.FormatFloat(n.Rate, 'g', -1, 64))
	}
	args = append(args, "-o", filepath.Join(dir, "report.html"))
	return plan{steps: []step{{args: args, stdout: "report.json"}}, estimate: time.Duration(n.Duration)}
}

// FlameParams are a flame capture's: perf record of one process or of
// every CPU for a while, kept as folded stacks and drawn as the HTML
// viewer.
type FlameParams struct {
	PID       int      `json:"pid,omitempty"`
	All       bool     `json:"all,omitempty"`
	Duration  Duration `json:"duration"`
	Frequency int      `json:"frequency"`
	CallGraph string   `json:"call_graph"`
}

func (f *FlameParams) check(p policy) error {
	setDefault(&f.Duration, defaultTest)
	if f.Frequency == 0 {
		f.Frequency = defaultFlameHz
	}
	if f.CallGraph == "" {
		f.CallGraph = defaultCallGraph
	}
	switch {
	case f.All == (f.PID != 0):
		return errors.New("give pid (one process) or all (every CPU), one of them")
	case f.PID < 0 || (f.PID > 0 && !p.processExists(f.PID)):
		return fmt.Errorf("pid %d: no such process", f.PID)
	case f.Frequency < 1 || f.Frequency > maxFlameHz:
		return fmt.Errorf("frequency %d: want 1 to %d Hz", f.Frequency, maxFlameHz)
	case !slices.Contains([]string{"fp", "dwarf", "lbr"}, f.CallGraph):
		return fmt.Errorf("call_graph %q: want fp, dwarf or lbr", f.CallGraph)
	}
	return checkTotal(f.Duration, Duration(time.Second), time.Duration(f.Duration))
}

// plan records the stacks once, folded (so that two runs can be compared
// later), and draws the viewer from them.
func (f *FlameParams) plan(p policy, dir string) plan {
	folded := filepath.Join(dir, FoldedName)
	args := []string{"flame"}
	if f.All {
		args = append(args, "--all")
	} else {
		args = append(args, "--pid="+strconv.Itoa(f.PID))
	}
	args = append(args, "--duration="+f.Duration.String(), "--frequency="+strconv.Itoa(f.Frequency),
		"--call-graph="+f.CallGraph, "-o", folded)
	draw := []string{"flame", folded, "-o", filepath.Join(dir, "flame.html")}
	return plan{steps: []step{{args: args}, {args: draw}}, estimate: time.Duration(f.Duration)}
}

// ReportParams are a report run's: `latscope report` of the server's own
// archive, as JSON and as the HTML heat maps.
type ReportParams struct {
	Series string `json:"series,omitempty"`
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
}

func (r *ReportParams) check(p policy) error {
	for _, f := range []struct{ name, v string }{{"series", r.Series}, {"from", r.From}, {"to", r.To}} {
		if err := checkText(f.name, f.v); err != nil {
			return err
		}
	}
	var from, to time.Time
	var err error
	if r.From != "" {
		if from, err = source.ParseWhen(r.From, p.now, time.UTC); err != nil {
			return fmt.Errorf("from: %w", err)
		}
	}
	if r.To != "" {
		if to, err = source.ParseWhen(r.To, p.now, time.UTC); err != nil {
			return fmt.Errorf("to: %w", err)
		}
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		return errors.New("from is not before to")
	}
	return nil
}

func (r *ReportParams) plan(p policy, dir string) plan {
	args := []string{"report", p.data}
	for _, f := range []struct{ flag, v string }{{"--series=", r.Series}, {"--from=", r.From}, {"--to=", r.To}} {
		if f.v != "" {
			args = append(args, f.flag+f.v)
		}
	}
	return plan{steps: []step{
		{args: append(slices.Clone(args), "-o", filepath.Join(dir, "report.json"))},
		{args: append(slices.Clone(args), "-o", filepath.Join(dir, "report.html"))},
	}}
}

func setDefault(d *Duration, v time.Duration) {
	if *d == 0 {
		*d = Duration(v)
	}
}

// checkTotal bounds a run's step duration, interval and planned time.
func checkTotal(step, interval Duration, total time.Duration) error {
	switch {
	case step <= 0:
		return errors.New("duration must be positive")
	case interval <= 0 || interval > step:
		return fmt.Errorf("interval %s: want positive and at most the duration %s", interval, step)
	case total > MaxDuration:
		return fmt.Errorf("the run would take %s: at most %s", total, MaxDuration)
	}
	return nil
}

// checkText accepts printable strings of up to 256 bytes.
func checkText(name, v string) error {
	if len(v) > maxTextLen {
		return fmt.Errorf("%s: longer than %d bytes", name, maxTextLen)
	}
	for _, r := range v {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("%s: unprintable character %U", name, r)
		}
	}
	return nil
}

// allowedDir resolves dir (absolute, symlinks followed) and accepts it if
// it is, or is below, one of the allowed directories.
func allowedDir(dir string, allowed []string) (string, error) {
	if dir == "" {
		return "", errors.New("dir is required")
	}
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("dir %q: want an absolute path", dir)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(dir))
	if err != nil {
		return "", fmt.Errorf("dir %q: %w", dir, errors.Unwrap(err))
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("dir %q is not a directory: iotest runs measure a scratch file in a directory", dir)
	}
	for _, a := range allowed {
		if rel, err := filepath.Rel(a, real); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return real, nil
		}
	}
	return "", fmt.Errorf("dir %q is not in the configured runs.iotest_dirs (%s)", dir, strings.Join(allowed, ", "))
}

// allowedTarget accepts host:port if the configuration lists it, or, when
// it lists none, if host is a loopback address.
func allowedTarget(target string, p policy) (string, error) {
	host, port, err := net.SplitHostPort(target)
	if err != nil || host == "" || strings.HasPrefix(host, "-") {
		return "", fmt.Errorf("target %q: want HOST:PORT", target)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("target %q: port %q: want 1 to 65535", target, port)
	}
	norm := net.JoinHostPort(strings.ToLower(host), port)
	if p.loopbackOnly {
		if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || strings.EqualFold(host, "localhost") {
			return norm, nil
		}
		return "", fmt.Errorf("target %q: without runs.nettest_targets only loopback addresses are allowed", target)
	}
	for _, t := range p.nettestTargets {
		if strings.EqualFold(t, norm) {
			return norm, nil
		}
	}
	return "", fmt.Errorf("target %q is not in the configured runs.nettest_targets (%s)", target, strings.Join(p.nettestTargets, ", "))
}

func joinNumbers[T int | float64](v []T) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(float64(x), 'g', -1, 64)
	}
	return strings.Join(s, ",")
}
