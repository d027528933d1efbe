// Package archive reads latscope's embedded archive (package archive) as a
// SOURCE: `latscope report|heatmap|record|convert ARCHIVE --from T --to T
// [--series PATTERN]`, where ARCHIVE is a data directory or its database.
package archive

import (
	"context"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// Store is the archive as a source.Store.
func Store() source.Store {
	return source.Store{
		Name:        "archive",
		Description: "latscope's embedded archive (latscope record --archive DIR): every series' intervals, gaps kept, selected with --from, --until and --series",
		Detection:   "a directory holding " + archive.DBName + ", or a SQLite database file",
		Example:     "latscope heatmap /var/lib/latscope --from -1h -o last-hour.html",
		Match: func(path string) bool {
			_, ok := archive.DBPath(path)
			return ok
		},
		Open: open,
	}
}

// archiveSource reads one query of an archive.
type archiveSource struct {
	path string
	opts source.Options
}

func open(path string, opts source.Options, _ *input.Diagnostics) (source.Source, error) {
	if opts.Series != "" {
		if err := archive.CheckPattern(opts.Series); err != nil {
			return nil, err
		}
	}
	return &archiveSource{path: path, opts: opts}, nil
}

func (s *archiveSource) Name() string { return s.path }

// Run opens the archive read-only, so that a writer may keep appending
// while it is read, and emits the selected intervals.
func (s *archiveSource) Run(ctx context.Context, emit func(stream.Interval) error) error {
	a, err := archive.Open(s.path, archive.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer a.Close()
	q := archive.Query{From: s.opts.From, To: s.opts.To, Series: s.opts.Series}
	return a.Read(ctx, q, func(iv stream.Interval) error {
		return emit(s.opts.KeepEvents(iv))
	})
}
