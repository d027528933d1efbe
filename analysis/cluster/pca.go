package cluster

import (
	"math"
	"sort"
)

// Projection is the points' projection on their first two principal
// components.
type Projection struct {
	// Points[i] is point i's (PC1, PC2) coordinates.
	Points [][2]float64 `json:"points"`
	// Explained is the share of the variance each component carries.
	Explained [2]float64 `json:"explained"`
	// Components are the two unit directions, in the scaled features.
	Components [2][]float64 `json:"components"`
}

// Project finds the principal components of the (scaled) vectors — the
// eigenvectors of their covariance matrix, by Jacobi rotations — and
// projects the centred vectors on the first two. Each direction's sign
// makes its largest coordinate positive, so the picture is the same on
// every run.
func Project(vectors [][]float64) Projection {
	n := len(vectors)
	var p Projection
	if n == 0 {
		return p
	}
	d := len(vectors[0])
	mean := make([]float64, d)
	for _, v := range vectors {
		for j, x := range v {
			mean[j] += x / float64(n)
		}
	}
	cov := make([][]float64, d)
	for a := range cov {
		cov[a] = make([]float64, d)
		for b := range d {
			for _, v := range vectors {
				cov[a][b] += (v[a] - mean[a]) * (v[b] - mean[b])
			}
			cov[a][b] /= float64(n)
		}
	}
	values, vecs := symmetricEigen(cov)
	var total float64
	for _, l := range values {
		total += max(l, 0)
	}
	for c := range 2 {
		if c >= d {
			p.Components[c] = make([]float64, d)
			continue
		}
		dir := vecs[c]
		big := 0
		for j := range dir {
			if math.Abs(dir[j]) > math.Abs(dir[big])+1e-12 {
				big = j
			}
		}
		if dir[big] < 0 {
			for j := range dir {
				dir[j] = -dir[j]
			}
		}
		p.Components[c] = dir
		if total > 0 {
			p.Explained[c] = max(values[c], 0) / total
		}
	}
	p.Points = make([][2]float64, n)
	for i, v := range vectors {
		for c := range 2 {
			for j := range v {
				p.Points[i][c] += (v[j] - mean[j]) * p.Components[c][j]
			}
		}
	}
	return p
}

// symmetricEigen returns the eigenvalues of a symmetric matrix, largest
// first, and their unit eigenvectors, by cyclic Jacobi rotations.
func symmetricEigen(m [][]float64) ([]float64, [][]float64) {
	d := len(m)
	a := make([][]float64, d)
	v := make([][]float64, d) // columns are the eigenvectors
	for i := range d {
		a[i] = append([]float64(nil), m[i]...)
		v[i] = make([]float64, d)
		v[i][i] = 1
	}
	for sweep := 0; sweep < 100; sweep++ {
		var off, diag float64
		for i := range d {
			diag += a[i][i] * a[i][i]
			for j := i + 1; j < d; j++ {
				off += a[i][j] * a[i][j]
			}
		}
		if off <= 1e-30*max(diag, 1e-300) {
			break
		}
		for p := range d {
			for q := p + 1; q < d; q++ {
				if a[p][q] == 0 {
					continue
				}
				theta := (a[q][q] - a[p][p]) / (2 * a[p][q])
				t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				rotate(a, v, p, q, c, s)
			}
		}
	}
	order := make([]int, d)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return a[order[x]][order[x]] > a[order[y]][order[y]] })
	values := make([]float64, d)
	vecs := make([][]float64, d)
	for k, i := range order {
		values[k] = a[i][i]
		vecs[k] = make([]float64, d)
		for r := range d {
			vecs[k][r] = v[r][i]
		}
	}
	return values, vecs
}

// rotate applies the Jacobi rotation (p, q, c, s): a ← Jᵀ a J, v ← v J.
func rotate(a, v [][]float64, p, q int, c, s float64) {
	d := len(a)
	for k := range d {
		akp, akq := a[k][p], a[k][q]
		a[k][p], a[k][q] = c*akp-s*akq, s*akp+c*akq
	}
	for k := range d {
		apk, aqk := a[p][k], a[q][k]
		a[p][k], a[q][k] = c*apk-s*aqk, s*apk+c*aqk
	}
	for k := range d {
		vkp, vkq := v[k][p], v[k][q]
		v[k][p], v[k][q] = c*vkp-s*vkq, s*vkp+c*vkq
	}
}
