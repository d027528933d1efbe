package cluster

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/latscope/latscope/input"
)

// csvColumn is a column of a statement-statistics export: its name (or the
// names it has had across versions), whether a row needs it, and the
// features its value (over divisor, to make milliseconds of timers) adds to.
type csvColumn struct {
	names    []string
	required bool
	divisor  float64
	features []string
}

// csvLayout is what a kind of export must and may have.
type csvLayout struct {
	kind              string
	key, text, schema []string
	executions        string
	columns           []csvColumn
	detectA, detectB  string
}

// pgStatStatements: times in ms; shared_blks_read are reads from outside
// shared buffers (the OS cache or disk), so they count as physical reads
// and as logical ones with shared_blks_hit. PostgreSQL 13 renamed
// total_time total_exec_time; 17 renamed blk_read_time shared_blk_read_time.
var pgStatStatements = csvLayout{
	kind: KindPgStat, key: []string{"queryid"}, text: []string{"query"}, executions: "calls",
	detectA: "queryid", detectB: "calls",
	columns: []csvColumn{
		{names: []string{"total_exec_time", "total_time"}, required: true, divisor: 1, features: []string{FeatureExec}},
		{names: []string{"shared_blks_hit"}, required: true, divisor: 1, features: []string{FeatureLogicalReads}},
		{names: []string{"shared_blks_read"}, required: true, divisor: 1, features: []string{FeatureLogicalReads, FeaturePhysicalReads}},
		{names: []string{"blk_read_time", "shared_blk_read_time"}, divisor: 1, features: []string{FeatureUserIO}},
		{names: []string{"blk_write_time", "shared_blk_write_time"}, divisor: 1, features: []string{FeatureUserIO}},
		{names: []string{"temp_blks_read"}, divisor: 1, features: []string{FeatureTempBlocks}},
		{names: []string{"temp_blks_written"}, divisor: 1, features: []string{FeatureTempBlocks}},
	},
}

// perfSchemaDigests is events_statements_summary_by_digest: timers in
// picoseconds. SUM_CPU_TIME exists from MySQL 8.0.28.
var perfSchemaDigests = csvLayout{
	kind: KindPerfSchema, key: []string{"digest"}, text: []string{"digest_text"}, schema: []string{"schema_name"}, executions: "count_star",
	detectA: "digest", detectB: "count_star",
	columns: []csvColumn{
		{names: []string{"sum_timer_wait"}, required: true, divisor: psPerMs, features: []string{FeatureExec}},
		{names: []string{"sum_cpu_time"}, divisor: psPerMs, features: []string{FeatureCPU}},
		{names: []string{"sum_lock_time"}, divisor: psPerMs, features: []string{FeatureLock}},
		{names: []string{"sum_rows_examined"}, divisor: 1, features: []string{FeatureRowsExamined}},
		{names: []string{"sum_created_tmp_disk_tables"}, divisor: 1, features: []string{FeatureTmpDiskTables}},
		{names: []string{"sum_sort_rows"}, divisor: 1, features: []string{FeatureSortRows}},
	},
}

// ReadStats counts what a reader kept and skipped.
type ReadStats struct {
	Source string `json:"source"`
	Kind   string `json:"kind"`
	// Rows are the rows (statements, for 10046 traces) kept.
	Rows int `json:"rows"`
	// Malformed rows (missing or non-numeric cells) are reported at their
	// line and skipped; Unexecuted rows (no calls) are skipped.
	Malformed  int `json:"malformed"`
	Unexecuted int `json:"unexecuted"`
}

// IsStatementCSV tells whether a header line is a pg_stat_statements or
// performance_schema digest export's.
func IsStatementCSV(header string) bool {
	_, err := layoutOf(splitHeader(header))
	return err == nil
}

func splitHeader(line string) []string {
	line = strings.TrimPrefix(strings.TrimRight(line, "\r\n"), "\ufeff")
	sep := ","
	if strings.Contains(line, "\t") && !strings.Contains(line, ",") {
		sep = "\t"
	}
	fields := strings.Split(line, sep)
	for i, f := range fields {
		fields[i] = strings.ToLower(strings.Trim(strings.TrimSpace(f), `"`))
	}
	return fields
}

func layoutOf(header []string) (*csvLayout, error) {
	for _, l := range []*csvLayout{&pgStatStatements, &perfSchemaDigests} {
		if indexOf(header, l.detectA) >= 0 && indexOf(header, l.detectB) >= 0 {
			return l, nil
		}
	}
	return nil, errors.New("the header names neither pg_stat_statements columns (queryid, calls, total_exec_time, ...) nor events_statements_summary_by_digest's (DIGEST, COUNT_STAR, SUM_TIMER_WAIT, ...)")
}

func indexOf(header []string, name string) int {
	for i, h := range header {
		if h == name {
			return i
		}
	}
	return -1
}

// firstOf returns the index of the first of names in the header, or -1.
func firstOf(header, names []string) int {
	for _, n := range names {
		if i := indexOf(header, n); i >= 0 {
			return i
		}
	}
	return -1
}

// ReadCSV reads a pg_stat_statements or events_statements_summary_by_digest
// export (comma or tab separated, with its header; psql's and mysql -B's
// output), detected by the header. Rows of the same statement (queryid,
// or schema and digest) are summed. Bad rows are reported to diag at
// their line and skipped; a missing required column is an error.
func ReadCSV(name string, r io.Reader, diag *input.Diagnostics) ([]*Workload, ReadStats, error) {
	br := bufio.NewReader(r)
	headerLine, err := br.ReadString('\n')
	if err != nil && headerLine == "" {
		return nil, ReadStats{}, fmt.Errorf("%s: empty: no header", name)
	}
	rd, err := NewRowReader(name, splitHeader(headerLine))
	if err != nil {
		return nil, ReadStats{Source: name}, err
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	if strings.Contains(headerLine, "\t") && !strings.Contains(headerLine, ",") {
		cr.Comma = '\t'
		cr.LazyQuotes = true
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			rd.stats.Malformed++
			diag.Malformed(name, pe.StartLine+1, pe.Err.Error())
			continue
		}
		if err != nil {
			return nil, rd.stats, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		rd.Row(rec, line+1, diag)
	}
	ws, stats := rd.Workloads()
	return ws, stats, nil
}

// RowReader turns rows of pg_stat_statements or
// events_statements_summary_by_digest, as text cells, into workloads, by
// the header's column indexes: for CSV files, and for rows queried from a
// live server.
type RowReader struct {
	name              string
	layout            *csvLayout
	key, text, schema int
	executions        int
	columns           []int // index of layout.columns[i], or -1
	width             int   // cells a row needs
	byKey             map[string]*Workload
	order             []*Workload
	stats             ReadStats
}

// NewRowReader checks a header (column names, any case) for the kind of
// rows it heads and their required columns.
func NewRowReader(name string, names []string) (*RowReader, error) {
	header := make([]string, len(names))
	for i, h := range names {
		header[i] = strings.ToLower(h)
	}
	l, err := layoutOf(header)
	if err != nil {
		return nil, fmt.Errorf("%s:1: %w", name, err)
	}
	rd := &RowReader{name: name, layout: l, byKey: map[string]*Workload{}, stats: ReadStats{Source: name, Kind: l.kind},
		key: firstOf(header, l.key), text: firstOf(header, l.text), schema: firstOf(header, l.schema), executions: indexOf(header, l.executions)}
	var missing []string
	for _, c := range l.columns {
		i := firstOf(header, c.names)
		if i < 0 && c.required {
			missing = append(missing, strings.Join(c.names, " or "))
		}
		rd.columns = append(rd.columns, i)
		rd.width = max(rd.width, i+1)
	}
	if missing != nil {
		return nil, fmt.Errorf("%s:1: %s export without column %s", name, l.kind, strings.Join(missing, ", "))
	}
	rd.width = max(rd.width, rd.key+1, rd.executions+1)
	return rd, nil
}

// Workloads returns the statements read, in order of first row, and the
// counts of rows kept and skipped.
func (rd *RowReader) Workloads() ([]*Workload, ReadStats) { return rd.order, rd.stats }

// Row adds a row (line: its line, or row number, for messages). A bad row
// is reported to diag and skipped.
func (rd *RowReader) Row(rec []string, line int, diag *input.Diagnostics) {
	if len(rec) < rd.width {
		rd.stats.Malformed++
		diag.Malformed(rd.name, line, fmt.Sprintf("%d fields, want at least %d", len(rec), rd.width))
		return
	}
	execs, err := strconv.ParseInt(strings.TrimSpace(rec[rd.executions]), 10, 64)
	if err != nil || execs < 0 {
		rd.stats.Malformed++
		diag.Malformed(rd.name, line, fmt.Sprintf("%s %q: not a count", rd.layout.executions, rec[rd.executions]))
		return
	}
	values := make([]float64, len(rd.columns))
	for i, ci := range rd.columns {
		if ci < 0 {
			continue
		}
		cell := strings.TrimSpace(rec[ci])
		c := rd.layout.columns[i]
		if !c.required && (cell == "" || cell == "NULL" || cell == `\N`) {
			continue
		}
		v, err := strconv.ParseFloat(cell, 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 1) {
			rd.stats.Malformed++
			diag.Malformed(rd.name, line, fmt.Sprintf("%s %q: not a non-negative number", c.names[0], cell))
			return
		}
		values[i] = v / c.divisor
	}
	if execs == 0 {
		rd.stats.Unexecuted++
		return
	}
	rd.stats.Rows++
	w := rd.workload(rec)
	w.Executions += execs
	for i, v := range values {
		for _, f := range rd.layout.columns[i].features {
			w.Totals[f] += v
		}
	}
}

func (rd *RowReader) workload(rec []string) *Workload {
	key := strings.TrimSpace(rec[rd.key])
	if rd.schema >= 0 && rd.schema < len(rec) {
		if s := strings.TrimSpace(rec[rd.schema]); s != "" && s != "NULL" {
			key = s + "/" + key
		}
	}
	if w, ok := rd.byKey[key]; ok {
		return w
	}
	w := &Workload{Key: key, Source: rd.name, Kind: rd.layout.kind, Totals: map[string]float64{}}
	if rd.text >= 0 && rd.text < len(rec) {
		w.Text = rec[rd.text]
	}
	rd.byKey[key] = w
	rd.order = append(rd.order, w)
	return w
}
