package oracle10046

import (
	"html"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/latscope/latscope/source"
)

// tkprofWaits parses the "Elapsed times include waiting on following
// events" tables of TKPROF's OVERALL TOTALS sections (non-recursive and
// recursive) and adds them up per event: times waited and seconds.
func tkprofWaits(t *testing.T, text string) map[string]eventTotal {
	t.Helper()
	row := regexp.MustCompile(`^\s+(\S.*?)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s*$`)
	out := map[string]eventTotal{}
	sections := 0
	for _, title := range []string{"OVERALL TOTALS FOR ALL NON-RECURSIVE STATEMENTS", "OVERALL TOTALS FOR ALL RECURSIVE STATEMENTS"} {
		i := strings.Index(text, title)
		if i < 0 {
			t.Fatalf("TKPROF report has no %q", title)
		}
		sec := text[i:]
		j := strings.Index(sec, "Elapsed times include waiting on following events:")
		if j < 0 {
			t.Fatalf("%q has no wait table", title)
		}
		sections++
		lines := strings.Split(sec[j:], "\n")[3:] // title, two header lines
		for _, l := range lines {
			m := row.FindStringSubmatch(l)
			if m == nil {
				break
			}
			n, _ := strconv.ParseFloat(m[2], 64)
			s, _ := strconv.ParseFloat(m[4], 64)
			e := out[m[1]]
			e.count += n
			e.sum += s
			out[m[1]] = e
		}
	}
	if sections != 2 || len(out) == 0 {
		t.Fatalf("parsed %d TKPROF sections, %d events", sections, len(out))
	}
	return out
}

// The 11.1 trace against its TKPROF report: exact wait counts per event and
// total wait time within TKPROF's rounding (0.01 s).
func TestDBM11106MatchesTkprof(t *testing.T) {
	want := tkprofWaits(t, string(readShared(t, fileTkprof)))
	res := run(t, fileDBM11106, readShared(t, fileDBM11106), source.Options{})
	got := totals(res.Intervals)
	if len(got) != len(want) {
		t.Errorf("events %v, TKPROF lists %v", got, want)
	}
	var all, allWant float64
	for ev, w := range want {
		g := got[ev]
		if g.count != w.count {
			t.Errorf("%s: %g waits, TKPROF %g", ev, g.count, w.count)
		}
		if d := math.Abs(g.sum/1e6 - w.sum); d > 0.01 {
			t.Errorf("%s: %.6f s waited, TKPROF %.2f s", ev, g.sum/1e6, w.sum)
		}
		all += g.count
		allWant += w.count
	}
	if all != 2289 || allWant != 2289 {
		t.Errorf("%g waits, TKPROF %g, want the file's 2289", all, allWant)
	}
}

// tvdHistograms parses TVD$XTAT's per-event sections of the overall profile
// ("<a name="EVENT-"></a>EVENT", the statement-level ones end in "-N") and
// their "A ≥ duration < B" rows: number of events per [A, B) µs.
func tvdHistograms(t *testing.T, page string) map[string]map[int]float64 {
	t.Helper()
	head := regexp.MustCompile(`<a name="([^"]*)"></a>([^&<]*)&nbsp;`)
	row := regexp.MustCompile(`<td align="center" class="color">(\d+) &ge; duration &lt; (\d+)</td>(.*)`)
	cell := regexp.MustCompile(`<td align="right" class="color">([^<]*)</td>`)
	out := map[string]map[int]float64{}
	for _, sec := range strings.Split(page, "<h2>")[1:] {
		m := head.FindStringSubmatch(sec)
		if m == nil || !strings.HasSuffix(m[1], "-") {
			continue // not an event, or a statement's own event section
		}
		event := html.UnescapeString(strings.TrimSpace(m[2]))
		for _, l := range strings.Split(sec, "\n") {
			r := row.FindStringSubmatch(l)
			if r == nil {
				continue
			}
			lo, _ := strconv.Atoi(r[1])
			hi, _ := strconv.Atoi(r[2])
			if hi != max(2*lo, 2) {
				t.Fatalf("%s: row %d..%d is not a power-of-two bucket", event, lo, hi)
			}
			cells := cell.FindAllStringSubmatch(r[3], -1)
			if len(cells) < 3 {
				t.Fatalf("%s: row %q has %d cells", event, l, len(cells))
			}
			// Duration [s], %, Number of Events, ...
			n, err := strconv.ParseFloat(strings.ReplaceAll(cells[2][1], ",", ""), 64)
			if err != nil {
				t.Fatalf("%s: events %q: %v", event, cells[2][1], err)
			}
			if out[event] == nil {
				out[event] = map[int]float64{}
			}
			out[event][lo] = n
		}
	}
	return out
}

// Per-event power-of-two buckets equal TVD$XTAT's histograms, bucket by
// bucket. TVD labels its rows "A ≥ duration < B" but counts A < ela ≤ B
// (its first row [0, 2] holds ela 0, 1 and 2: the two "SQL*Net message to
// client" waits of ela= 2 are in it), while latscope's buckets are [A, B)
// like Oracle's own histograms. So each of our buckets [A, B) must hold
// TVD's (A, B] count, plus the waits of ela exactly A, minus those of ela
// exactly B, counted from the raw trace text. TVD's first row [0, 2] maps
// to our zero row [0, 1) plus row [1, 2).
func TestDBM11106MatchesTVDXTATHistograms(t *testing.T) {
	data := string(readShared(t, fileDBM11106))
	tvd := tvdHistograms(t, string(readShared(t, fileTVD)))
	res := run(t, fileDBM11106, []byte(data), source.Options{})
	got := merged(res.Intervals)
	if len(tvd) != 7 || len(got) != len(tvd) {
		t.Fatalf("TVD$XTAT has %d event histograms, we have %d (want 7 each)", len(tvd), len(got))
	}
	exactly := map[string]map[int]float64{} // event → ela → waits
	for _, m := range waitLineRe.FindAllStringSubmatch(data, -1) {
		ela, _ := strconv.Atoi(m[2])
		if exactly[m[1]] == nil {
			exactly[m[1]] = map[int]float64{}
		}
		exactly[m[1]][ela]++
	}
	if n := tvd["direct path read temp"][2]; n != exactly["direct path read temp"][3]+exactly["direct path read temp"][4] {
		t.Errorf("TVD's [2, 4) row of direct path read temp holds %g, not the waits of ela 3 and 4", n)
	}
	for ev, rows := range tvd {
		h := got[ev]
		if h == nil {
			t.Errorf("%s: no histogram", ev)
			continue
		}
		ours := map[int]float64{}
		r := h.Rows()
		ours[0] += r.ZeroCount
		for j, c := range r.Counts {
			lo := 1 << (r.First + j)
			if lo == 1 {
				lo = 0 // TVD's first row
			}
			ours[lo] += c
		}
		want := map[int]float64{}
		for lo, n := range rows {
			hi := max(2*lo, 2)
			want[lo] += n - exactly[ev][hi]
			want[hi] += exactly[ev][hi]
		}
		for lo := range ours {
			want[lo] += 0
		}
		for lo, w := range want {
			if ours[lo] != w {
				t.Errorf("%s [%d, %d) µs: %g events, TVD$XTAT's rows give %g", ev, lo, max(2*lo, 2), ours[lo], w)
			}
		}
		if h.Count() != sumValues(rows) {
			t.Errorf("%s: %g events, TVD$XTAT %g", ev, h.Count(), sumValues(rows))
		}
	}
}

func sumValues(m map[int]float64) float64 {
	s := 0.0
	for _, v := range m {
		s += v
	}
	return s
}
