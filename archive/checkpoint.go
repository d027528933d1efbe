package archive

import (
	"context"
	"database/sql"
	"time"
)

// checkpointer copies the WAL into the database from its own connection,
// at most once per checkpointEvery while writes come, so that no write
// pays for it. SQLite's automatic checkpoint would run inside the commit
// that crosses 1 000 pages of WAL: with 200 series per tick, every fourth
// tick took some 30 ms more, and the ticks packing a finished hour 50 ms
// more (docs/benchmarks.md). A passive checkpoint runs beside the writer:
// it copies what is committed and never blocks a write.
//
// A passive checkpoint beside the writer never lets the WAL be rewound
// while writes keep coming: SQLite starts the WAL over only when a write
// finds every frame copied, and frames written during the copy are not.
// Writes that never pause (a busy server; the load benchmark's simulated
// day grew the WAL by 1 GB an hour, and RSS with its index) would grow it
// without end. So once the WAL holds restartFrames, the checkpointer
// copies the rest on the writer's own connection, between two writes: no
// frame comes meanwhile, the next write starts the WAL over, and
// journal_size_limit shrinks the file. That copy is short (the passive one
// just copied nearly everything), and it never waits for readers (a
// blocking RESTART checkpoint would, holding writes up to the busy
// timeout).
type checkpointer struct {
	db            *sql.DB
	writer        *sql.DB // the archive's writer connection
	restartFrames int
	kick          chan struct{}
	quit          chan struct{}
	done          chan struct{}
}

// checkpointEvery is the most often the checkpointer runs.
const checkpointEvery = time.Second

// walRestartFrames is the WAL size (frames of a page, 4 KiB) past which
// the checkpointer makes it start over: 64 MiB, also the size the file
// is cut back to (journal_size_limit).
const walRestartFrames = 16384

func startCheckpointer(file string, writer *sql.DB) (*checkpointer, error) {
	db, err := sql.Open("sqlite", dsn(file, writerConn))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	c := &checkpointer{db: db, writer: writer, restartFrames: walRestartFrames, kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c, nil
}

// wrote tells the checkpointer that a transaction committed.
func (c *checkpointer) wrote() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) run() {
	defer close(c.done)
	pause := time.NewTimer(0)
	defer pause.Stop()
	for {
		select {
		case <-c.quit:
			return
		case <-c.kick:
		}
		c.checkpoint()
		pause.Reset(checkpointEvery)
		select {
		case <-c.quit:
			return
		case <-pause.C:
		}
	}
}

// checkpoint copies the WAL beside the writer, and once it holds
// restartFrames, on the writer's connection so that it can start over.
// An error (a full disk) leaves the WAL as it is: the next checkpoint, or
// Close's, copies it once it can.
func (c *checkpointer) checkpoint() {
	ctx := context.Background()
	var busy, frames, copied int
	if err := c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
		return
	}
	if frames >= c.restartFrames {
		_, _ = c.writer.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
	}
}

// stop ends the checkpointer without waiting out its pause; Close
// checkpoints what is left.
func (c *checkpointer) stop() {
	close(c.quit)
	<-c.done
	c.db.Close()
}
