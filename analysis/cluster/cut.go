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

// Gap is the height between the merge that leaves K clusters and the next:
// how far the K clusters are from one another against how close their
// members are.
type Gap struct {
	K   int     `json:"k"`
	Gap float64 `json:"gap"`
}

// SuggestK returns the number of clusters (2 to maxK) whose cut has the
// largest gap in merge heights above it — the most distinct grouping —
// and the gaps it chose from. Fewer than 3 points give n.
func SuggestK(merges []Merge, maxK int) (int, []Gap) {
	n := len(merges) + 1
	if n < 3 {
		return n, nil
	}
	sorted := maxHeights(merges)
	slices.Sort(sorted)
	best, bestGap := 2, math.Inf(-1)
	var gaps []Gap
	for k := 2; k <= min(maxK, n-1); k++ {
		g := sorted[n-k] - sorted[n-k-1]
		gaps = append(gaps, Gap{K: k, Gap: g})
		if g > bestGap {
			best, bestGap = k, g
		}
	}
	return best, gaps
}
