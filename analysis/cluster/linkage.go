package cluster

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Linkage is how the distance between two clusters is measured.
type Linkage string

// The linkages. Single linkage merges the two clusters whose closest
// points are closest: its merges are the edges of the minimum spanning
// tree, in order of length (the seed's MST method). Average takes the mean
// distance between their points; Ward the increase in within-cluster
// variance, as SciPy defines it.
const (
	Single  Linkage = "single"
	Average Linkage = "average"
	Ward    Linkage = "ward"
)

// ParseLinkage checks a linkage's name.
func ParseLinkage(s string) (Linkage, error) {
	switch l := Linkage(s); l {
	case Single, Average, Ward:
		return l, nil
	}
	return "", fmt.Errorf("linkage %q: want single, average or ward", s)
}

// Merge is one row of the linkage matrix, as SciPy's: clusters A < B (0..n-1
// are the points, n+i the cluster merge i made) merged at Height into a
// cluster of Size points. Merges are in order of height.
type Merge struct {
	A      int     `json:"a"`
	B      int     `json:"b"`
	Height float64 `json:"height"`
	Size   int     `json:"size"`
}

// Link clusters the points hierarchically by Euclidean distance: n−1
// merges. Single linkage is Prim's minimum spanning tree; average and Ward
// the nearest-neighbour chain with Lance–Williams updates, as SciPy runs
// them: O(n²) time, and O(n²) memory for average and Ward.
func Link(points [][]float64, method Linkage) ([]Merge, error) {
	n := len(points)
	for i, p := range points {
		for j, x := range p {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("point %d: coordinate %d is %g", i, j, x)
			}
		}
	}
	if n < 2 {
		return nil, nil
	}
	var edges []edge
	switch method {
	case Single:
		edges = minimumSpanningTree(points)
	case Average, Ward:
		edges = nearestNeighbourChain(points, method)
	default:
		return nil, fmt.Errorf("linkage %q: want single, average or ward", method)
	}
	// A stable sort keeps equal heights in the order they were found, as
	// SciPy's (mergesort) does.
	slices.SortStableFunc(edges, func(a, b edge) int { return cmp.Compare(a.d, b.d) })
	return label(edges, n), nil
}

// edge joins the clusters holding points x and y at distance d.
type edge struct {
	x, y int
	d    float64
}

func distance(a, b []float64) float64 {
	var s float64
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return math.Sqrt(s)
}

// minimumSpanningTree is Prim's algorithm on the complete graph: each step
// adds the point nearest to the tree (the first of equals).
func minimumSpanningTree(points [][]float64) []edge {
	n := len(points)
	inTree := make([]bool, n)
	nearest := make([]float64, n)
	from := make([]int, n)
	for i := range nearest {
		nearest[i] = math.Inf(1)
	}
	edges := make([]edge, 0, n-1)
	x := 0
	for range n - 1 {
		inTree[x] = true
		next, best := -1, math.Inf(1)
		for i := range n {
			if inTree[i] {
				continue
			}
			if d := distance(points[x], points[i]); d < nearest[i] {
				nearest[i], from[i] = d, x
			}
			if nearest[i] < best {
				next, best = i, nearest[i]
			}
		}
		edges = append(edges, edge{from[next], next, best})
		x = next
	}
	return edges
}

// condensed is the upper triangle of a symmetric distance matrix.
type condensed struct {
	n int
	d []float64
}

func (c *condensed) index(i, j int) int {
	if i > j {
		i, j = j, i
	}
	return c.n*i - i*(i+1)/2 + j - i - 1
}

func (c *condensed) at(i, j int) float64     { return c.d[c.index(i, j)] }
func (c *condensed) set(i, j int, v float64) { c.d[c.index(i, j)] = v }

// nearestNeighbourChain follows nearest neighbours until two clusters are
// each other's nearest, merges them, and updates the distances to the
// merged cluster (kept in the slot of the larger index, as SciPy does).
func nearestNeighbourChain(points [][]float64, method Linkage) []edge {
	n := len(points)
	dist := &condensed{n: n, d: make([]float64, n*(n-1)/2)}
	for i := range n {
		for j := i + 1; j < n; j++ {
			dist.set(i, j, distance(points[i], points[j]))
		}
	}
	size := make([]int, n)
	for i := range size {
		size[i] = 1
	}
	edges := make([]edge, 0, n-1)
	chain := make([]int, 0, n)
	for range n - 1 {
		if len(chain) == 0 {
			chain = append(chain, slices.IndexFunc(size, func(s int) bool { return s > 0 }))
		}
		var x, y int
		var best float64
		for {
			x = chain[len(chain)-1]
			y, best = -1, math.Inf(1)
			if len(chain) > 1 {
				y = chain[len(chain)-2]
				best = dist.at(x, y)
			}
			for i := range n {
				if size[i] == 0 || i == x {
					continue
				}
				if d := dist.at(x, i); d < best {
					best, y = d, i
				}
			}
			if len(chain) > 1 && y == chain[len(chain)-2] {
				break
			}
			chain = append(chain, y)
		}
		chain = chain[:len(chain)-2]
		if x > y {
			x, y = y, x
		}
		edges = append(edges, edge{x, y, best})
		nx, ny := size[x], size[y]
		size[x], size[y] = 0, nx+ny
		for i := range n {
			if size[i] == 0 || i == y {
				continue
			}
			dist.set(i, y, lanceWilliams(method, dist.at(i, x), dist.at(i, y), best, nx, ny, size[i]))
		}
	}
	return edges
}

// lanceWilliams is the distance from cluster i (ni points) to the union of
// x and y (nx, ny points), from its distances to each and theirs (dxy).
func lanceWilliams(method Linkage, dix, diy, dxy float64, nx, ny, ni int) float64 {
	if method == Ward {
		t := 1 / float64(nx+ny+ni)
		// Rounding can leave a tiny negative for coincident clusters.
		return math.Sqrt(max(0, float64(ni+nx)*t*dix*dix+float64(ni+ny)*t*diy*diy-float64(ni)*t*dxy*dxy))
	}
	return (float64(nx)*dix + float64(ny)*diy) / float64(nx+ny)
}

// label turns merges of points (each naming a point of either side) into
// SciPy's linkage rows naming clusters.
func label(edges []edge, n int) []Merge {
	uf := newUnionFind(n)
	merges := make([]Merge, len(edges))
	for i, e := range edges {
		a, b := uf.find(e.x), uf.find(e.y)
		if a > b {
			a, b = b, a
		}
		merges[i] = Merge{A: a, B: b, Height: e.d, Size: uf.union(a, b)}
	}
	return merges
}

// unionFind names each set by the cluster that formed it: points 0..n-1,
// then n, n+1, ... for each union.
type unionFind struct {
	parent []int
	size   []int
	next   int
}

func newUnionFind(n int) *unionFind {
	u := &unionFind{parent: make([]int, 2*n-1), size: make([]int, 2*n-1), next: n}
	for i := range u.parent {
		u.parent[i] = i
		if i < n {
			u.size[i] = 1
		}
	}
	return u
}

func (u *unionFind) find(x int) int {
	root := x
	for u.parent[root] != root {
		root = u.parent[root]
	}
	for u.parent[x] != root {
		u.parent[x], x = root, u.parent[x]
	}
	return root
}

// union joins two roots under a new cluster and returns its size.
func (u *unionFind) union(a, b int) int {
	c := u.next
	u.next++
	u.parent[a], u.parent[b] = c, c
	u.size[c] = u.size[a] + u.size[b]
	return u.size[c]
}
