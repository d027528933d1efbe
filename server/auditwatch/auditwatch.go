// Package auditwatch runs latscope serve's audit watches: each follows a
// set of Oracle audit files, Linux audit logs and login logs with
// audit/correlate, keeps the chains it finds (who started or stopped a
// database, from which login), appends every new or improved chain as one
// JSON line to DATA/auditwatch/NAME.jsonl for a log pipeline, and answers
// the API and the timeline page.
//
// A watch that fails (a file unreadable, a rotation gone wrong) restarts
// with capped exponential backoff and reads its files again from the
// start; chains already stored are recognised by their subject and not
// written twice.
package auditwatch

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/latscope/latscope/audit/correlate"
	"github.com/latscope/latscope/server/jobs"
)

// Follow reads a watch's files and calls emit with every chain as its
// subject is seen and again whenever the chain improves, until ctx ends
// (nil) or the files cannot be read (an error).
type Follow func(ctx context.Context, emit func(correlate.Chain) error) error

// Watch is one configured audit watch.
type Watch struct {
	Name  string
	Files []string
	// DB, Since: the watch's filter, shown in its status.
	DB     string
	Follow Follow
}

// Options are every watch's settings.
type Options struct {
	// Data is the data directory; chains go to Data/auditwatch/NAME.jsonl.
	Data string
	// MaxChains bounds the chains a watch keeps in memory and answers
	// (0: DefaultMaxChains); the file keeps them all.
	MaxChains int
	// Backoff bounds the wait before a failed watch restarts, as a failed
	// job's (zero: jobs.DefaultBackoff, 1 s doubling to 1 min).
	Backoff jobs.Backoff
	Logger  *slog.Logger
}

// DefaultMaxChains: database starts, stops and SYSDBA connections are
// rare; ten thousand is years of them on a busy host.
const DefaultMaxChains = 10000

// Status is what the API shows of a watch.
type Status struct {
	Name   string   `json:"name"`
	Files  []string `json:"files"`
	DB     string   `json:"db,omitempty"`
	State  string   `json:"state"` // starting, following, restarting, stopped
	Chains int      `json:"chains"`
	// Stored is the JSON-lines file every chain is appended to.
	Stored    string     `json:"stored"`
	LastChain *time.Time `json:"last_chain,omitempty"`
	Error     string     `json:"error,omitempty"`
	Restarts  int        `json:"restarts"`
}

// Set is the server's audit watches.
type Set struct {
	opts    Options
	watches []*watch
	byName  map[string]*watch
}

type watch struct {
	def  Watch
	path string

	mu     sync.Mutex
	chains []correlate.Chain // subject time order, at most MaxChains
	index  map[string]int    // subject key → position in chains
	// stored is every subject of the file (beyond the chains kept in
	// memory too), with its last chain's hash: a restart re-reads the
	// files from their start, and must store none of them again.
	stored   map[string]uint64
	state    string
	err      string
	restarts int
	max      int
	file     *os.File
}

// Open prepares the watches: each one's stored chains are read back (the
// newest MaxChains of them), so that the API answers at once and a
// restart does not store them again.
func Open(opts Options, defs []Watch) (*Set, error) {
	if opts.MaxChains <= 0 {
		opts.MaxChains = DefaultMaxChains
	}
	if opts.Backoff == (jobs.Backoff{}) {
		opts.Backoff = jobs.DefaultBackoff()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	dir := filepath.Join(opts.Data, "auditwatch")
	if len(defs) > 0 {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("audit watches: %w", err)
		}
	}
	s := &Set{opts: opts, byName: map[string]*watch{}}
	for _, d := range defs {
		if d.Name == "" || d.Name != filepath.Base(d.Name) || d.Name[0] == '.' {
			s.Close()
			return nil, fmt.Errorf("audit watch %q: the name must be usable as a file name", d.Name)
		}
		if _, dup := s.byName[d.Name]; dup {
			s.Close()
			return nil, fmt.Errorf("audit watch %q: defined twice", d.Name)
		}
		w := &watch{def: d, path: filepath.Join(dir, d.Name+".jsonl"), index: map[string]int{}, stored: map[string]uint64{}, state: "starting"}
		if err := w.load(opts.MaxChains, opts.Logger); err != nil {
			s.Close()
			return nil, err
		}
		f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("audit watch %q: %w", d.Name, err)
		}
		w.file = f
		s.watches = append(s.watches, w)
		s.byName[d.Name] = w
	}
	return s, nil
}

// Close closes the stored files; call it after Run has returned.
func (s *Set) Close() {
	for _, w := range s.watches {
		if w.file != nil {
			w.file.Close()
		}
	}
}

// Run follows every watch until ctx ends.
func (s *Set) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, w := range s.watches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.run(ctx, w)
		}()
	}
	wg.Wait()
}

func (s *Set) run(ctx context.Context, w *watch) {
	failures := 0
	for {
		w.setState("following", "")
		began := time.Now()
		err := w.def.Follow(ctx, w.add)
		if ctx.Err() != nil {
			w.setState("stopped", "")
			return
		}
		if err == nil {
			err = errors.New("the files ended (follow returned)")
		}
		if time.Since(began) > s.opts.Backoff.Max {
			failures = 0 // it ran well for a while: start the backoff over
		}
		failures++
		delay := s.opts.Backoff.Delay(failures)
		s.opts.Logger.Warn("audit watch failed, restarting", "watch", w.def.Name, "error", err.Error(), "in", delay.String())
		w.mu.Lock()
		w.restarts++
		w.mu.Unlock()
		w.setState("restarting", err.Error())
		select {
		case <-ctx.Done():
			w.setState("stopped", "")
			return
		case <-time.After(delay):
		}
	}
}

func (w *watch) setState(state, err string) {
	w.mu.Lock()
	w.state = state
	if err != "" || state == "following" && w.err != "" {
		w.err = err
	}
	w.mu.Unlock()
}

// SubjectKey identifies a chain's subject across re-reads and rotations
// (file names and line numbers change, the record does not).
func SubjectKey(s correlate.Subject) string {
	return fmt.Sprintf("%s|%s|%s|%s|%s|%d|%s", s.Time.UTC().Format(time.RFC3339Nano), s.Kind, s.Host, s.DB, s.Action, s.PID, s.Command)
}

// add stores a chain unless the same chain is stored already; a chain of
// a known subject that differs (a link arrived later) replaces it and is
// appended again: the file's last line of a subject is its best chain.
func (w *watch) add(c correlate.Chain) error {
	key := SubjectKey(c.Subject)
	line, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("audit watch %q: %w", w.def.Name, err)
	}
	sum := lineHash(line)
	w.mu.Lock()
	defer w.mu.Unlock()
	if h, ok := w.stored[key]; ok && h == sum {
		return nil
	}
	// Stored first: a chain the file lacks is not taken as known after a
	// failed write, so the restart stores it.
	if _, err := w.file.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("audit watch %q: storing a chain: %w", w.def.Name, err)
	}
	w.stored[key] = sum
	w.keep(key, c)
	return nil
}

// keep puts a chain in memory: in place of its subject's, or inserted.
func (w *watch) keep(key string, c correlate.Chain) {
	if i, ok := w.index[key]; ok {
		w.chains[i] = c
		return
	}
	w.insert(c)
}

func lineHash(line []byte) uint64 {
	h := fnv.New64a()
	h.Write(line)
	return h.Sum64()
}

// insert places a new chain in subject time order and drops the oldest
// beyond the bound. Chains are rare (database starts and stops): the
// index is rebuilt each time.
func (w *watch) insert(c correlate.Chain) {
	i := sort.Search(len(w.chains), func(i int) bool { return w.chains[i].Subject.Time.After(c.Subject.Time) })
	w.chains = slices.Insert(w.chains, i, c)
	if over := len(w.chains) - w.max; over > 0 {
		w.chains = slices.Delete(w.chains, 0, over)
	}
	clear(w.index)
	for i, c := range w.chains {
		w.index[SubjectKey(c.Subject)] = i
	}
}

// load reads the stored chains back: the last line of each subject wins,
// the newest max subjects are kept. An unreadable line (a torn last line
// after a crash while writing) is skipped and logged with its line.
func (w *watch) load(max int, log *slog.Logger) error {
	w.max = max
	f, err := os.Open(w.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("audit watch %q: %w", w.def.Name, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var c correlate.Chain
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			log.Warn("audit watch: an unreadable stored line skipped", "watch", w.def.Name, "file", w.path, "line", n, "error", err.Error())
			continue
		}
		key := SubjectKey(c.Subject)
		// The hash of the line as add would write it now, so that an
		// unchanged chain read again matches.
		line, _ := json.Marshal(c)
		w.stored[key] = lineHash(line)
		w.keep(key, c)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("audit watch %q: reading %s: %w", w.def.Name, w.path, err)
	}
	return nil
}

// Statuses lists the watches in configuration order.
func (s *Set) Statuses() []Status {
	out := make([]Status, 0, len(s.watches))
	for _, w := range s.watches {
		out = append(out, w.status())
	}
	return out
}

func (w *watch) status() Status {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := Status{Name: w.def.Name, Files: slices.Clone(w.def.Files), DB: w.def.DB, State: w.state,
		Chains: len(w.chains), Stored: w.path, Error: w.err, Restarts: w.restarts}
	if st.Files == nil {
		st.Files = []string{}
	}
	if n := len(w.chains); n > 0 {
		t := w.chains[n-1].Subject.Time
		st.LastChain = &t
	}
	return st
}

// ErrNoWatch is the error of a watch name not configured.
var ErrNoWatch = errors.New("no such audit watch")

// Chains returns a watch's chains whose subject is within [since, until]
// (zero: open), in time order.
func (s *Set) Chains(name string, since, until time.Time) ([]correlate.Chain, Status, error) {
	w, ok := s.byName[name]
	if !ok {
		return nil, Status{}, fmt.Errorf("%w %q", ErrNoWatch, name)
	}
	w.mu.Lock()
	out := make([]correlate.Chain, 0, len(w.chains))
	for _, c := range w.chains {
		t := c.Subject.Time
		if (!since.IsZero() && t.Before(since)) || (!until.IsZero() && t.After(until)) {
			continue
		}
		out = append(out, c)
	}
	w.mu.Unlock()
	return out, w.status(), nil
}
