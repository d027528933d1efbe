package awr

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// The queries users run live in sql/. Oracle cannot run here, so these tests
// tie the scripts to the reader: the headings their SELECT prints are the
// fixtures' headings and a header this package recognises, and the polling
// loop has the length its comment says.

func readSQL(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "sql", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// selectHeadings returns the column headings SQL*Plus prints for the
// script's query: each select-list item's alias, else its column name,
// upper-cased.
func selectHeadings(t *testing.T, sql string) []string {
	t.Helper()
	start := strings.Index(sql, "\nselect ")
	end := strings.Index(sql[start:], "\nfrom ")
	if start < 0 || end < 0 {
		t.Fatal("no select ... from in the script")
	}
	list := sql[start+len("\nselect ") : start+end]
	var items []string
	depth, quoted, from := 0, false, 0
	for i := 0; i < len(list); i++ {
		switch c := list[i]; {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			items = append(items, list[from:i])
			from = i + 1
		}
	}
	items = append(items, list[from:])
	alias := regexp.MustCompile(`(?i)\bas\s+(\w+)\s*$`)
	var out []string
	for _, it := range items {
		it = strings.TrimSpace(it)
		if m := alias.FindStringSubmatch(it); m != nil {
			out = append(out, strings.ToUpper(m[1]))
			continue
		}
		out = append(out, strings.ToUpper(it[strings.LastIndexByte(it, '.')+1:]))
	}
	return out
}

// fixtureHeadings returns a fixture's first heading line as names.
func fixtureHeadings(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if strings.Contains(line, `"`) {
			fields, err := splitCSV(line, ',', nil)
			if err != nil {
				t.Fatal(err)
			}
			return fields
		}
		return strings.Fields(line)
	}
	t.Fatalf("%s: no heading", file)
	return nil
}

func TestSQLHeadingsMatchFixturesAndReader(t *testing.T) {
	cases := []struct {
		script   string
		fixtures []string
		awr      bool
	}{
		{"awr_event_histogram.sql", []string{"awr_19c_rac.csv", "awr_11g_pagesize14.lst"}, true},
		{"gv_event_histogram_micro_poll.sql", []string{"gv_micro_poll.csv"}, false},
	}
	for _, c := range cases {
		got := selectHeadings(t, readSQL(t, c.script))
		for _, fx := range c.fixtures {
			if want := fixtureHeadings(t, fx); !slices.Equal(got, want) {
				t.Errorf("%s prints %q, but fixture %s has %q", c.script, got, fx, want)
			}
		}
		h, ok := newHeader(got, layout{sep: ','})
		if !ok || h.col[roleTime] < 0 || h.col[roleStartup] < 0 || h.col[roleInstance] < 0 || h.isAWR() != c.awr {
			t.Errorf("%s: headings %q not read as a full %v header (awr %v)", c.script, got, ok, c.awr)
		}
	}
	// the 11g variant the poll script describes: _MICRO → the ms view
	micro := fixtureHeadings(t, "gv_micro_poll.csv")
	milli := fixtureHeadings(t, "gv_milli_poll_11g.lst")
	if strings.Join(micro, ",") != strings.Replace(strings.Join(milli, ","), "WAIT_TIME_MILLI", "WAIT_TIME_MICRO", 1) {
		t.Errorf("11g poll fixture headings %q do not follow the script's %q", milli, micro)
	}
}

func TestSQLScriptsSettings(t *testing.T) {
	for _, name := range []string{"awr_event_histogram.sql", "gv_event_histogram_micro_poll.sql"} {
		sql := readSQL(t, name)
		for _, want := range []string{"set markup csv on", "pagesize 50000", "feedback off", "verify off",
			"whenever sqlerror exit", "latscope heatmap", "\nexit\n"} {
			if !strings.Contains(sql, want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
		if strings.Count(sql, "(") != strings.Count(sql, ")") {
			t.Errorf("%s: unbalanced parentheses", name)
		}
	}
	main := readSQL(t, "gv_event_histogram_micro_poll.sql")
	repeat := readSQL(t, "gv_event_histogram_poll_repeat.sql")
	calls := countLines(main, "@@gv_event_histogram_poll_repeat.sql")
	polls := countLines(repeat, "/")
	sleeps := countLines(repeat, "exec dbms_session.sleep(&poll_seconds)")
	if calls != 60 || polls != 60 || sleeps != 60 || !strings.Contains(main, "It polls 3601 times") {
		t.Errorf("poll loop: %d calls of %d polls (%d sleeps), comment says 3601 = 1 + 60·60", calls, polls, sleeps)
	}
	if !strings.Contains(main, "define poll_seconds") {
		t.Error("the repeat script's &poll_seconds is not defined")
	}
}

func countLines(text, line string) int {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		if l == line {
			n++
		}
	}
	return n
}
