// Package profile builds the response-time profile of Oracle extended SQL
// traces (event 10046), as Method R defines it: a trace's response time
// (its span, last tim − first tim) split into the CPU of its top-level
// database calls, its waits by event (inside calls and between them) and
// the time nothing in the trace accounts for; and per-SQL resource
// profiles (executions, rows, elapsed, CPU, waits by event, the calls'
// latency distribution), as tkprof and TVD$XTAT print them.
package profile

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/oracle10046"
)

// Profile is the response-time profile of one or more traces. Times are in
// microseconds, as the traces write them (10g and later).
type Profile struct {
	Traces []Trace `json:"traces"`
	// Span is how the spans were measured.
	Span SpanRule `json:"span_rule"`
	// SpanUS is the sum of the traces' spans: the response time profiled.
	SpanUS int64 `json:"span_us"`
	// TimSpanUS and StartSpanUS sum the traces' spans by either rule.
	TimSpanUS   int64 `json:"tim_span_us"`
	StartSpanUS int64 `json:"start_span_us"`
	// CPUUS is the CPU of top-level (dep=0) calls, whose c= includes the
	// CPU of the recursive calls they made: counting every depth would
	// count recursive CPU twice.
	CPUUS int64 `json:"cpu_us"`
	// OrphanCPUUS is the CPU of recursive calls whose top-level call the
	// trace never wrote (OrphanCalls of them: a session traced until
	// logoff, whose audit runs in the logoff call): in no top-level call's
	// c=, so counted apart.
	OrphanCPUUS int64 `json:"orphan_cpu_us"`
	OrphanCalls int64 `json:"orphan_calls"`
	// Events are the waits by event, sorted by time waited.
	Events []Event `json:"events"`
	// WaitUS is the time of all waits.
	WaitUS int64 `json:"wait_us"`
	// UnaccountedUS is SpanUS − CPUUS − OrphanCPUUS − WaitUS: time the
	// trace does not explain (CPU not measured in the c= granularity, time
	// outside calls and waits, preemption). Negative when counted time
	// exceeds the span.
	UnaccountedUS int64 `json:"unaccounted_us"`
	// Transactions sums the traces' XCTEND lines.
	Transactions Transactions `json:"transactions"`
	// Calls are the database calls by type and depth (top-level and
	// recursive), as tkprof's OVERALL TOTALS: own figures, like the
	// statements'.
	Calls []CallTotal `json:"calls"`
	// Statements are sorted by elapsed time, most first.
	Statements []*Statement `json:"statements"`
}

// Trace is one input's clock span.
type Trace struct {
	Name     string `json:"name"`
	FirstTim int64  `json:"first_tim"`
	LastTim  int64  `json:"last_tim"`
	// EarliestStart is the earliest start a line implies: the least tim −
	// e of a call, tim − ela of a wait, or tim.
	EarliestStart int64 `json:"earliest_start"`
	// SpanUS sums the spans, by the profile's rule, of the trace's
	// processes: one, or the sections of a trcsess merge, whose
	// sessions may have run at the same time.
	SpanUS int64 `json:"span_us"`
	// TimSpanUS and StartSpanUS sum them by either rule.
	TimSpanUS   int64 `json:"tim_span_us"`
	StartSpanUS int64 `json:"start_span_us"`
	Processes   int   `json:"processes"`
	// Sessions are the trace's processes (one, "" outside a trcsess
	// merge) with their transactions; Transactions sums them.
	Sessions     []Session    `json:"sessions"`
	Transactions Transactions `json:"transactions"`
}

// Session is one process of a trace.
type Session struct {
	Process string `json:"process"`
	Transactions
}

// SpanRule is how a trace's span (its response time) is measured.
type SpanRule string

const (
	// SpanTim is last tim − first tim: the trace's clock, no call's
	// figures in it (the default).
	SpanTim SpanRule = "tim"
	// SpanStart is last tim − the earliest start a line implies (tim − e,
	// tim − ela): the first call's work before its tim counts, as
	// TVD$XTAT's duration counts it.
	SpanStart SpanRule = "start"
)

// ParseSpanRule reads a --span value.
func ParseSpanRule(s string) (SpanRule, error) {
	switch r := SpanRule(s); r {
	case SpanTim, SpanStart:
		return r, nil
	}
	return "", fmt.Errorf("span %q: want %s or %s", s, SpanTim, SpanStart)
}

// Options are what Build reads the traces with.
type Options struct {
	Read source.Options
	// Span is the span rule; empty is SpanTim.
	Span SpanRule
}

// Event is the time waited on one event.
type Event struct {
	Name  string `json:"event"`
	Count int64  `json:"count"`
	US    int64  `json:"us"`
	MaxUS int64  `json:"max_us"`
	// WithinCallsUS waited inside top-level calls (their e= includes it);
	// BetweenCallsUS between them (SQL*Net message from client: the
	// application's time, or the user's think time).
	WithinCallsUS  int64 `json:"within_calls_us"`
	BetweenCallsUS int64 `json:"between_calls_us"`
}

// CallTotal sums the calls of one type at one kind of depth.
type CallTotal struct {
	Type      string `json:"type"`
	Recursive bool   `json:"recursive"`
	Figures
}

// Figures are the sums tkprof prints per call type.
type Figures struct {
	Count     int64 `json:"count"`
	CPUUS     int64 `json:"cpu_us"`
	ElapsedUS int64 `json:"elapsed_us"`
	Disk      int64 `json:"disk"`
	Query     int64 `json:"query"`
	Current   int64 `json:"current"`
	Rows      int64 `json:"rows"`
}

func (f *Figures) add(c oracle10046.Call) {
	f.Count++
	f.CPUUS += c.C
	f.ElapsedUS += c.E
	f.Disk += c.P
	f.Query += c.CR
	f.Current += c.CU
	f.Rows += c.R
}

// Statement is one SQL statement's resource profile: every cursor that
// parsed the same sqlid (hash value before 11g), in every trace.
type Statement struct {
	// Key is the sqlid, "hv:N" before 11g, or "cursor #N" for a cursor
	// whose PARSING IN CURSOR line is not in the trace.
	Key   string `json:"key"`
	SQLID string `json:"sqlid,omitempty"`
	HV    string `json:"hv,omitempty"`
	Dep   int64  `json:"dep"`
	Text  string `json:"text"`
	// Parse, Exec and Fetch are tkprof's rows; Close is separate because
	// tkprof leaves CLOSE out of its totals.
	Parse Figures `json:"parse"`
	Exec  Figures `json:"exec"`
	Fetch Figures `json:"fetch"`
	Close Figures `json:"close"`
	// Total sums Parse, Exec and Fetch: tkprof's "total" row. Like
	// tkprof's, every figure but rows is the statement's own: the work of
	// the recursive calls it made is in their statements.
	Total Figures `json:"total"`
	// InclusiveElapsedUS and InclusiveCPUUS include the recursive calls'
	// (the calls' e= and c= as written).
	InclusiveElapsedUS int64 `json:"inclusive_elapsed_us"`
	InclusiveCPUUS     int64 `json:"inclusive_cpu_us"`
	// Executions are EXEC calls; the per-execution figures divide by them.
	Executions       int64   `json:"executions"`
	ElapsedPerExecUS float64 `json:"elapsed_per_exec_us"`
	CPUPerExecUS     float64 `json:"cpu_per_exec_us"`
	RowsPerExec      float64 `json:"rows_per_exec"`
	// Events are the waits written for this statement's cursor.
	Events []Event `json:"events"`
	// Latency is the distribution of its calls' elapsed times (e=), CPU
	// of their CPU times (c=), both as written (recursive calls' included).
	Latency Distribution `json:"call_latency"`
	CPU     Distribution `json:"call_cpu"`

	events  map[string]*Event
	elapsed callSample
	cpu     callSample
}

// Distribution summarises call latencies in µs: percentiles and
// power-of-two buckets [LowUS, 2·LowUS).
type Distribution struct {
	Count   int64    `json:"count"`
	P50US   float64  `json:"p50_us"`
	P90US   float64  `json:"p90_us"`
	P99US   float64  `json:"p99_us"`
	MaxUS   int64    `json:"max_us"`
	Buckets []Bucket `json:"buckets"`
}

// Bucket counts calls in [LowUS, 2·LowUS) (the first: [0, 1) µs).
type Bucket struct {
	LowUS float64 `json:"low_us"`
	Count int64   `json:"count"`
}

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

// Input is one trace to read.
type Input = source.Input

// Build reads the traces and returns their profile.
func Build(ctx context.Context, inputs []Input, opts Options) (*Profile, error) {
	b := &builder{byKey: map[string]*Statement{}, events: map[string]*Event{}, calls: map[callKey]*CallTotal{}}
	b.p.Span = cmp.Or(opts.Span, SpanTim)
	for _, in := range inputs {
		t := &traceReader{b: b, name: in.Name, sessions: map[string]*session{}}
		if err := oracle10046.ReadCalls(ctx, in, opts.Read, t); err != nil {
			return nil, fmt.Errorf("%s: %w", in.Name, err)
		}
		tr := t.trace(b.p.Span)
		b.p.Transactions.add(tr.Transactions)
		b.p.Traces = append(b.p.Traces, tr)
		b.p.SpanUS += tr.SpanUS
		b.p.TimSpanUS += tr.TimSpanUS
		b.p.StartSpanUS += tr.StartSpanUS
	}
	return b.finish(), nil
}

type callKey struct {
	typ       oracle10046.CallType
	recursive bool
}

// builder accumulates the profile across traces.
type builder struct {
	p      Profile
	byKey  map[string]*Statement
	order  []*Statement
	events map[string]*Event
	calls  map[callKey]*CallTotal
}

func (b *builder) statement(key string) *Statement {
	if s, ok := b.byKey[key]; ok {
		return s
	}
	s := &Statement{Key: key, Dep: -1, events: map[string]*Event{}, elapsed: newCallSample(), cpu: newCallSample()}
	b.byKey[key] = s
	b.order = append(b.order, s)
	return s
}

func eventOf(m map[string]*Event, name string) *Event {
	e, ok := m[name]
	if !ok {
		e = &Event{Name: name}
		m[name] = e
	}
	return e
}

// traceReader reads one trace, one session per trcsess process section:
// cursor numbers and tim clocks are a process's own.
type traceReader struct {
	b        *builder
	name     string
	sessions map[string]*session
	order    []*session
}

// session is one process's part of a trace.
type session struct {
	b            *builder
	process      string
	transactions Transactions
	name         string // for cursors without a PARSING line
	cursors      map[int64]*Statement
	first, last  int64
	start        int64 // the earliest start a line implies
	seen         bool
	// pending are the waits since the last top-level call: the next
	// top-level call tells whether they were inside it or before it.
	pending []pendingWait
	// recursive places the recursive calls since the last top-level call
	// among the pending waits: the first is the first line the next
	// top-level call wrote of its own work.
	recursive recursiveMarks
	// lastTop is the cursor of the last top-level call, if any.
	lastTop    int64
	hasLastTop bool
	// children[d] sums the calls at depth d since the last call at depth
	// d−1, which they were made by: its own figures exclude them.
	children []Figures
}

// maxSessions bounds the process sections kept per trace; the sections
// past it are one session.
const (
	maxSessions     = 4096
	overflowSession = "…"
)

func (t *traceReader) session(process string) *session {
	if s, ok := t.sessions[process]; ok {
		return s
	}
	if len(t.sessions) >= maxSessions {
		process = overflowSession
		if s, ok := t.sessions[process]; ok {
			return s
		}
	}
	name := t.name
	if process != "" {
		name += " pid " + process
	}
	s := &session{b: t.b, process: process, name: name, cursors: map[int64]*Statement{}}
	t.sessions[process] = s
	t.order = append(t.order, s)
	return s
}

// trace closes the sessions and sums their spans and transactions.
func (t *traceReader) trace(rule SpanRule) Trace {
	tr := Trace{Name: t.name, Processes: len(t.order)}
	seen := false
	for _, s := range t.order {
		ss := Session{Process: s.process, Transactions: s.transactions}
		tr.Sessions = append(tr.Sessions, ss)
		tr.Transactions.add(ss.Transactions)
		s.flushWaits(nil)
		calls, cpu := s.orphans()
		t.b.p.OrphanCalls += calls
		t.b.p.OrphanCPUUS += cpu
		if !s.seen {
			continue
		}
		tr.TimSpanUS += s.last - s.first
		tr.StartSpanUS += s.last - s.start
		if !seen {
			tr.FirstTim, tr.LastTim, tr.EarliestStart, seen = s.first, s.last, s.start, true
		}
		tr.FirstTim, tr.LastTim, tr.EarliestStart = min(tr.FirstTim, s.first), max(tr.LastTim, s.last), min(tr.EarliestStart, s.start)
	}
	tr.SpanUS = tr.TimSpanUS
	if rule == SpanStart {
		tr.SpanUS = tr.StartSpanUS
	}
	return tr
}

// Cursor implements oracle10046.CallHandler.
func (t *traceReader) Cursor(c oracle10046.Cursor) { t.session(c.Process).cursor(c) }

// Call implements oracle10046.CallHandler.
func (t *traceReader) Call(c oracle10046.Call) { t.session(c.Process).call(c) }

// Wait implements oracle10046.CallHandler.
func (t *traceReader) Wait(w oracle10046.Wait) { t.session(w.Process).wait(w) }

// Transaction implements oracle10046.CallHandler: XCTEND lines.
func (t *traceReader) Transaction(x oracle10046.Transaction) {
	n := Transactions{Commits: 1}
	if x.Rollback {
		n = Transactions{Rollbacks: 1}
	}
	if x.ReadOnly {
		n.ReadOnly = 1
	}
	t.session(x.Process).transactions.add(n)
}

type pendingWait struct {
	event, stmt      *Event
	cursor, ela, tim int64
}

// recursiveMarks place the recursive calls since the last top-level call
// among the pending waits.
type recursiveMarks struct {
	set        bool
	firstWaits int   // pending waits written before the first
	firstStart int64 // the first one's tim − e
	lastWaits  int   // pending waits written before the last
}

// see takes in a line's tim and how long it lasted until then.
func (t *session) see(tim, dur int64) {
	if !t.seen {
		t.seen, t.first, t.last, t.start = true, tim, tim, tim-max(dur, 0)
		return
	}
	t.first, t.last, t.start = min(t.first, tim), max(t.last, tim), min(t.start, tim-max(dur, 0))
}

func (t *session) cursor(c oracle10046.Cursor) {
	t.see(c.Tim, 0)
	key := c.SQLID
	if key == "" && c.HV != "" {
		key = "hv:" + c.HV
	}
	if key == "" {
		key = "cursor #" + strconv.FormatInt(c.Cursor, 10) + " of " + t.name
	}
	s := t.b.statement(key)
	if s.Text == "" {
		s.SQLID, s.HV, s.Text = c.SQLID, c.HV, c.Text
	}
	if s.Dep < 0 || c.Dep < s.Dep {
		s.Dep = c.Dep
	}
	t.cursors[c.Cursor] = s
}

// statementOf returns the statement a cursor number names now.
func (t *session) statementOf(cursor int64, dep int64) *Statement {
	if s, ok := t.cursors[cursor]; ok {
		return s
	}
	s := t.b.statement("cursor #" + strconv.FormatInt(cursor, 10) + " of " + t.name)
	if s.Dep < 0 || dep < s.Dep {
		s.Dep = dep
	}
	t.cursors[cursor] = s
	return s
}

func (t *session) call(c oracle10046.Call) {
	t.see(c.Tim, c.E)
	k := callKey{c.Type, c.Dep > 0}
	ct, ok := t.b.calls[k]
	if !ok {
		ct = &CallTotal{Type: c.Type.String(), Recursive: c.Dep > 0}
		t.b.calls[k] = ct
	}
	self := t.selfOf(c)
	ct.add(self)
	s := t.statementOf(c.Cursor, c.Dep)
	switch c.Type {
	case oracle10046.CallParse:
		s.Parse.add(self)
	case oracle10046.CallExec:
		s.Exec.add(self)
	case oracle10046.CallFetch:
		s.Fetch.add(self)
	case oracle10046.CallClose:
		s.Close.add(self)
	}
	if c.Type != oracle10046.CallClose {
		s.InclusiveElapsedUS += c.E
		s.InclusiveCPUUS += c.C
		s.elapsed.record(c.E)
		s.cpu.record(c.C)
	}
	if c.Dep == 0 {
		t.b.p.CPUUS += c.C
		t.flushWaits(&c)
		t.lastTop, t.hasLastTop = c.Cursor, true
	} else {
		if !t.recursive.set {
			t.recursive = recursiveMarks{set: true, firstWaits: len(t.pending), firstStart: c.Tim - c.E}
		}
		t.recursive.lastWaits = len(t.pending)
	}
}

// maxDepth bounds the recursion depths tracked (real traces stay below 10).
const maxDepth = 64

// selfOf returns the call with the figures of the recursive calls it made
// taken out, as tkprof reports them: a statement's own work, so that the
// statements' figures add up to the trace's without counting twice.
func (t *session) selfOf(c oracle10046.Call) oracle10046.Call {
	d := int(min(c.Dep, maxDepth))
	for len(t.children) < d+2 {
		t.children = append(t.children, Figures{})
	}
	kids := &t.children[d+1]
	self := c
	self.E -= kids.ElapsedUS
	self.C -= kids.CPUUS
	self.P -= kids.Disk
	self.CR -= kids.Query
	self.CU -= kids.Current
	*kids = Figures{}
	t.children[d].add(c)
	return self
}

func (t *session) wait(w oracle10046.Wait) {
	t.see(w.Tim, w.Ela)
	pw := pendingWait{event: eventOf(t.b.events, w.Event), cursor: w.Cursor, ela: w.Ela, tim: w.Tim}
	if w.Cursor != 0 || t.cursors[0] != nil {
		pw.stmt = eventOf(t.statementOf(w.Cursor, 0).events, w.Event)
	}
	for _, e := range []*Event{pw.event, pw.stmt} {
		if e != nil {
			e.Count++
			e.US += w.Ela
			e.MaxUS = max(e.MaxUS, w.Ela)
		}
	}
	t.b.p.WaitUS += w.Ela
	t.pending = append(t.pending, pw)
}

// flushWaits places the pending waits inside the top-level call c or
// between calls (nil: the trace's end, where the recursive calls left
// without a top-level call, if any, are the call).
func (t *session) flushWaits(c *oracle10046.Call) {
	win := t.orphanWindow()
	if c != nil {
		win = t.windowOf(c)
	}
	for i, w := range t.pending {
		inside := win.inside(i, w)
		for _, e := range []*Event{w.event, w.stmt} {
			switch {
			case e == nil:
			case inside:
				e.WithinCallsUS += w.ela
			default:
				e.BetweenCallsUS += w.ela
			}
		}
	}
	t.pending = t.pending[:0]
	t.recursive = recursiveMarks{}
}

// callWindow tells which of the pending waits were inside a call.
type callWindow struct {
	start int64 // the call's start by its own figures: tim − e
	// own is how many pending waits were written before the first line of
	// the call's own work (a recursive call, or a wait on its cursor),
	// which started at ownStart.
	own      int
	ownStart int64
	end      int // how many pending waits were written before the call ended
	// previous is the cursor of the top-level call before (hasPrevious).
	previous    int64
	hasPrevious bool
}

// windowOf returns the window of the top-level call c.
func (t *session) windowOf(c *oracle10046.Call) callWindow {
	win := callWindow{start: c.Tim - c.E, own: len(t.pending), ownStart: c.Tim - c.E, end: len(t.pending),
		previous: t.lastTop, hasPrevious: t.hasLastTop}
	if t.recursive.set {
		win.own, win.ownStart = t.recursive.firstWaits, t.recursive.firstStart
	}
	for i, w := range t.pending[:win.own] {
		if w.cursor == c.Cursor {
			win.own, win.ownStart = i, w.tim-w.ela
			break
		}
	}
	return win
}

// orphanWindow returns the window of the recursive calls written since
// the last top-level call, as if one call the trace did not write had
// made them: from the first one's start to the last one's line.
func (t *session) orphanWindow() callWindow {
	r := t.recursive
	if !r.set {
		return callWindow{}
	}
	return callWindow{start: r.firstStart, own: r.firstWaits, ownStart: r.firstStart, end: r.lastWaits, previous: t.lastTop, hasPrevious: t.hasLastTop}
}

// orphans adds up, at the trace's end, the recursive calls no top-level
// call was written for: at each depth, those made since the last call
// one level up.
func (t *session) orphans() (calls, cpuUS int64) {
	for _, f := range t.children[min(1, len(t.children)):] {
		calls += f.Count
		cpuUS += f.CPUUS
	}
	return calls, cpuUS
}

// inside tells whether the i-th pending wait was inside the call: written
// before it ended, with its midpoint after the call's start (tim
// arithmetic), unless the file order says otherwise. A wait written on
// the previous top-level call's cursor before the first line of this
// call's own work, and ending before that line started, is the session
// waiting between the two calls (for the client, mostly), whatever the
// call's tim − e says: tim and e= come from clocks that drift apart by
// milliseconds (docs/profile.md).
func (win callWindow) inside(i int, w pendingWait) bool {
	if i >= win.end || (i < win.own && win.hasPrevious && w.cursor == win.previous && w.tim <= win.ownStart) {
		return false
	}
	return w.tim-w.ela/2 > win.start
}

// finish derives the sums, per-execution figures and orders.
func (b *builder) finish() *Profile {
	p := &b.p
	p.UnaccountedUS = p.SpanUS - p.CPUUS - p.OrphanCPUUS - p.WaitUS
	p.Events = sortedEvents(b.events)
	for _, ct := range b.calls {
		p.Calls = append(p.Calls, *ct)
	}
	slices.SortFunc(p.Calls, func(a, c CallTotal) int {
		if a.Recursive != c.Recursive {
			if a.Recursive {
				return 1
			}
			return -1
		}
		return cmp.Compare(callOrder(a.Type), callOrder(c.Type))
	})
	for _, s := range b.order {
		s.finish()
		p.Statements = append(p.Statements, s)
	}
	slices.SortStableFunc(p.Statements, func(a, c *Statement) int {
		return cmp.Or(cmp.Compare(c.Total.ElapsedUS, a.Total.ElapsedUS), cmp.Compare(c.Total.CPUUS, a.Total.CPUUS))
	})
	return p
}

func callOrder(name string) int {
	return slices.Index([]string{"PARSE", "EXEC", "FETCH", "CLOSE"}, name)
}

func sortedEvents(m map[string]*Event) []Event {
	out := make([]Event, 0, len(m))
	for _, e := range m {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, c Event) int { return cmp.Or(cmp.Compare(c.US, a.US), cmp.Compare(a.Name, c.Name)) })
	return out
}

func (s *Statement) finish() {
	for _, f := range []Figures{s.Parse, s.Exec, s.Fetch} {
		s.Total.Count += f.Count
		s.Total.CPUUS += f.CPUUS
		s.Total.ElapsedUS += f.ElapsedUS
		s.Total.Disk += f.Disk
		s.Total.Query += f.Query
		s.Total.Current += f.Current
		s.Total.Rows += f.Rows
	}
	if s.Dep < 0 {
		s.Dep = 0
	}
	s.Executions = s.Exec.Count
	if n := float64(s.Executions); n > 0 {
		s.ElapsedPerExecUS = float64(s.Total.ElapsedUS) / n
		s.CPUPerExecUS = float64(s.Total.CPUUS) / n
		s.RowsPerExec = float64(s.Total.Rows) / n
	}
	s.Events = sortedEvents(s.events)
	s.Latency = s.elapsed.distribution()
	s.CPU = s.cpu.distribution()
}

// callSample gathers one figure of a statement's calls, in µs.
type callSample struct {
	h     *hist.Histogram
	maxUS int64
}

func newCallSample() callSample { return callSample{h: hist.NewExact(hist.Microsecond, 0)} }

func (cs *callSample) record(us int64) {
	_ = cs.h.Record(float64(us)) // e= and c= are never negative
	cs.maxUS = max(cs.maxUS, us)
}

// distribution summarises the sample.
func (cs *callSample) distribution() Distribution {
	h := cs.h
	d := Distribution{Count: int64(h.Count()), MaxUS: cs.maxUS}
	if d.Count == 0 {
		return d
	}
	rows := h.Rows()
	quantile := func(q float64) float64 {
		// Calls of 0 µs (c=0 is common) are 0, not spread over [0, 1).
		if float64(rows.ZeroCount) >= q*float64(d.Count) {
			return 0
		}
		// Interpolating inside the top bucket may pass the largest call.
		return min(h.Quantile(q), float64(cs.maxUS))
	}
	d.P50US, d.P90US, d.P99US = quantile(0.5), quantile(0.9), quantile(0.99)
	if rows.ZeroCount > 0 {
		d.Buckets = append(d.Buckets, Bucket{LowUS: 0, Count: int64(rows.ZeroCount)})
	}
	for i, n := range rows.Counts {
		if n > 0 {
			d.Buckets = append(d.Buckets, Bucket{LowUS: hist.RowLower(rows.First+i, 0), Count: int64(n)})
		}
	}
	return d
}
