// Package awr reads Oracle wait-event latency histograms: AWR exports of
// DBA_HIST_EVENT_HISTOGRAM joined to DBA_HIST_SNAPSHOT, and polls of
// GV$EVENT_HISTOGRAM or GV$EVENT_HISTOGRAM_MICRO, written as CSV (SQL*Plus
// `set markup csv on`, SQLcl `set sqlformat csv`, SQL Developer exports;
// comma, semicolon, tab or | separated, quoted or not) or as a fixed-width
// SQL*Plus spool (heading line, underline of dashes, repeated at page
// breaks, "N rows selected." and other chatter skipped). The queries to run
// are in the repository's sql/ directory.
//
// Columns are found by name in the heading line (any case, any order; other
// columns such as WAIT_CLASS, EVENT_ID, SNAP_ID, CON_ID are ignored):
//
//	required  END_INTERVAL_TIME (AWR) or SAMPLE_TIME, SNAP_TIME, POLL_TIME,
//	          SAMPLE_TIMESTAMP, SYSTIMESTAMP, SYSDATE, TIMESTAMP, TIME (polls)
//	required  EVENT_NAME or EVENT
//	required  WAIT_TIME_MILLI (bounds in ms) or WAIT_TIME_MICRO (µs)
//	required  WAIT_COUNT
//	optional  INSTANCE_NUMBER or INST_ID: one series per instance
//	optional  DBID: instances of several databases are told apart
//	optional  STARTUP_TIME: a change is an instance restart
//	optional  BEGIN_INTERVAL_TIME: the window of --counts interval snapshots
//
// Times are read as YYYY-MM-DD HH24:MI:SS[.FF][TZH:TZM] (what the shipped
// queries print), in Oracle's default DD-MON-RR HH.MI.SSXFF AM [TZH:TZM],
// or as DD-MON-YYYY HH24:MI:SS, DD.MM.RR HH24:MI:SSXFF, DD.MM.YYYY or
// YYYY/MM/DD HH24:MI:SS; times without an offset are in --tz, the other
// times of a row in the zone of its snapshot time.
//
// Counts are cumulative since instance startup, as Oracle keeps them:
// every instance's snapshot after the first gives an interval from the
// previous snapshot's time to its own, with the counts' deltas (a missing
// snapshot only makes the window longer). Each instance is observed on its
// own: its intervals carry the source name "FILE@INSTANCE", and its series
// the key {Event: EVENT_NAME, Instance: INSTANCE_NUMBER, or DBID:INSTANCE
// when the file holds several databases}. A restart (a new STARTUP_TIME, or
// a counter going down) is never a negative delta: the window is a gap, and
// when the new STARTUP_TIME lies inside it, the time from the startup on is
// an interval with the counts made since. A bucket row missing from a
// snapshot (a malformed line) keeps its previous count. Rows may come in any
// order from a regular file; from a pipe or with --follow they must come in
// time order per instance, as the shipped queries print them. A bucket
// WAIT_TIME_MILLI = N counts waits in [N/2, N); the smallest bound of a
// series is its zero bucket [0, N); the "infinite" top bucket (a bound of
// 2^40 or more, or 2^k−1 such as 4294967295) is read as [P, 2P) with P the
// larger of the documented last bound (2^22 ms, 2^32 µs) and the largest
// finite bound seen, and flagged as capped. Sums are estimated from bucket
// midpoints: 0.75·N per wait, N/2 in the zero bucket, as Tanel Poder's
// evh.sql does.
package awr

import (
	"strings"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
)

// Format names users give to --input-format. Both read the same columns;
// detection names the one that matches the heading.
const (
	AWRFormatName  = "awr"
	PollFormatName = "oracle-event-histogram"
)

// Detection limits: without a heading line after this many non-blank lines
// or bytes, the input is not ours. SQL*Plus banners and settings echoes are
// a few dozen lines.
const (
	detectMaxLines = 300
	detectGiveUp   = 32 << 10
)

// Format returns the AWR export format (DBA_HIST_EVENT_HISTOGRAM ⋈
// DBA_HIST_SNAPSHOT).
func Format() source.Format {
	return source.Format{
		Name: AWRFormatName,
		Description: "Oracle AWR wait-event histograms: DBA_HIST_EVENT_HISTOGRAM joined to DBA_HIST_SNAPSHOT " +
			"(sql/awr_event_histogram.sql) as CSV or SQL*Plus spool; per-instance deltas between snapshots, " +
			"a STARTUP_TIME change is a restart; counts cumulative (--counts interval for exported deltas)",
		Detection: "a CSV or spool heading line with END_INTERVAL_TIME, EVENT_NAME, WAIT_TIME_MILLI and WAIT_COUNT " +
			"(any case and order; a spool heading needs its underline of dashes); counts cumulative",
		Example: "latscope heatmap awr.csv --event 'db file sequential read'",
		Detect:  func(prefix []byte) input.Verdict { return detectKind(prefix, true) },
		Open:    Open,
	}
}

// PollFormat returns the format of spooled GV$EVENT_HISTOGRAM(_MICRO) polls.
func PollFormat() source.Format {
	return source.Format{
		Name: PollFormatName,
		Description: "Oracle GV$EVENT_HISTOGRAM / GV$EVENT_HISTOGRAM_MICRO snapshots polled into one file " +
			"(sql/gv_event_histogram_micro_poll.sql) as CSV or SQL*Plus spool; deltas between polls per instance; " +
			"counts cumulative",
		Detection: "a CSV or spool heading line with a time column (SAMPLE_TIME, SYSTIMESTAMP, ...), EVENT, " +
			"WAIT_TIME_MICRO or WAIT_TIME_MILLI and WAIT_COUNT; counts cumulative",
		Example: "sqlplus -s -L user@db @sql/gv_event_histogram_micro_poll.sql 'log file sync' 10 | latscope heatmap -",
		Detect:  func(prefix []byte) input.Verdict { return detectKind(prefix, false) },
		Open:    Open,
	}
}

// otherFormatMarkers start lines that only inputs of other formats have
// (PyLatencyMap records, Oracle 10046 traces) and settle detection.
var otherFormatMarkers = []string{"<begin record>", "WAIT #", "PARSING IN CURSOR #", "Trace file "}

// Detect says Yes when the prefix holds a heading line of either format.
func Detect(prefix []byte) input.Verdict {
	v, _ := detect(prefix)
	return v
}

// detectKind says Yes only for the format of the given kind.
func detectKind(prefix []byte, awr bool) input.Verdict {
	v, isAWR := detect(prefix)
	if v == input.Yes && isAWR != awr {
		return input.No
	}
	return v
}

// detect looks for a heading line (CSV, or spool with its underline) before
// any line of another format; isAWR says it names END_INTERVAL_TIME (or no
// time column but AWR's INSTANCE_NUMBER or DBID, which Run then explains).
func detect(prefix []byte) (v input.Verdict, isAWR bool) {
	scan := input.LineScan{SkipBOM: true, Partial: true, GiveUp: detectGiveUp}
	pending := "" // a spool heading candidate waiting for its underline
	lines := 0
	for l := range scan.Lines(prefix) {
		text := string(l.Text)
		if pending != "" {
			if h, ok := parseSpoolHeader(pending, text); ok {
				return input.Yes, kindOf(h)
			}
			if !l.Complete {
				return input.NeedMore, false
			}
			pending = ""
		}
		t := strings.TrimSpace(text)
		if t == "" {
			continue
		}
		for _, m := range otherFormatMarkers {
			if strings.HasPrefix(t, m) {
				return input.No, false
			}
		}
		if hasFold(t, "wait_count") {
			if h, ok := parseCSVHeader(t); ok {
				return input.Yes, kindOf(h)
			}
			if spoolHeaderCandidate(t) {
				pending = text
				continue
			}
		}
		if lines++; lines >= detectMaxLines {
			return input.No, false
		}
	}
	if pending != "" {
		return input.NeedMore, false // the underline has not arrived
	}
	return scan.Undecided(prefix), false
}

func kindOf(h header) bool {
	if h.col[roleTime] >= 0 {
		return h.isAWR()
	}
	return h.col[roleDBID] >= 0 || (h.col[roleInstance] >= 0 && h.names[h.col[roleInstance]] == "instance_number")
}

// Open returns a Source that reads the input and emits one interval per
// instance snapshot after that instance's first. The intervals of instance
// I carry the source name "NAME@I" (see sourceName).
func Open(in source.Input, opts source.Options) (source.Source, error) {
	return source.NewLineSource(in, opts, maxLineLen, newParser)
}

// maxLineLen bounds the memory one input line may take: a row of the
// shipped queries is about 200 bytes, a spool with linesize 32767 and
// trimspool off at most 32 KiB.
const maxLineLen = 64 << 10
