package terminal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/heatmap"
)

// Options configure Run.
type Options struct {
	// Out receives the frames.
	Out io.Writer
	// Keys is raw-mode terminal input (see OpenTTY); nil means no keys.
	Keys io.Reader
	// Plain draws without escape codes.
	Plain bool
	// Once consumes the whole feed without drawing, then prints the final
	// frame of every series.
	Once  bool
	Scale heatmap.Scale
	// RowScale asks for 2^RowScale rows per power of two where the series'
	// durations are exact (stream.Grid.RowScale).
	RowScale int
	Show     Show
	// Replay says the feed is a finished recording sorted by time: it is
	// paced by the data instead of drawn as it arrives.
	Replay bool
	// Speed replays at Speed × recorded time; 0 draws one new column per
	// frame.
	Speed float64
	// ColumnWidth is the grid's column width; 0 takes the first interval's
	// duration.
	ColumnWidth time.Duration
	// Size returns the terminal size; nil means 120×40.
	Size func() (w, h int)
	// FullScreen draws on the alternate screen with the cursor hidden and
	// prints the last frame on the normal screen on exit.
	FullScreen bool
	// Status, when set, is called for every frame; its text is shown in
	// the title line (a live source's progress).
	Status func() string
	// StayOpen keeps the last frame on screen after the feed ends, still
	// answering keys (n/p, f/i/b, l), until q: an interactive replay is
	// browsed, not just watched.
	StayOpen bool
}

// Frame pacing and the default screen.
const (
	frameInterval               = 100 * time.Millisecond // at most 10 frames/s
	defaultWidth, defaultHeight = 120, 40
)

// Terminal control sequences.
const (
	escEnterFullScreen = "\x1b[?1049h\x1b[?25l" // alternate screen, hide cursor
	escLeaveFullScreen = "\x1b[0m\x1b[?25h\x1b[?1049l"
	escClearHome       = "\x1b[0m\x1b[H\x1b[2J"
)

// Run draws the intervals arriving on feed until the feed is closed (after
// drawing the final frame), the user presses q or Ctrl-C, or ctx is done
// (then it returns ctx's error). Live feeds are drawn as data arrives, at
// most 10 frames per second; replays are paced by the data and read from
// feed only when their time comes, so huge recordings cost no memory ahead
// of the display.
func Run(ctx context.Context, feed <-chan stream.Interval, o Options) error {
	if o.Out == nil {
		return errors.New("terminal view: no output")
	}
	v := newViewer(o)
	if o.Once {
		return v.once(ctx, feed)
	}
	done := make(chan struct{})
	defer close(done)
	keys := startKeys(o.Keys, done)
	if o.FullScreen {
		v.write([]byte(escEnterFullScreen))
	}
	var err error
	switch {
	case !o.Replay:
		err = v.live(ctx, feed, keys)
	case o.Speed > 0:
		err = v.replayTimed(ctx, feed, keys)
	default:
		err = v.replayColumns(ctx, feed, keys)
	}
	if o.FullScreen {
		v.leaveFullScreen()
	}
	if v.err != nil {
		return v.err
	}
	return err
}

// viewer is Run's state.
type viewer struct {
	o     Options
	grid  *stream.Grid
	means *stream.MeanTracker
	show  Show
	scale heatmap.Scale

	paused   bool
	pausedAt time.Time
	// chosen is set once the user picks a series; until then the series
	// that waited most is shown.
	chosen bool
	key    stream.Key
	// end, when hasEnd, is the last column shown: the replay's current
	// column, or the newest column when a live view was paused.
	end    int
	hasEnd bool
	// pending is an interval read ahead of its time during replays.
	pending *stream.Interval
	// replayTimed's clock: firstEnd was due at replayStart.
	replayStart time.Time
	firstEnd    time.Time
	timed       bool

	escape   escapeState
	width    int
	height   int
	lastDraw time.Time
	drawn    int
	stale    bool // data arrived since the last frame
	// redrawFlag: a key changed the view while a replay waited for data.
	redrawFlag bool
	screen     bytes.Buffer
	out        bytes.Buffer
	newline    string
	err        error
}

func newViewer(o Options) *viewer {
	v := &viewer{o: o, grid: newGrid(o.ColumnWidth, o.RowScale), means: newMeanTracker(), show: o.Show, scale: o.Scale, newline: "\n"}
	// A raw-mode terminal does not turn \n into \r\n.
	if _, raw := o.Keys.(*TTY); raw || o.FullScreen {
		v.newline = "\r\n"
	}
	return v
}

// once consumes the feed and prints the final frame of every series.
func (v *viewer) once(ctx context.Context, feed <-chan stream.Interval) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case iv, ok := <-feed:
			if !ok {
				return v.printAll()
			}
			v.add(iv)
		}
	}
}

func (v *viewer) printAll() error {
	w, h := v.size()
	cols, rows := Layout(w, h, v.show)
	series := v.grid.Series()
	for i, s := range series {
		f := heatmap.Build(v.grid, s, frameOptions(cols, rows, v.scale))
		v.screen.Reset()
		Render(&v.screen, f, RenderOptions{Width: w, Height: h, Plain: v.o.Plain, Show: v.show, SeriesIndex: i + 1, SeriesCount: len(series)})
		v.out.Reset()
		if i > 0 {
			v.out.WriteString(v.newline)
		}
		v.appendLines(v.screen.Bytes(), true)
		v.write(v.out.Bytes())
	}
	if means := meanLines(v.means); len(means) > 0 {
		v.screen.Reset()
		RenderMeans(&v.screen, means, w, len(means)+1, v.o.Plain)
		v.out.Reset()
		if len(series) > 0 {
			v.out.WriteString(v.newline)
		}
		v.appendLines(v.screen.Bytes(), true)
		v.write(v.out.Bytes())
	}
	return v.err
}

// add places an interval on the grid and its mean series in the tracker.
func (v *viewer) add(iv stream.Interval) {
	v.grid.Add(iv)
	v.means.Add(iv)
}

func newGrid(width time.Duration, rowScale int) *stream.Grid {
	g := stream.NewGrid(width)
	g.RowScale = rowScale
	return g
}

func frameOptions(cols, rows int, scale heatmap.Scale) heatmap.Options {
	return heatmap.Options{Columns: cols, MaxRows: rows, MinRows: min(rows, 10), Scale: scale}
}

// live draws as data arrives, coalescing to at most 10 frames/s.
func (v *viewer) live(ctx context.Context, feed <-chan stream.Interval, keys <-chan byte) error {
	ticker := time.NewTicker(frameInterval)
	defer ticker.Stop()
	wake := time.NewTimer(time.Hour)
	defer wake.Stop()
	waiting := false // wake is armed for a frame
	dirty := v.o.FullScreen
	for {
		if dirty && !waiting {
			if wait := v.untilNextFrame(); wait > 0 {
				wake.Reset(wait)
				waiting = true
			} else {
				v.draw()
				dirty = false
			}
		}
		if v.err != nil {
			return v.err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case iv, ok := <-feed:
			if !ok {
				return v.endOfFeed(ctx, keys)
			}
			v.add(iv)
			v.stale = true
			dirty = dirty || !v.paused
		case b := <-keys:
			switch v.handleKey(b) {
			case keyQuit:
				return nil
			case keyRedraw:
				dirty = true
			}
		case <-ticker.C:
			dirty = dirty || v.resized()
		case <-wake.C:
			waiting = false
		}
	}
}

// endOfFeed draws the final frame and, with StayOpen, keeps answering keys until
// the user quits.
func (v *viewer) endOfFeed(ctx context.Context, keys <-chan byte) error {
	if err := v.finish(ctx); err != nil || !v.o.StayOpen {
		return err
	}
	ticker := time.NewTicker(frameInterval)
	defer ticker.Stop()
	for {
		redraw, ticked, err := v.keyOrTick(ctx, keys, ticker.C)
		if err != nil {
			return unlessQuit(err)
		}
		if redraw || ticked && v.resized() {
			v.draw()
		}
		if v.err != nil {
			return v.err
		}
	}
}

// keyOrTick waits for a key, which it applies, or a tick. redraw says the
// key changed the view; the error is errQuit when the user quits.
func (v *viewer) keyOrTick(ctx context.Context, keys <-chan byte, tick <-chan time.Time) (redraw, ticked bool, err error) {
	select {
	case <-ctx.Done():
		return false, false, ctx.Err()
	case b := <-keys:
		switch v.handleKey(b) {
		case keyQuit:
			return false, false, errQuit
		case keyRedraw:
			return true, false, nil
		}
		return false, false, nil
	case <-tick:
		return false, true, nil
	}
}

// unlessQuit returns err, or nil when the user quit.
func unlessQuit(err error) error {
	if errors.Is(err, errQuit) {
		return nil
	}
	return err
}

// finish draws the final frame with all the data when the feed ends.
func (v *viewer) finish(ctx context.Context) error {
	v.paused, v.hasEnd = false, false
	if !v.stale && v.drawn > 0 {
		return v.err
	}
	if len(v.grid.Series()) == 0 && !v.o.FullScreen {
		return v.err
	}
	if wait := v.untilNextFrame(); wait > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
	v.draw()
	return v.err
}

// replayColumns replays a recording one new column per frame.
func (v *viewer) replayColumns(ctx context.Context, feed <-chan stream.Interval, keys <-chan byte) error {
	return v.replay(ctx, feed, keys, v.advanceColumn)
}

// replayTimed replays a recording at Speed × the recorded time.
func (v *viewer) replayTimed(ctx context.Context, feed <-chan stream.Interval, keys <-chan byte) error {
	return v.replay(ctx, feed, keys, v.advanceTime)
}

// advanceFunc consumes the intervals due for the next frame; it reports
// whether it added any and whether the feed is closed.
type advanceFunc func(ctx context.Context, feed <-chan stream.Interval, keys <-chan byte) (added, closed bool, err error)

// errQuit says the user quit while a loop waited for a key or data.
var errQuit = errors.New("quit")

func (v *viewer) replay(ctx context.Context, feed <-chan stream.Interval, keys <-chan byte, advance advanceFunc) error {
	ticker := time.NewTicker(frameInterval)
	defer ticker.Stop()
	if v.o.FullScreen {
		v.draw() // "waiting for data" while the recording is read
	}
	redraw := false
	for {
		changed, ticked, err := v.keyOrTick(ctx, keys, ticker.C)
		if err != nil {
			return unlessQuit(err)
		}
		if redraw = redraw || changed; !ticked {
			continue
		}
		redraw = redraw || v.resized()
		if !v.paused {
			added, closed, err := advance(ctx, feed, keys)
			switch {
			case err != nil:
				return unlessQuit(err)
			case closed:
				return v.endOfFeed(ctx, keys)
			}
			redraw = redraw || added
		}
		if redraw || v.redrawRequested() {
			v.draw()
			redraw = false
		}
		if v.err != nil {
			return v.err
		}
	}
}

// advanceColumn adds the intervals that start in the next column holding
// data, reading one interval ahead to find where the column ends.
func (v *viewer) advanceColumn(ctx context.Context, feed <-chan stream.Interval, keys <-chan byte) (added, closed bool, err error) {
	target, haveTarget := 0, false
	for {
		iv, ok, err := v.next(ctx, feed, keys)
		if err != nil {
			return added, false, err
		}
		if !ok {
			return added, true, nil
		}
		col, placed := v.columnOf(iv.Start)
		if haveTarget && placed && col > target {
			v.pending = &iv
			break
		}
		v.add(iv)
		added, v.stale = true, true
		if col, placed = v.columnOf(iv.Start); placed && !haveTarget {
			target, haveTarget = col, true
		}
	}
	if !v.hasEnd || target > v.end {
		v.end = target
	}
	v.hasEnd = true
	return added, false, nil
}

// advanceTime adds the intervals whose recorded end, scaled by Speed, has
// come.
func (v *viewer) advanceTime(ctx context.Context, feed <-chan stream.Interval, keys <-chan byte) (added, closed bool, err error) {
	now := time.Now()
	for {
		iv, ok, err := v.next(ctx, feed, keys)
		if err != nil {
			return added, false, err
		}
		if !ok {
			return added, true, nil
		}
		if !v.timed {
			v.timed, v.firstEnd, v.replayStart = true, iv.End(), now
		}
		recorded := iv.End().Sub(v.firstEnd)
		// Capped so that absurd speeds cannot overflow the duration.
		wait := math.Min(float64(recorded)/v.o.Speed, math.MaxInt64/2)
		due := v.replayStart.Add(time.Duration(wait))
		if due.After(now) {
			v.pending = &iv
			return added, false, nil
		}
		v.add(iv)
		added, v.stale = true, true
	}
}

// next returns the interval read ahead, else waits for the feed while
// handling keys. ok is false when the feed is closed.
func (v *viewer) next(ctx context.Context, feed <-chan stream.Interval, keys <-chan byte) (iv stream.Interval, ok bool, err error) {
	if v.pending != nil {
		iv, v.pending = *v.pending, nil
		return iv, true, nil
	}
	for {
		select {
		case <-ctx.Done():
			return iv, false, ctx.Err()
		case iv, ok = <-feed:
			return iv, ok, nil
		case b := <-keys:
			switch v.handleKey(b) {
			case keyQuit:
				return iv, false, errQuit
			case keyRedraw:
				v.wantRedraw()
			}
		}
	}
}

// columnOf returns the grid column holding t; placed is false before the
// grid has an origin.
func (v *viewer) columnOf(t time.Time) (col int, placed bool) {
	if _, _, ok := v.grid.Columns(); !ok || v.grid.Width <= 0 {
		return 0, false
	}
	d := t.Sub(v.grid.ColumnStart(0))
	q := d / v.grid.Width
	if d%v.grid.Width != 0 && d < 0 {
		q--
	}
	return int(q), true
}

// redraw requests from keys handled while a replay waited for data.
func (v *viewer) wantRedraw() { v.redrawFlag = true }

func (v *viewer) redrawRequested() bool {
	r := v.redrawFlag
	v.redrawFlag = false
	return r
}

// untilNextFrame is how long the frame limit still holds the next frame.
func (v *viewer) untilNextFrame() time.Duration {
	if v.drawn == 0 {
		return 0
	}
	return time.Until(v.lastDraw.Add(frameInterval))
}

func (v *viewer) size() (w, h int) {
	if v.o.Size == nil {
		return defaultWidth, defaultHeight
	}
	w, h = v.o.Size()
	if w <= 0 || h <= 0 {
		return defaultWidth, defaultHeight
	}
	return w, h
}

// resized reports whether the terminal size changed since the last frame.
func (v *viewer) resized() bool {
	if v.o.Size == nil || v.drawn == 0 {
		return false
	}
	w, h := v.size()
	return w != v.width || h != v.height
}

// draw renders the current series and writes the frame.
func (v *viewer) draw() {
	v.render()
	v.out.Reset()
	if v.o.FullScreen {
		v.out.WriteString(escClearHome)
		v.appendLines(v.screen.Bytes(), false) // no final newline: it would scroll
	} else {
		if v.drawn > 0 {
			v.out.WriteString(v.newline)
		}
		v.appendLines(v.screen.Bytes(), true)
	}
	v.write(v.out.Bytes())
	v.drawn++
	v.lastDraw = time.Now()
	v.stale = false
}

// render draws the current screen into v.screen.
func (v *viewer) render() {
	v.width, v.height = v.size()
	// Mean series take a line each under the map, at most a third of the
	// screen.
	means := meanLines(v.means)
	reserved := MeanLinesNeeded(len(means), v.height/3)
	defer func() { RenderMeans(&v.screen, means, v.width, reserved, v.o.Plain) }()
	cols, rows := Layout(v.width, v.height-reserved, v.show)
	ro := RenderOptions{Width: v.width, Height: v.height - reserved, Plain: v.o.Plain, Show: v.show, Paused: v.paused, Help: v.o.Keys != nil}
	if v.o.Status != nil {
		ro.Status = v.o.Status()
	}
	v.screen.Reset()
	series := v.grid.Series()
	if len(series) == 0 && len(means) > 0 {
		// Mean series alone (host:): a title line, a line saying there is
		// no map, and the means on the rest of the screen. The title needs
		// a screen's height to be laid out; it writes two lines.
		ro.Height = v.height
		reserved = MeanLinesNeeded(len(means), v.height-2)
		Render(&v.screen, heatmap.Frame{Label: "mean series only: no latency map"}, ro)
		return
	}
	if len(series) == 0 {
		Render(&v.screen, heatmap.Frame{Label: "waiting for data"}, ro)
		return
	}
	i := v.current(series)
	opt := frameOptions(cols, rows, v.scale)
	if v.hasEnd {
		opt.End, opt.HasEnd = v.end, true
	}
	f := heatmap.Build(v.grid, series[i], opt)
	ro.SeriesIndex, ro.SeriesCount = i+1, len(series)
	Render(&v.screen, f, ro)
}

// appendLines copies rendered lines to v.out with the terminal's newline.
func (v *viewer) appendLines(screen []byte, finalNewline bool) {
	screen = bytes.TrimSuffix(screen, []byte("\n"))
	for len(screen) > 0 {
		i := bytes.IndexByte(screen, '\n')
		if i < 0 {
			v.out.Write(screen)
			break
		}
		v.out.Write(screen[:i])
		v.out.WriteString(v.newline)
		screen = screen[i+1:]
	}
	if finalNewline {
		v.out.WriteString(v.newline)
	}
}

// leaveFullScreen restores the terminal and prints the last frame on the
// normal screen so it stays in the scrollback.
func (v *viewer) leaveFullScreen() {
	v.out.Reset()
	v.out.WriteString(escLeaveFullScreen)
	if v.drawn > 0 && len(v.grid.Series()) > 0 {
		v.appendLines(v.screen.Bytes(), true)
	}
	v.write(v.out.Bytes())
}

func (v *viewer) write(b []byte) {
	if v.err != nil || len(b) == 0 {
		return
	}
	if _, err := v.o.Out.Write(b); err != nil {
		v.err = fmt.Errorf("terminal view: writing a frame: %w", err)
	}
}

// current returns the index of the series to show: the user's choice while
// it exists, else the first (the series that waited most).
func (v *viewer) current(series []*stream.GridSeries) int {
	if v.chosen {
		for i, s := range series {
			if s.Key == v.key {
				return i
			}
		}
	}
	return 0
}

func (v *viewer) switchSeries(step int) {
	series := v.grid.Series()
	if len(series) == 0 {
		return
	}
	i := (v.current(series) + step + len(series)) % len(series)
	v.key, v.chosen = series[i].Key, true
}
