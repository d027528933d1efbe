// Package decode renames database-internal functions in folded stacks
// into what a DBA reads: Oracle rowsource functions (qer*) become
// execution-plan operations ("HASH JOIN (qerhnFetch)"), PostgreSQL
// executor functions become plan nodes ("Seq Scan (ExecScan)"). The
// function name stays in the decoded frame so that search still finds it.
//
// Only frames of the database binary are decoded, so that a Linux kernel
// function such as ksys_read is never read as an Oracle "k" layer:
//   - perf input: the collapser marks frames whose module is the database
//     binary with Marker (see MarkFrame) and Options.Marked is set;
//   - folded and gdb input carry no module: every frame is taken as the
//     database's except kernel ("_[k]"), JIT ("_[j]") frames and frames
//     below a kernel entry point (entry_SYSCALL_64, asm_exc_page_fault...).
//
// The mapping tables are versioned Go data (OracleTableVersion,
// PostgresTableVersion) matched by longest anchored prefix (Oracle) or
// whole name (PostgreSQL nodes).
package decode

import (
	"fmt"
	"path"
	"strings"

	"github.com/latscope/latscope/flame"
)

// Databases and views accepted in Options.
const (
	Oracle   = "oracle"
	Postgres = "postgres"

	ViewAll        = ""
	ViewPlan       = "plan"
	ViewPlanLayers = "plan+layers"
)

// Marker is appended by a collapser to frames of the database binary
// (like "_[k]" for kernel frames); Apply removes it from every frame.
const Marker = "_[db]"

// Options choose the database and the view.
type Options struct {
	// DB is Oracle or Postgres.
	DB string
	// View is ViewAll (rename, keep every frame), ViewPlan (keep only
	// plan operations under their fetch/executor root) or ViewPlanLayers
	// (also the database's own layer functions).
	View string
	// Marked says frames of the database binary carry Marker: only they
	// are decoded.
	Marked bool
	// Other, when set, is the single frame given to stacks that keep no
	// frame in a plan view (by default they are dropped, so the graph
	// shows plan time only).
	Other string
}

// Validate reports an unknown database or view.
func (o Options) Validate() error {
	switch o.DB {
	case Oracle, Postgres:
	default:
		return fmt.Errorf("unknown database %q (want %s or %s)", o.DB, Oracle, Postgres)
	}
	switch o.View {
	case ViewAll, ViewPlan, ViewPlanLayers:
	default:
		return fmt.Errorf("unknown view %q (want %q or %q)", o.View, ViewPlan, ViewPlanLayers)
	}
	return nil
}

// IsDBModule reports whether a perf module path is the database binary
// ("/u01/app/oracle/product/19c/bin/oracle", "/usr/lib/postgresql/15/bin/postgres").
func IsDBModule(db, module string) bool {
	base := path.Base(module)
	switch db {
	case Oracle:
		return base == "oracle"
	case Postgres:
		return base == "postgres" || base == "postgres.debug"
	}
	return false
}

// MarkFrame returns the per-frame hook for a collapser: it appends Marker
// to frames whose module is db's binary and returns other names as they are.
func MarkFrame(db string) func(name, module string) string {
	return func(name, module string) string {
		if IsDBModule(db, module) {
			return name + Marker
		}
		return name
	}
}

// kind says what a decoded frame is, for the plan views.
type kind uint8

const (
	kindOther kind = iota
	kindLayer      // a database layer function (plan+layers)
	kindPlan       // a plan operation or its root
)

// frame is one decoded frame.
type frame struct {
	name string
	kind kind
}

// Apply decodes p for opts.DB and returns a new profile (p when the
// options are invalid: call Validate first). Stack order of first
// appearance and differential base counts are kept; stacks that become
// equal are summed.
func Apply(p *flame.Profile, opts Options) *flame.Profile {
	if opts.Validate() != nil {
		return p
	}
	d := newDecoder(opts)
	if opts.DB == Postgres {
		d.collectPostgresVotes(p)
	}
	out := flame.New()
	out.Diff = p.Diff
	var buf []string
	for _, s := range p.InOrder() {
		buf = d.stack(s.Frames, buf[:0])
		if len(buf) == 0 {
			if opts.Other == "" {
				continue
			}
			buf = append(buf, opts.Other)
		}
		out.AddDiff(strings.Join(buf, ";"), s.Base, s.Count)
	}
	return out
}

type decoder struct {
	opts  Options
	cache map[string]frame // static (context-free) decoding per frame name
	votes map[string]map[string]int64
}

func newDecoder(opts Options) *decoder {
	return &decoder{opts: opts, cache: map[string]frame{}, votes: map[string]map[string]int64{}}
}

// rawFrame is a frame of the input with its database flag.
type rawFrame struct {
	name string // without Marker
	end  int    // offset of the frame's end in the stack (prefix key)
	db   bool
}

// split cuts a stack into frames and decides which come from the
// database binary.
func (d *decoder) split(frames string, out []rawFrame) []rawFrame {
	kernel := false
	for off := 0; off <= len(frames); {
		n := strings.IndexByte(frames[off:], ';')
		if n < 0 {
			n = len(frames) - off
		}
		name := frames[off : off+n]
		db := false
		if d.opts.Marked {
			name, db = strings.CutSuffix(name, Marker)
		} else {
			kernel = kernel || isKernelEntry(name)
			db = !kernel && !strings.HasSuffix(name, "_[k]") && !strings.HasSuffix(name, "_[j]")
		}
		out = append(out, rawFrame{name: name, end: off + n, db: db})
		off += n + 1
	}
	return out
}

// kernelEntries start the kernel part of a stack in folded input that
// has no "_[k]" annotations (stackcollapse-perf.pl's default).
var kernelEntries = []string{
	"entry_SYSCALL", "do_syscall_64", "system_call", "__x64_sys_", "__do_sys_",
	"asm_exc_", "asm_sysvec_", "asm_common_interrupt", "page_fault", "async_page_fault",
	"apic_timer_interrupt", "ret_from_fork", "ret_from_intr", "common_interrupt",
}

func isKernelEntry(name string) bool {
	for _, e := range kernelEntries {
		if strings.HasPrefix(name, e) {
			return true
		}
	}
	return false
}

// stack decodes one stack into out.
func (d *decoder) stack(frames string, out []string) []string {
	raw := d.split(frames, make([]rawFrame, 0, 32))
	for i, f := range raw {
		df := frame{name: f.name}
		if f.db {
			df = d.decodeFrame(frames, raw, i)
		}
		switch d.opts.View {
		case ViewAll:
			out = append(out, df.name)
		case ViewPlan:
			if df.kind == kindPlan {
				out = append(out, df.name)
			}
		case ViewPlanLayers:
			if df.kind != kindOther {
				out = append(out, df.name)
			}
		}
	}
	return out
}

func (d *decoder) decodeFrame(frames string, raw []rawFrame, i int) frame {
	name := raw[i].name
	if d.opts.DB == Postgres {
		if node, ok := d.postgresContext(frames, raw, i); ok {
			return frame{name: node + " (" + name + ")", kind: kindPlan}
		}
	}
	if f, ok := d.cache[name]; ok {
		return f
	}
	var f frame
	if d.opts.DB == Oracle {
		f = decodeOracle(name)
	} else {
		f = decodePostgres(name)
	}
	d.cache[name] = f
	return f
}

// longestPrefix returns the value of the longest key of table that
// prefixes name.
func longestPrefix(table map[string]string, name string) (key, val string, ok bool) {
	for n := len(name); n > 0; n-- {
		if v, found := table[name[:n]]; found {
			return name[:n], v, true
		}
	}
	return "", "", false
}

// pgoPrefix is prepended by profile-guided optimisation to some Oracle
// function names (os_explain strips it too).
func stripPGO(name string) string {
	if !strings.HasPrefix(name, "__PGOSF") {
		return name
	}
	rest := name[len("__PGOSF"):]
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i > 0 && i < len(rest) && rest[i] == '_' {
		return rest[i+1:]
	}
	return name
}

func decodeOracle(name string) frame {
	fn := stripPGO(name)
	switch {
	case strings.HasPrefix(fn, "qer"):
		if _, op, ok := longestPrefix(oracleRowsources, fn); ok {
			return frame{name: op + " (" + name + ")", kind: kindPlan}
		}
		return frame{name: name, kind: kindPlan}
	case strings.HasPrefix(fn, "opifch"):
		return frame{name: oracleFetch["opifch"] + " (" + name + ")", kind: kindPlan}
	case strings.HasPrefix(fn, "k"), strings.Contains(strings.ToLower(fn), "exe"):
		return frame{name: name, kind: kindLayer}
	}
	return frame{name: name}
}

func decodePostgres(name string) frame {
	if node, ok := postgresNodes[name]; ok {
		return frame{name: node + " (" + name + ")", kind: kindPlan}
	}
	if root, ok := postgresRoots[name]; ok {
		return frame{name: root + " (" + name + ")", kind: kindPlan}
	}
	if _, _, ok := longestPrefix(postgresLayers, name); ok {
		return frame{name: name, kind: kindLayer}
	}
	return frame{name: name}
}

// Describe returns a tooltip text for a frame (raw or decoded), or "" when
// nothing is known about it. Kernel and JIT frames are never described.
func Describe(db, name string) string {
	name = strings.TrimSuffix(name, Marker)
	if strings.HasSuffix(name, "_[k]") || strings.HasSuffix(name, "_[j]") {
		return ""
	}
	if i := strings.LastIndex(name, " ("); i >= 0 && strings.HasSuffix(name, ")") {
		name = name[i+2 : len(name)-1]
	}
	switch db {
	case Oracle:
		return describeOracle(stripPGO(name))
	case Postgres:
		return describePostgres(name)
	}
	return ""
}

func describeOracle(fn string) string {
	var parts []string
	for n := 1; n <= len(fn); n++ {
		if v, ok := oracleLayers[fn[:n]]; ok {
			parts = append(parts, v)
		}
	}
	if strings.HasPrefix(fn, "qer") {
		if key, op, ok := longestPrefix(oracleRowsources, fn); ok {
			s := "plan operation " + op + " (rowsource " + key + ")"
			if note := oracleNotes[key]; note != "" {
				s += "; " + note
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " > ")
}

func describePostgres(fn string) string {
	var parts []string
	if node, ok := postgresNodes[fn]; ok {
		parts = append(parts, "plan node "+node)
	}
	if _, v, ok := longestPrefix(postgresLayers, fn); ok {
		parts = append(parts, v)
	}
	return strings.Join(parts, "; ")
}
