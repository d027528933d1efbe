package oracle

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// selectNames returns the names a query's select list gives its columns
// (alias, else the column after the last dot), upper-cased, as Oracle
// reports them to the driver.
func selectNames(q string) []string {
	list := q[strings.Index(q, "\nselect ")+len("\nselect ") : strings.Index(q, "\nfrom ")]
	if strings.HasPrefix(q, "select ") {
		list = q[len("select "):strings.Index(q, "\nfrom ")]
	}
	var out []string
	depth, from := 0, 0
	alias := regexp.MustCompile(`(?i)\bas\s+(\w+)\s*$`)
	add := func(it string) {
		it = strings.TrimSpace(it)
		if m := alias.FindStringSubmatch(it); m != nil {
			out = append(out, strings.ToUpper(m[1]))
			return
		}
		out = append(out, strings.ToUpper(it[strings.LastIndexByte(it, '.')+1:]))
	}
	for i := 0; i < len(list); i++ {
		switch list[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				add(list[from:i])
				from = i + 1
			}
		}
	}
	add(list[from:])
	return out
}

func TestQueriesNameTheColumnsTheMappersRead(t *testing.T) {
	hist := []string{"SAMPLE_TIME", "INST_ID", "STARTUP_TIME", "EVENT", "WAIT_COUNT"}
	cases := []struct {
		name, q string
		want    []string
	}{
		{"micro", histogramQueryMicro, append(hist, "WAIT_TIME_MICRO")},
		{"milli", histogramQueryMilli, append(hist, "WAIT_TIME_MILLI")},
		{"system event", systemEventQuery, []string{"INST_ID", "EVENT", "TOTAL_WAITS", "TIME_WAITED_MICRO"}},
		{"x$kslwh", kslwhQuery, append(waitColumns, "WAIT_ID")},
		{"v$session_wait_history", sessionWaitHistoryQuery, append(waitColumns, "POSITION", "WAIT_SEQ", "STATE")},
		{"dba_hist_snapshot", awrSnapshotQuery, []string{"SNAP_ID", "DBID", "INSTANCE_NUMBER", "BEGIN_INTERVAL_TIME",
			"END_INTERVAL_TIME", "STARTUP_TIME", "DB_UTC_OFFSET"}},
		{"dba_hist_event_histogram", awrHistogramQuery, []string{"SNAP_ID", "DBID", "INSTANCE_NUMBER", "EVENT_NAME",
			"WAIT_CLASS", "WAIT_TIME_MILLI", "WAIT_COUNT"}},
		{"dba_hist_system_event", awrSystemEventQuery, []string{"SNAP_ID", "DBID", "INSTANCE_NUMBER", "WAIT_CLASS",
			"EVENT_NAME", "TOTAL_WAITS", "TIME_WAITED_MICRO"}},
	}
	for _, c := range cases {
		got := selectNames(c.q)
		for _, w := range c.want {
			if !strings.Contains(","+strings.Join(got, ",")+",", ","+w+",") {
				t.Errorf("%s query selects %v, lacks %s", c.name, got, w)
			}
		}
		if strings.Count(c.q, "(") != strings.Count(c.q, ")") {
			t.Errorf("%s: unbalanced parentheses", c.name)
		}
	}
	// the histogram columns are those source/awr's poll format reads by name
	r := &rows{columns: selectNames(histogramQueryMicro)}
	for _, c := range hist {
		if r.col(c) < 0 {
			t.Errorf("micro query lacks %s", c)
		}
	}
}

// TestAWRQueriesBindsAndScope checks the AWR queries' binds (positional, as
// runAWR passes them) and that they stay on the current DBID.
func TestAWRQueriesBindsAndScope(t *testing.T) {
	binds := regexp.MustCompile(`:(\d+)`)
	for _, c := range []struct {
		q    string
		want int
	}{{awrSnapshotQuery, 3}, {awrHistogramQuery, 4}} {
		seen := map[string]bool{}
		for _, m := range binds.FindAllStringSubmatch(c.q, -1) {
			seen[m[1]] = true
		}
		if len(seen) != c.want {
			t.Errorf("query has binds %v, want :1..:%d", seen, c.want)
		}
	}
	for _, must := range []string{"select dbid from v$database", "snap_rank <= p.last_n + 1", "between p.snap_from and p.snap_to"} {
		if !strings.Contains(awrSnapshotQuery, must) {
			t.Errorf("snapshot query lacks %q", must)
		}
	}
	if !strings.Contains(awrHistogramQuery, "h.dbid = p.dbid") || !strings.Contains(awrHistogramQuery, "'TM9'") {
		t.Error("histogram query does not select the DBID or print numbers with TM9")
	}
}

// The poll users run by hand (sql/gv_event_histogram_micro_poll.sql, a
// SQL*Plus script with substitution variables) and the sampler's bind
// query print the same columns the same way, so that source/awr reads both.
func TestShippedPollSelectsWhatTheSamplerSelects(t *testing.T) {
	data, err := os.ReadFile("../../sql/gv_event_histogram_micro_poll.sql")
	if err != nil {
		t.Fatal(err)
	}
	selectList := func(q string) string {
		start := strings.Index(q, "\nselect ")
		if start < 0 {
			t.Fatalf("no select in %q", q)
		}
		return q[start : start+strings.Index(q[start:], "\nfrom ")]
	}
	shipped := strings.ReplaceAll(selectList(string(data)), "(t.ts,", "(p.ts,") // its inline view is t, the sampler's p
	if got := selectList(histogramQueryMicro); got != shipped {
		t.Errorf("sampler selects\n%s\nthe shipped poll\n%s", got, shipped)
	}
}
