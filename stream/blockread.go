package stream

import "time"

// BlockRead is one read of database blocks with its address, as a wait
// names it (a 10046 WAIT line's file#/block#/blocks, an X$KSLWH or
// V$SESSION_WAIT_HISTORY row's p1/p2/p3): what the block-read working set
// counts. Addresses are not histograms, so they travel beside the stream
// of intervals, to a BlockReads handler, only when one is asked for.
type BlockRead struct {
	// File is the file number (file#, or a temp file's "file number").
	File uint32
	// Block is the first block read; Blocks how many (1 for a
	// single-block read), at least 1.
	Block  uint64
	Blocks uint32
	// Micros is the read's elapsed time (the wait's ela), µs.
	Micros int64
	// Event names the wait ("db file sequential read").
	Event string
	// Time is when the read ended, if the source knows it (zero if not).
	Time time.Time
}

// BlockReads receives block reads in the order a source reads them. A
// source calls it from one goroutine; several sources may share one
// handler only if it is safe for concurrent use.
type BlockReads func(BlockRead)
