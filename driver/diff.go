package driver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/latscope/latscope/analysis/diff"
	"github.com/latscope/latscope/stream"
)

// DiffWindow is a side's time window: intervals starting in [From, To)
// (a zero bound is open).
type DiffWindow struct{ From, To time.Time }

func (w DiffWindow) contains(t time.Time) bool {
	return (w.From.IsZero() || !t.Before(w.From)) && (w.To.IsZero() || t.Before(w.To))
}

func (w DiffWindow) set() bool { return !w.From.IsZero() || !w.To.IsZero() }

// DiffConfig configures `latscope diff`.
type DiffConfig struct {
	// Config's Sources are A and B, or one SOURCE whose two windows are
	// compared.
	Config
	// WindowA and WindowB select each side's windows (--a-from ...).
	WindowA, WindowB DiffWindow
	// EventOnly matches series by event alone (--match event).
	EventOnly bool
	// Format is table, json, csv or html for stdout.
	Format string
	// Output, when set, writes to a file whose extension picks the format.
	Output string
	diff.Options
}

// NewDiffConfig returns the defaults: 95 % intervals, α = 1 % after
// Holm's correction, a table.
func NewDiffConfig() DiffConfig {
	return DiffConfig{Options: diff.DefaultOptions(), Format: diff.FormatTable}
}

// Check says what is wrong with the options (a usage error), or nil.
func (dc DiffConfig) Check() error {
	switch dc.Format {
	case diff.FormatTable, diff.FormatJSON, diff.FormatCSV, diff.FormatHTML:
	default:
		return fmt.Errorf("--format %q: want table, json, csv or html", dc.Format)
	}
	switch dc.Correction {
	case diff.CorrectHolm, diff.CorrectBonferroni, diff.CorrectNone:
	default:
		return fmt.Errorf("--correction %q: want holm, bonferroni or none", dc.Correction)
	}
	if !(dc.Level > 0 && dc.Level < 1) {
		return fmt.Errorf("--level %g: want a fraction between 0 and 1, e.g. 0.95", dc.Level)
	}
	if !(dc.Alpha > 0 && dc.Alpha < 1) {
		return fmt.Errorf("--alpha %g: want a fraction between 0 and 1, e.g. 0.01", dc.Alpha)
	}
	return nil
}

// Diff compares two sources, or two windows of one, series by series.
func Diff(ctx context.Context, dc DiffConfig) error {
	a, b, err := dc.readSides(ctx)
	if err != nil {
		return err
	}
	switch {
	case a.Windows() == 0 && b.Windows() == 0:
		return fmt.Errorf("neither A (%s) nor B (%s) holds any window to compare", a.Name, b.Name)
	case a.Windows() == 0:
		fmt.Fprintf(dc.Stderr, "latscope: A (%s) holds no window: every series is only in B\n", a.Name)
	case b.Windows() == 0:
		fmt.Fprintf(dc.Stderr, "latscope: B (%s) holds no window: every series is only in A\n", b.Name)
	}
	r := diff.Compare(a, b, dc.Options)
	return writeOutput(dc.Output, dc.Stdout, dc.Format, func(w *bufio.Writer, format string) error {
		return diff.Write(w, r, format)
	})
}

// readSides reads A and B: two sources each into its side, or one source
// once, its intervals split between the windows (an interval in both
// windows counts on both sides).
func (dc DiffConfig) readSides(ctx context.Context) (a, b *diff.Side, err error) {
	switch len(dc.Sources) {
	case 1:
		spec := dc.Sources[0]
		a, b = dc.newSide(spec, dc.WindowA), dc.newSide(spec, dc.WindowB)
		c := dc.Config
		c.Read.From, c.Read.To = span(dc.WindowA, dc.WindowB)
		err = c.readInto(ctx, spec, func(iv stream.Interval) {
			if dc.WindowA.contains(iv.Start) {
				a.Add(iv)
			}
			if dc.WindowB.contains(iv.Start) {
				b.Add(iv)
			}
		})
		return a, b, err
	case 2:
		a, b = dc.newSide(dc.Sources[0], dc.WindowA), dc.newSide(dc.Sources[1], dc.WindowB)
		for i, side := range []struct {
			s *diff.Side
			w DiffWindow
		}{{a, dc.WindowA}, {b, dc.WindowB}} {
			c := dc.Config
			if side.w.set() {
				c.Read.From, c.Read.To = side.w.From, side.w.To
			}
			if err := c.readInto(ctx, dc.Sources[i], side.s.Add); err != nil {
				return nil, nil, err
			}
		}
		return a, b, nil
	}
	return nil, nil, errors.New("diff compares two SOURCEs, or one SOURCE in two windows")
}

func (dc DiffConfig) newSide(spec string, w DiffWindow) *diff.Side {
	s := diff.NewSide(spec + w.describe())
	s.EventOnly = dc.EventOnly
	return s
}

// span returns the window that holds both (open when either is open).
func span(a, b DiffWindow) (from, to time.Time) {
	if !a.From.IsZero() && !b.From.IsZero() {
		from = a.From
		if b.From.Before(from) {
			from = b.From
		}
	}
	if !a.To.IsZero() && !b.To.IsZero() {
		to = a.To
		if b.To.After(to) {
			to = b.To
		}
	}
	return from, to
}

func (w DiffWindow) describe() string {
	if !w.set() {
		return ""
	}
	f := func(t time.Time, open string) string {
		if t.IsZero() {
			return open
		}
		return t.Format(time.RFC3339)
	}
	return " [" + f(w.From, "start") + ", " + f(w.To, "end") + ")"
}

// readInto reads one SOURCE to its end, every interval to add.
func (c Config) readInto(ctx context.Context, spec string, add func(stream.Interval)) error {
	c.Sources = []string{spec}
	o, err := c.open(ctx)
	if err != nil {
		return err
	}
	err = c.run(ctx, o, func(iv stream.Interval) error {
		add(iv)
		return nil
	})
	o.finish(c.Stderr)
	if err != nil {
		return fmt.Errorf("reading %s: %w", spec, err)
	}
	return nil
}
