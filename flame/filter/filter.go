// Package filter reshapes folded-stack profiles the way users otherwise do
// with grep and sed in front of flamegraph.pl: keep or drop stacks by a
// frame regular expression, re-root stacks at a function (inferno's
// flamegraph --base), or cut the callers of a function (inferno's
// collapse-perf --skip-after).
//
// Every function returns a new profile and leaves its input untouched.
// Stacks keep their order of first appearance (flame charts depend on
// it); stacks that become equal are summed. Differential profiles keep
// their base counts.
package filter

import (
	"regexp"
	"strings"

	"github.com/latscope/latscope/flame"
)

// Include keeps the stacks having at least one frame that re matches
// (unanchored, as with grep; anchor with ^ and $ for whole names).
func Include(p *flame.Profile, re *regexp.Regexp) *flame.Profile {
	return keep(p, func(frames string) bool { return anyFrame(frames, re) })
}

// Exclude drops the stacks having at least one frame that re matches.
func Exclude(p *flame.Profile, re *regexp.Regexp) *flame.Profile {
	return keep(p, func(frames string) bool { return !anyFrame(frames, re) })
}

// Focus re-roots every stack at its first (outermost) frame named name:
// that frame becomes the root and its callers are dropped. Stacks without
// the frame are dropped, as inferno-flamegraph --base does.
func Focus(p *flame.Profile, name string) *flame.Profile {
	return rewrite(p, func(frames string) (string, bool) {
		i := frameIndex(frames, name, false)
		if i < 0 {
			return "", false
		}
		return frames[i:], true
	})
}

// SkipAfter cuts the callers of the innermost frame named one of names,
// which becomes the root, as inferno-collapse-perf --skip-after does (the
// root "comm-pid" frame goes too). Stacks without such a frame are kept
// whole.
func SkipAfter(p *flame.Profile, names ...string) *flame.Profile {
	if len(names) == 0 {
		return copyProfile(p)
	}
	return rewrite(p, func(frames string) (string, bool) {
		best := -1
		for _, n := range names {
			if i := frameIndex(frames, n, true); i > best {
				best = i
			}
		}
		if best < 0 {
			return frames, true
		}
		return frames[best:], true
	})
}

// anyFrame reports whether re matches one of the ';'-separated frames.
func anyFrame(frames string, re *regexp.Regexp) bool {
	for frames != "" {
		var f string
		f, frames, _ = strings.Cut(frames, ";")
		if re.MatchString(f) {
			return true
		}
	}
	return false
}

// frameIndex returns the byte offset of the first (or, with last, the
// last) frame exactly equal to name, or -1.
func frameIndex(frames, name string, last bool) int {
	found := -1
	for off := 0; off <= len(frames); {
		end := strings.IndexByte(frames[off:], ';')
		if end < 0 {
			end = len(frames) - off
		}
		if frames[off:off+end] == name {
			if !last {
				return off
			}
			found = off
		}
		off += end + 1
	}
	return found
}

func keep(p *flame.Profile, ok func(frames string) bool) *flame.Profile {
	return rewrite(p, func(frames string) (string, bool) { return frames, ok(frames) })
}

// rewrite maps every stack through f (false drops it) into a new profile.
func rewrite(p *flame.Profile, f func(frames string) (string, bool)) *flame.Profile {
	out := flame.New()
	out.Diff = p.Diff
	for _, s := range p.InOrder() {
		if frames, ok := f(s.Frames); ok {
			out.AddDiff(frames, s.Base, s.Count)
		}
	}
	return out
}

func copyProfile(p *flame.Profile) *flame.Profile {
	return rewrite(p, func(frames string) (string, bool) { return frames, true })
}
