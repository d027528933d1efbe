package oracle10046

import (
	"time"

	"github.com/latscope/latscope/stream"
)

// blockReadEvents are the waits whose parameters address the blocks read,
// p1 = file, p2 = first block, p3 = block count, in every version: the
// buffered single- and multi-block reads ("file#", "block#", "blocks") and
// direct path reads ("file number", "first dba", "block cnt"). Waits
// that read no block of this session ('read by other session', gc
// transfers) or give no address ('db file parallel read', Exadata cell
// reads) are not block reads of the working set.
var blockReadEvents = map[string]bool{
	"db file sequential read": true,
	"db file scattered read":  true,
	"direct path read":        true,
	"direct path read temp":   true,
}

// maxBlocksPerRead bounds p3: no read is larger (a 1 GiB read of 512-byte
// blocks is 2^21); more is not an address.
const maxBlocksPerRead = 1 << 21

// BlockRead returns the block read an Oracle wait describes, from its
// event name and its first three parameters (a trace's WAIT line, an
// X$KSLWH or V$SESSION_WAIT_HISTORY row); ok is false when the event reads
// no addressed block or the parameters are not an address.
func BlockRead(event string, p1, p2, p3 int64) (stream.BlockRead, bool) {
	if !blockReadEvents[event] || p1 < 0 || p1 > 1<<32-1 || p2 < 0 || p3 < 1 || p3 > maxBlocksPerRead {
		return stream.BlockRead{}, false
	}
	return stream.BlockRead{File: uint32(p1), Block: uint64(p2), Blocks: uint32(p3), Event: event}, true
}

// firstParams reads a WAIT line's first three parameter values: the
// numbers after the first three '=' of " file#=1 block#=7725 blocks=1
// obj#=..." (names may hold spaces: "file number=201 first dba=...").
func firstParams(params []byte) (p [3]int64, ok bool) {
	i := 0
	for k := range p {
		for i < len(params) && params[i] != '=' {
			i++
		}
		if i == len(params) {
			return p, false
		}
		v, n, good := parseUint(params[i+1:])
		if !good {
			return p, false
		}
		p[k] = v
		i += 1 + n
	}
	return p, true
}

// blockRead hands a block-read wait's address to the BlockReads handler;
// params is the line after ela's value, s the wait's series.
func (p *parser) blockRead(s int32, params []byte, ela, tim int64) {
	if int(s) >= len(p.blockEvent) {
		p.blockEvent = append(p.blockEvent, make([]bool, int(s)+1-len(p.blockEvent))...)
		for i := range p.blockEvent {
			p.blockEvent[i] = blockReadEvents[p.keys[i].Event]
		}
	}
	if !p.blockEvent[s] {
		return
	}
	v, ok := firstParams(params)
	if !ok {
		p.malformed("block read without file, block and count")
		return
	}
	r, ok := BlockRead(p.keys[s].Event, v[0], v[1], v[2])
	if !ok {
		p.malformed("block read with an impossible address")
		return
	}
	r.Micros = ela
	if p.clock != clockHolding && !p.bin.relative {
		if wall, ok := p.bin.toWall(tim); ok {
			r.Time = time.UnixMicro(wall)
		}
	}
	p.opts.BlockReads(r)
}
