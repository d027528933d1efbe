package workingset

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func written(t *testing.T, r *Result, format string) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, r, format); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestWriteJSON(t *testing.T) {
	r := count(t, Options{}, handMade()).Result(time.Millisecond)
	var got map[string]any
	if err := json.Unmarshal([]byte(written(t, r, FormatJSON)), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"exact", "relative_error", "precision", "exact_limit", "split_us", "skipped", "total", "classes", "files", "events", "buckets"} {
		if _, ok := got[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	total := got["total"].(map[string]any)
	distinct, reads := 6.0, 9.0 // variables: the fraction rounds as the counter's does
	for k, v := range map[string]float64{"reads": reads, "read_calls": 4, "distinct_blocks": distinct, "reads_per_block": 1.5, "reread_fraction": 1 - distinct/reads, "relative_error": 0} {
		if total[k] != v {
			t.Errorf("total.%s = %v, want %v", k, total[k], v)
		}
	}
	if got["split_us"] != 1024.0 || total["exact"] != true {
		t.Errorf("split_us %v, exact %v", got["split_us"], total["exact"])
	}
	// An empty result lists nothing as [], not null.
	empty := written(t, NewCounter(Options{}).Result(0), FormatJSON)
	if !strings.Contains(empty, `"classes": []`) || strings.Contains(empty, "null") {
		t.Errorf("empty result: %s", empty)
	}
}

func TestWriteCSV(t *testing.T) {
	r := count(t, Options{}, handMade()).Result(time.Millisecond)
	rows, err := csv.NewReader(strings.NewReader(written(t, r, FormatCSV))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if h := strings.Join(rows[0], ","); h != "section,name,file,low_us,high_us,reads,read_calls,distinct_blocks,exact,relative_error,reads_per_block,reread_fraction" {
		t.Errorf("header %s", h)
	}
	// total, 2 classes, 2 files, 2 events, 3 buckets
	if len(rows) != 1+1+2+2+2+3 {
		t.Fatalf("%d rows: %v", len(rows), rows)
	}
	if got := strings.Join(rows[1], ","); got != "total,all,0,0,0,9,4,6,true,0,1.5,0.333333" {
		t.Errorf("total row %s", got)
	}
	if got := strings.Join(rows[3], ","); got != "class,media-like,0,1024,0,4,2,4,true,0,1,0" {
		t.Errorf("media-like row %s", got)
	}
}

func TestWriteTable(t *testing.T) {
	exact := written(t, count(t, Options{}, handMade()).Result(time.Millisecond), FormatTable)
	for _, want := range []string{"counted exactly", "cache-like read calls < 1024 µs", "file 1", "db file scattered read", "[4096, 8192) µs", "33.3%"} {
		if !strings.Contains(exact, want) {
			t.Errorf("table lacks %q:\n%s", want, exact)
		}
	}
	c := NewCounter(Options{ExactLimit: 16})
	for i := range uint64(100) {
		c.Add(read(1, i, 1, 10, seq))
	}
	est := written(t, c.Result(0), FormatTable)
	if !strings.Contains(est, "estimated (~, HyperLogLog p=14, relative standard error 0.8125 %)") || !strings.Contains(est, "~100") {
		t.Errorf("estimated table:\n%s", est)
	}
	if err := Write(&bytes.Buffer{}, c.Result(0), "xml"); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("unknown format: %v", err)
	}
}
