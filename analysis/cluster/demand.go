package cluster

import (
	"slices"

	"github.com/latscope/latscope/analysis/profile"
)

// Demand features, per execution. The names are the column names of every
// output.
const (
	FeatureCPU           = "cpu_ms"
	FeatureExec          = "exec_ms"
	FeatureLogicalReads  = "logical_reads"
	FeaturePhysicalReads = "physical_reads"
	FeatureUserIO        = "user_io_ms"
	FeatureSystemIO      = "system_io_ms"
	FeatureCommit        = "commit_ms"
	FeatureConcurrency   = "concurrency_ms"
	FeatureApplication   = "application_ms"
	FeatureConfiguration = "configuration_ms"
	FeatureNetwork       = "network_ms"
	FeatureCluster       = "cluster_ms"
	FeatureOtherWait     = "other_wait_ms"
	FeatureTempBlocks    = "temp_blocks"
	FeatureLock          = "lock_ms"
	FeatureRowsExamined  = "rows_examined"
	FeatureTmpDiskTables = "tmp_disk_tables"
	FeatureSortRows      = "sort_rows"
)

// featureOrder is the order of the features in every output.
var featureOrder = []string{
	FeatureCPU, FeatureExec, FeatureLogicalReads, FeaturePhysicalReads,
	FeatureUserIO, FeatureSystemIO, FeatureCommit, FeatureConcurrency, FeatureApplication,
	FeatureConfiguration, FeatureNetwork, FeatureCluster, FeatureOtherWait,
	FeatureTempBlocks, FeatureLock, FeatureRowsExamined, FeatureTmpDiskTables, FeatureSortRows,
}

// Source kinds.
const (
	Kind10046      = "10046"
	KindPgStat     = "pg_stat_statements"
	KindPerfSchema = "performance_schema"
	usPerMs        = 1e3
	psPerMs        = 1e9
)

// Workload is one statement's demands: totals over its executions, by
// feature.
type Workload struct {
	Key        string             `json:"key"`
	Text       string             `json:"text,omitempty"`
	Source     string             `json:"source"`
	Kind       string             `json:"kind"`
	Executions int64              `json:"executions"`
	Totals     map[string]float64 `json:"totals"`
}

// PerExecution returns the workload's demand on a feature per execution.
func (w *Workload) PerExecution(feature string) float64 {
	if w.Executions == 0 {
		return 0
	}
	return w.Totals[feature] / float64(w.Executions)
}

// FromProfile turns a 10046 profile's statements into workloads: CPU
// (c=), logical reads (cr + cu), physical reads (p) and the waits on the
// statement's cursor by wait class, idle waits left out. Statements never
// executed are skipped and counted.
func FromProfile(source string, p *profile.Profile) ([]*Workload, ReadStats) {
	stats := ReadStats{Source: source, Kind: Kind10046}
	var ws []*Workload
	for _, s := range p.Statements {
		if s.Executions == 0 {
			stats.Unexecuted++
			continue
		}
		w := &Workload{Key: s.Key, Text: s.Text, Source: source, Kind: Kind10046, Executions: s.Executions, Totals: map[string]float64{
			FeatureCPU:           float64(s.Total.CPUUS) / usPerMs,
			FeatureLogicalReads:  float64(s.Total.Query + s.Total.Current),
			FeaturePhysicalReads: float64(s.Total.Disk),
		}}
		for _, e := range s.Events {
			class := WaitClass(e.Name)
			if class == idleClass {
				continue
			}
			w.Totals[waitFeature(class)] += float64(e.US) / usPerMs
		}
		ws = append(ws, w)
	}
	stats.Rows = len(ws)
	return ws, stats
}

// Dataset is the workloads' per-execution demand vectors on the features
// some workload has a demand on.
type Dataset struct {
	Features  []string    `json:"features"`
	Workloads []*Workload `json:"-"`
	// Vectors[i][j] is workload i's demand on feature j per execution.
	Vectors [][]float64 `json:"-"`
}

// NewDataset lays the workloads out as vectors. A feature every workload
// has zero demand on (or none) is left out: it separates nothing.
func NewDataset(ws []*Workload) *Dataset {
	d := &Dataset{Workloads: ws}
	for _, f := range featureOrder {
		if slices.ContainsFunc(ws, func(w *Workload) bool { return w.Totals[f] != 0 }) {
			d.Features = append(d.Features, f)
		}
	}
	for _, w := range ws {
		v := make([]float64, len(d.Features))
		for j, f := range d.Features {
			v[j] = w.PerExecution(f)
		}
		d.Vectors = append(d.Vectors, v)
	}
	return d
}
