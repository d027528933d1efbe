// Package cluster characterizes a workload by clustering its statements
// on their resource demands per execution (CPU, logical and physical
// reads, waits by class), as capacity planners do to find a few
// representative workloads among thousands of statements: hierarchical
// agglomerative clustering on the Euclidean distance of the (scaled)
// demand vectors, with single linkage (the minimum spanning tree), average
// or Ward linkage; flat clusters cut as SciPy's fcluster does; centroids
// and totals in the original units; a 2-D principal-component projection.
// Demands come from 10046 traces (through analysis/profile),
// pg_stat_statements and performance_schema digest exports.
package cluster

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Options choose the clustering.
type Options struct {
	Linkage Linkage
	Scaling Scaling
	// K is the number of clusters; 0 takes the suggested one.
	K int
	// MaxSuggested bounds the suggested number of clusters.
	MaxSuggested int
	// Suggest is the criterion of the suggestion: SuggestGap (default) or
	// SuggestSilhouette.
	Suggest string
}

// maxDemand bounds a demand: squares of distances between larger ones
// overflow.
const maxDemand = 1e150

// DefaultMaxSuggested is the largest number of clusters suggested.
const DefaultMaxSuggested = 10

// Result is a clustering of the workloads.
type Result struct {
	// Inputs are what each source gave; the caller fills them in.
	Inputs   []ReadStats `json:"inputs"`
	Features []string    `json:"features"`
	Linkage  Linkage     `json:"linkage"`
	Scaling  Scaling     `json:"scale"`
	Scaler   Scaler      `json:"scaler"`
	// K is the number of clusters asked for (or suggested); Clusters may
	// be fewer when merges tie at the cut.
	K           int         `json:"k"`
	KSuggested  bool        `json:"k_suggested"`
	Suggested   int         `json:"suggested_k"`
	SuggestedBy string      `json:"suggested_by"`
	Candidates  []Candidate `json:"candidates"`
	// CutHeight is the height of the last merge kept.
	CutHeight float64    `json:"cut_height"`
	Merges    []Merge    `json:"merges"`
	Clusters  []*Cluster `json:"clusters"`
	Members   []Member   `json:"members"`
	Projection
}

// Member is one workload with its demands per execution (in Features'
// order) and its cluster.
type Member struct {
	*Workload
	Demands []float64 `json:"demands"`
	Cluster int       `json:"cluster"`
}

// Cluster is a group of workloads: its centroid is the mean of their
// demands per execution (the seed's representative workload), its totals
// the sums of their demands over all their executions.
type Cluster struct {
	ID         int       `json:"id"`
	Members    []int     `json:"members"`
	Executions int64     `json:"executions"`
	Centroid   []float64 `json:"centroid"`
	Totals     []float64 `json:"totals"`
}

// Analyze clusters the dataset's workloads.
func Analyze(ds *Dataset, opts Options) (*Result, error) {
	n := len(ds.Vectors)
	if n == 0 {
		return nil, errors.New("no statement with executions to cluster")
	}
	if opts.MaxSuggested <= 0 {
		opts.MaxSuggested = DefaultMaxSuggested
	}
	for i, v := range ds.Vectors {
		for j, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > maxDemand {
				return nil, fmt.Errorf("statement %s: %s per execution is %g: too large to cluster", ds.Workloads[i].Key, ds.Features[j], x)
			}
		}
	}
	r := &Result{Features: ds.Features, Linkage: opts.Linkage, Scaling: opts.Scaling}
	r.Scaler = NewScaler(ds.Vectors, opts.Scaling)
	scaled := r.Scaler.Apply(ds.Vectors)
	merges, err := Link(scaled, opts.Linkage)
	if err != nil {
		return nil, err
	}
	r.Merges = merges
	r.SuggestedBy = cmp.Or(opts.Suggest, SuggestGap)
	r.Suggested, r.Candidates = SuggestK(scaled, merges, opts.MaxSuggested, r.SuggestedBy)
	r.K, r.KSuggested = opts.K, opts.K == 0
	if r.KSuggested {
		r.K = r.Suggested
	}
	r.K = min(r.K, n)
	labels := Cut(merges, r.K)
	if r.K < n {
		mh := maxHeights(merges)
		slices.Sort(mh)
		r.CutHeight = mh[n-r.K-1]
	}
	r.Clusters = summarize(ds, labels)
	for i, w := range ds.Workloads {
		r.Members = append(r.Members, Member{Workload: w, Demands: ds.Vectors[i]})
	}
	for _, c := range r.Clusters {
		for _, m := range c.Members {
			r.Members[m].Cluster = c.ID
		}
	}
	r.Projection = Project(scaled)
	return r, nil
}

// summarize groups the workloads by label into clusters numbered from 1,
// the most members first (then the first member's order).
func summarize(ds *Dataset, labels []int) []*Cluster {
	var clusters []*Cluster
	byLabel := map[int]*Cluster{}
	d := len(ds.Features)
	for i, l := range labels {
		c, ok := byLabel[l]
		if !ok {
			c = &Cluster{Centroid: make([]float64, d), Totals: make([]float64, d)}
			byLabel[l] = c
			clusters = append(clusters, c)
		}
		c.Members = append(c.Members, i)
		w := ds.Workloads[i]
		c.Executions += w.Executions
		for j, f := range ds.Features {
			c.Centroid[j] += ds.Vectors[i][j]
			c.Totals[j] += w.Totals[f]
		}
	}
	for _, c := range clusters {
		for j := range c.Centroid {
			c.Centroid[j] /= float64(len(c.Members))
		}
	}
	slices.SortStableFunc(clusters, func(a, b *Cluster) int {
		return cmp.Or(cmp.Compare(len(b.Members), len(a.Members)), cmp.Compare(a.Members[0], b.Members[0]))
	})
	for i, c := range clusters {
		c.ID = i + 1
	}
	return clusters
}
