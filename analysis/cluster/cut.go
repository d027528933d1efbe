package cluster

import (
	"math"
	"slices"
)

// maxHeights returns, per merge, the largest height in its subtree: the
// height itself when heights grow up the tree, as they do for single,
// average and Ward linkage up to rounding.
func maxHeights(merges []Merge) []float64 {
	n := len(merges) + 1
	mh := make([]float64, len(merges))
	for i, m := range merges {
		h := m.Height
		for _, c := range []int{m.A, m.B} {
			if c >= n {
				h = max(h, mh[c-n])
			}
		}
		mh[i] = h
	}
	return mh
}

// Cut returns the flat clusters of at most k the merges leave when cut at
// the lowest height that leaves no more than k, as SciPy's fcluster with
// criterion maxclust: labels[i] is point i's cluster, numbered from 0 in
// order of their first point. Merges at the same height are kept or undone
// together, so ties can leave fewer than k clusters.
func Cut(merges []Merge, k int) []int {
	n := len(merges) + 1
	uf := newUnionFind(n)
	if k < n {
		mh := maxHeights(merges)
		sorted := slices.Clone(mh)
		slices.Sort(sorted)
		threshold := sorted[n-k-1]
		for i, m := range merges {
			if mh[i] <= threshold {
				uf.union(uf.find(m.A), uf.find(m.B))
			} else {
				uf.next++ // keep the cluster numbers of later merges
			}
		}
	}
	labels := make([]int, n)
	ids := map[int]int{}
	for i := range labels {
		root := uf.find(i)
		id, ok := ids[root]
		if !ok {
			id = len(ids)
			ids[root] = id
		}
		labels[i] = id
	}
	return labels
}

// Candidate is a number of clusters the suggestion weighed.
type Candidate struct {
	K int `json:"k"`
	// Gap is the height between the merge that leaves K clusters and the
	// next: how far the K clusters are from one another against how close
	// their members are.
	Gap float64 `json:"gap"`
	// Silhouette is the mean silhouette of the cut into K, when the
	// suggestion is by silhouette (absent when the cut leaves fewer than 2
	// clusters or one per point).
	Silhouette *float64 `json:"silhouette,omitempty"`
}

// How the number of clusters is suggested.
const (
	SuggestGap        = "gap"
	SuggestSilhouette = "silhouette"
)

// SuggestK returns the number of clusters, 2 to maxK, that the criterion
// prefers — by gap, the cut below the largest gap in merge heights, the
// most distinct grouping; by silhouette, the cut whose points are on
// average the most clearly in their own cluster rather than the nearest
// other — and the candidates it chose from (the smaller k on equal
// scores). Fewer than 3 points give n.
func SuggestK(points [][]float64, merges []Merge, maxK int, by string) (int, []Candidate) {
	n := len(merges) + 1
	if n < 3 {
		return n, nil
	}
	sorted := maxHeights(merges)
	slices.Sort(sorted)
	best, bestScore := 2, math.Inf(-1)
	var candidates []Candidate
	for k := 2; k <= min(maxK, n-1); k++ {
		c := Candidate{K: k, Gap: sorted[n-k] - sorted[n-k-1]}
		score := c.Gap
		if by == SuggestSilhouette {
			score = math.Inf(-1)
			if s, ok := Silhouette(points, Cut(merges, k)); ok {
				c.Silhouette, score = &s, s
			}
		}
		candidates = append(candidates, c)
		if score > bestScore {
			best, bestScore = k, score
		}
	}
	return best, candidates
}

// Silhouette returns the mean silhouette of a partition (Rousseeuw 1987,
// as scikit-learn's silhouette_score): for each point, (b − a) / max(a, b),
// a its mean distance to the other members of its cluster, b its mean
// distance to the members of the nearest other cluster; 0 for a point
// alone in its cluster. It is defined for 2 to n−1 clusters: ok is false
// otherwise. O(n²) distances.
func Silhouette(points [][]float64, labels []int) (mean float64, ok bool) {
	k := 0
	for _, l := range labels {
		k = max(k, l+1)
	}
	n := len(points)
	if k < 2 || k >= n {
		return 0, false
	}
	size := make([]int, k)
	for _, l := range labels {
		size[l]++
	}
	sums := make([]float64, k)
	var total float64
	for i, p := range points {
		clear(sums)
		for j, q := range points {
			if j != i {
				sums[labels[j]] += distance(p, q)
			}
		}
		own := labels[i]
		if size[own] == 1 {
			continue
		}
		a, b := sums[own]/float64(size[own]-1), math.Inf(1)
		for c, sum := range sums {
			if c != own {
				b = min(b, sum/float64(size[c]))
			}
		}
		if m := max(a, b); m > 0 {
			total += (b - a) / m
		}
	}
	return total / float64(n), true
}
