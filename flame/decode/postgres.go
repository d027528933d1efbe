package decode

import (
	"strings"

	"github.com/latscope/latscope/flame"
)

// slot is a node function whose node type is told by its callees.
type slot struct {
	def      string
	evidence map[string]string
}

// collectPostgresVotes names, from the whole profile, the slot frames
// (ExecScan, ExecAgg, ...) whose own sample shows no evidence. A frame is
// identified by its stack prefix, so a sample spent in ExecScan's own code
// (evaluating a filter) gets the name that heap_getnextslot revealed in
// another sample of the same scan. Unknown frames ("[postgres]") are not
// voted on: in a stripped build every static function prints the same, so
// prefixes of different queries collide (an Agg of one query and a Sort of
// another sit at the same "[postgres];[postgres]" prefix).
func (d *decoder) collectPostgresVotes(p *flame.Profile) {
	raw := make([]rawFrame, 0, 64)
	for _, s := range p.InOrder() {
		raw = d.split(s.Frames, raw[:0])
		for i, f := range raw {
			if !f.db {
				continue
			}
			sl, ok := postgresSlots[f.name]
			if !ok {
				continue
			}
			node := slotEvidence(sl, raw[i+1:])
			if node == "" {
				continue
			}
			key := s.Frames[:f.end]
			m := d.votes[key]
			if m == nil {
				m = map[string]int64{}
				d.votes[key] = m
			}
			m[node] += s.Count + s.Base
		}
	}
}

// slotEvidence looks below a slot frame, up to the next node, for a
// callee that tells the node type.
func slotEvidence(sl slot, below []rawFrame) string {
	for _, f := range below {
		if !f.db {
			continue // libc and kernel frames tell nothing
		}
		if isNodeBoundary(f.name) {
			return ""
		}
		if node, ok := sl.evidence[f.name]; ok {
			return node
		}
	}
	return ""
}

// callerEvidence names an unknown frame from its direct callee (dispatch
// frames skipped).
func callerEvidence(below []rawFrame) string {
	for _, f := range below {
		if !f.db {
			return ""
		}
		if postgresPassThrough[f.name] {
			continue
		}
		return postgresCallerEvidence[f.name]
	}
	return ""
}

func isNodeBoundary(name string) bool {
	_, node := postgresNodes[name]
	_, sl := postgresSlots[name]
	return node || sl || postgresPassThrough[name]
}

// isUnknownFrame reports a frame without a symbol, as collapsers print it:
// "[postgres]" (the module) or "[unknown]".
func isUnknownFrame(name string) bool {
	return len(name) > 2 && name[0] == '[' && name[len(name)-1] == ']' && !strings.Contains(name, ";")
}

// postgresContext returns the node of a slot frame (its own evidence, else
// the votes, else its default) or of an unknown frame (its direct callee).
func (d *decoder) postgresContext(frames string, raw []rawFrame, i int) (string, bool) {
	name := raw[i].name
	if isUnknownFrame(name) {
		node := callerEvidence(raw[i+1:])
		return node, node != ""
	}
	sl, isSlot := postgresSlots[name]
	if !isSlot {
		return "", false
	}
	if node := slotEvidence(sl, raw[i+1:]); node != "" {
		return node, true
	}
	if m := d.votes[frames[:raw[i].end]]; len(m) > 0 {
		return bestVote(m), true
	}
	return sl.def, true
}

func bestVote(m map[string]int64) string {
	best, bestN := "", int64(-1)
	for node, n := range m {
		if n > bestN || n == bestN && node < best {
			best, bestN = node, n
		}
	}
	return best
}
