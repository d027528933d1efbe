package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/latscope/latscope/analysis/profile"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// ScipyDirEnv names a directory SciPy was installed into with
// `pip install --target` (.ci/run does it); without it the tests look for
// SciPy in python3's own path, then install it from PyPI into a temporary
// directory.
const ScipyDirEnv = "LATSCOPE_SCIPY_DIR"

var scipyOnce struct {
	sync.Once
	pythonPath string
	err        error
	installed  string // a temporary directory pip installed into, removed by TestMain
}

func TestMain(m *testing.M) {
	code := m.Run()
	if dir := scipyOnce.installed; dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// scipy returns the PYTHONPATH under which python3 imports SciPy.
func scipy(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		testenv.SkipOrFail(t, "no python3 to run SciPy: %v", err)
	}
	scipyOnce.Do(func() {
		imports := func(path string) bool {
			cmd := exec.Command("python3", "-c", "import scipy.cluster.hierarchy")
			cmd.Env = append(os.Environ(), "PYTHONPATH="+path)
			return cmd.Run() == nil
		}
		if dir := os.Getenv(ScipyDirEnv); dir != "" && imports(dir) {
			scipyOnce.pythonPath = dir
			return
		}
		if imports("") {
			return
		}
		dir, err := os.MkdirTemp("", "latscope-scipy-")
		if err != nil {
			scipyOnce.err = err
			return
		}
		scipyOnce.installed = dir
		out, err := exec.Command("python3", "-m", "pip", "install", "--quiet", "--target", dir, "scipy").CombinedOutput()
		if err != nil || !imports(dir) {
			scipyOnce.err = fmt.Errorf("pip install scipy: %v: %s", err, out)
			return
		}
		scipyOnce.pythonPath = dir
	})
	if scipyOnce.err != nil {
		testenv.SkipOrFail(t, "SciPy unavailable (set %s to a pip --target directory holding it): %v", ScipyDirEnv, scipyOnce.err)
	}
	return scipyOnce.pythonPath
}

// scipyScript clusters the points by each linkage as linkage + fcluster
// (maxclust) do and prints the merge heights, the labels per k, and the
// share of variance of the covariance's two largest eigenvalues.
const scipyScript = `
import json, sys
import numpy as np
from scipy.cluster.hierarchy import linkage, fcluster
from scipy.spatial.distance import pdist, squareform
job = json.load(sys.stdin)
x = np.array(job["points"], dtype=float)
d = squareform(pdist(x))
def silhouette(labels):
    s = np.zeros(len(x))
    for i in range(len(x)):
        own = labels == labels[i]
        if own.sum() == 1:
            continue
        a = d[i, own].sum() / (own.sum() - 1)
        b = min(d[i, labels == c].mean() for c in set(labels) if c != labels[i])
        s[i] = (b - a) / max(a, b) if max(a, b) > 0 else 0
    return s.mean()
out = {"methods": {}}
for method in ["single", "average", "ward"]:
    z = linkage(x, method=method, metric="euclidean")
    labels = {str(k): fcluster(z, k, criterion="maxclust") for k in job["ks"]}
    out["methods"][method] = {"heights": z[:, 2].tolist(), "labels": {k: l.tolist() for k, l in labels.items()},
        "silhouettes": {k: silhouette(l) for k, l in labels.items() if 2 <= len(set(l)) < len(x)}}
w, v = np.linalg.eigh(np.atleast_2d(np.cov(x.T, bias=True)))
order = np.argsort(w)[::-1][:2]
out["explained"] = (w[order] / w.sum()).tolist() if w.sum() > 0 else []
# The projection on the first two components, each signed so that its
# largest coordinate is positive; only where the eigenvalues are distinct
# (a repeated one has no unique direction).
distinct = len(w) > 2 and all(abs(w[order[i]] - w[j]) > 1e-9 * max(1, abs(w).max()) for i in range(2) for j in range(len(w)) if j != order[i])
if distinct:
    dirs = v[:, order]
    for c in range(2):
        if dirs[np.argmax(np.abs(dirs[:, c])), c] < 0:
            dirs[:, c] = -dirs[:, c]
    out["points"] = ((x - x.mean(axis=0)) @ dirs).tolist()
json.dump(out, sys.stdout)
`

type scipyLinkage struct {
	Heights     []float64          `json:"heights"`
	Labels      map[string][]int   `json:"labels"`
	Silhouettes map[string]float64 `json:"silhouettes"`
}

type scipyResult struct {
	Methods   map[Linkage]scipyLinkage `json:"methods"`
	Explained []float64                `json:"explained"`
	// Points are the projection on the first two components, when they
	// are unique.
	Points [][2]float64 `json:"points"`
}

func runScipy(t *testing.T, pythonPath string, points [][]float64, ks []int) scipyResult {
	t.Helper()
	job, err := json.Marshal(map[string]any{"points": points, "ks": ks})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("python3", "-c", scipyScript)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+pythonPath)
	cmd.Stdin = bytes.NewReader(job)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scipy: %v: %s", err, stderr.String())
	}
	var r scipyResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// firstSeen renumbers labels in order of first appearance, so that two
// partitions are equal up to the clusters' names iff the results are.
func firstSeen(labels []int) []int {
	ids := map[int]int{}
	out := make([]int, len(labels))
	for i, l := range labels {
		id, ok := ids[l]
		if !ok {
			id = len(ids)
			ids[l] = id
		}
		out[i] = id
	}
	return out
}

// compareWithScipy checks, for each linkage, the merge heights and the
// partitions in 2..maxK clusters against SciPy's on the same vectors, and
// the principal components' shares of variance and, where they are unique,
// the projected points against numpy's; it returns how many points' projections
// were compared.
func compareWithScipy(t *testing.T, pythonPath string, points [][]float64, maxK int) int {
	t.Helper()
	n := len(points)
	ks := []int{}
	for k := 2; k <= min(maxK, n-1); k++ {
		ks = append(ks, k)
	}
	want := runScipy(t, pythonPath, points, ks)
	for _, method := range []Linkage{Single, Average, Ward} {
		merges, err := Link(points, method)
		if err != nil {
			t.Fatal(err)
		}
		sw := want.Methods[method]
		for i, m := range merges {
			if w := sw.Heights[i]; math.Abs(m.Height-w) > 1e-9*max(1, math.Abs(w)) {
				t.Errorf("%s: merge %d at height %.12g, SciPy %.12g", method, i, m.Height, w)
				break
			}
		}
		for _, k := range ks {
			got, scipyLabels := Cut(merges, k), firstSeen(sw.Labels[fmt.Sprint(k)])
			if !slices.Equal(got, scipyLabels) {
				t.Errorf("%s, k=%d: clusters\n%v\nSciPy's\n%v", method, k, got, scipyLabels)
			}
			want, defined := sw.Silhouettes[fmt.Sprint(k)]
			if s, ok := Silhouette(points, got); ok != defined || math.Abs(s-want) > 1e-9 {
				t.Errorf("%s, k=%d: silhouette %.12g (defined %v), numpy's %.12g (%v)", method, k, s, ok, want, defined)
			}
		}
	}
	p := Project(points)
	for c, w := range want.Explained {
		if math.Abs(p.Explained[c]-w) > 1e-9 {
			t.Errorf("PC%d explains %.12f of the variance, numpy's eigh %.12f", c+1, p.Explained[c], w)
		}
	}
	for i, w := range want.Points {
		for c := range 2 {
			if math.Abs(p.Points[i][c]-w[c]) > 1e-7*max(1, math.Abs(w[c])) {
				t.Fatalf("point %d: PC%d %.12g, numpy's %.12g", i, c+1, p.Points[i][c], w[c])
			}
		}
	}
	return len(want.Points)
}

// mixture draws groups of points around well-apart centres: continuous
// values, so no two distances (and no two merge heights) tie.
func mixture(seed uint64, centres [][]float64, perGroup int, spread float64) (points [][]float64, groups []int) {
	rng := rand.New(rand.NewPCG(seed, 19))
	for g, c := range centres {
		for range perGroup {
			p := make([]float64, len(c))
			for j := range c {
				p[j] = c[j] + spread*rng.NormFloat64()
			}
			points = append(points, p)
			groups = append(groups, g)
		}
	}
	// Interleave the groups so that labels in order of first point do not
	// follow the groups by construction.
	perm := rng.Perm(len(points))
	ps, gs := make([][]float64, len(points)), make([]int, len(points))
	for i, j := range perm {
		ps[i], gs[i] = points[j], groups[j]
	}
	return ps, gs
}

func TestSyntheticMixtureEqualsScipy(t *testing.T) {
	py := scipy(t)
	centres := [][]float64{{0, 0, 0, 0, 0}, {10, 0, 0, 5, 0}, {0, 12, 0, 0, 3}, {6, 6, 9, 0, 0}}
	points, groups := mixture(1, centres, 25, 1)
	if n := compareWithScipy(t, py, points, 8); n != 100 {
		t.Errorf("%d projected points compared with numpy's, want 100", n)
	}
	// Every linkage finds the four groups, and suggests four.
	for _, method := range []Linkage{Single, Average, Ward} {
		merges, _ := Link(points, method)
		if got := Cut(merges, 4); !slices.Equal(got, firstSeen(groups)) {
			t.Errorf("%s: 4 clusters %v, groups %v", method, got, firstSeen(groups))
		}
		for _, by := range []string{SuggestGap, SuggestSilhouette} {
			if k, _ := SuggestK(points, merges, 10, by); k != 4 {
				t.Errorf("%s suggests %d clusters by %s, want 4", method, k, by)
			}
		}
	}
}

// TestOverlappingMixtureEqualsScipy: groups that touch, where the linkages
// disagree with each other, still agree with SciPy's.
func TestOverlappingMixtureEqualsScipy(t *testing.T) {
	py := scipy(t)
	points, _ := mixture(7, [][]float64{{0, 0, 0}, {2, 1, 0}, {1, 3, 1}}, 60, 1)
	compareWithScipy(t, py, points, 10)
}

// TestRealTracesEqualScipy: the statements' demand vectors of every real
// 10046 trace, scaled as latscope cluster does (z-score, and z-score of
// logs), cluster as SciPy clusters them.
func TestRealTracesEqualScipy(t *testing.T) {
	py := scipy(t)
	traces := testenv.DataFiles(t, "trc10046/*/*.trc")
	compared, projected := 0, 0
	for _, rel := range traces {
		t.Run(filepath.Base(rel), func(t *testing.T) {
			ds := traceDataset(t, testenv.DataFile(t, rel))
			if len(ds.Vectors) < 3 {
				t.Skipf("%d executed statements", len(ds.Vectors))
			}
			compared++
			for _, s := range []Scaling{ScaleZ, ScaleLog} {
				projected += compareWithScipy(t, py, NewScaler(ds.Vectors, s).Apply(ds.Vectors), 10)
			}
		})
	}
	if compared < 5 {
		t.Errorf("compared %d traces, want the 5 or more with 3 statements or more", compared)
	}
	// All traces profiled together, as latscope cluster does with several.
	var paths []string
	for _, rel := range traces {
		paths = append(paths, testenv.DataFile(t, rel))
	}
	ds := traceDataset(t, paths...)
	for _, s := range []Scaling{ScaleZ, ScaleLog} {
		scaled := NewScaler(ds.Vectors, s).Apply(ds.Vectors)
		projected += compareWithScipy(t, py, scaled, 12)
		merges, _ := Link(scaled, Single)
		t.Logf("all %d traces, %s-scaled: %d statements, %d distinct demand vectors, %d merges at height 0",
			len(traces), s, len(ds.Vectors), distinct(scaled), slices.IndexFunc(merges, func(m Merge) bool { return m.Height > 0 }))
	}
	t.Logf("%d statements' projections on the first two components compared with numpy's", projected)
	if projected == 0 {
		t.Error("no real trace had distinct first eigenvalues: no projection compared")
	}
}

func distinct(vectors [][]float64) int {
	seen := map[string]bool{}
	for _, v := range vectors {
		seen[fmt.Sprint(v)] = true
	}
	return len(seen)
}

func traceDataset(t *testing.T, paths ...string) *Dataset {
	t.Helper()
	var inputs []profile.Input
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		inputs = append(inputs, profile.Input{Name: path, Reader: f})
	}
	p, err := profile.Build(context.Background(), inputs, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := FromProfile(strings.Join(paths, ", "), p)
	return NewDataset(ws)
}

func TestScipyScriptIsPython(t *testing.T) {
	if strings.Contains(scipyScript, "\t") {
		t.Error("the script is indented with tabs")
	}
}
