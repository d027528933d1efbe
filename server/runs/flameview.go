package runs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/flame/html"
	"github.com/latscope/latscope/flame/load"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/htmlpage"
	"github.com/latscope/latscope/server/auth"
)

// flame serves the flame graph viewer of a flame run, drawn from its
// folded stacks; with ?base=ID, the differential flame graph of that run
// (the base) against this one: widths are this run's samples, colours
// the change from the base, as latscope flame --diff BASE NEW draws it.
func (h handlers) flame(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		failPlain(w, http.StatusBadRequest, err.Error())
		return
	}
	var baseID int64
	if v := r.URL.Query().Get("base"); v != "" {
		if baseID, err = strconv.ParseInt(v, 10, 64); err != nil || baseID <= 0 {
			failPlain(w, http.StatusBadRequest, fmt.Sprintf("base %q: want the id of another flame run", v))
			return
		}
	}
	page, err := h.flamePage(r.Context(), id, baseID)
	switch {
	case errors.Is(err, auth.ErrNotFound):
		failPlain(w, http.StatusNotFound, err.Error())
		return
	case err != nil:
		failPlain(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	htmlpage.SandboxHeaders(w.Header())
	w.Write(page)
}

// flamePage draws run id's stacks, or their differential against run
// base (0: none), as the HTML viewer.
func (h handlers) flamePage(ctx context.Context, id, base int64) ([]byte, error) {
	p, err := h.stacks(ctx, id)
	if err != nil {
		return nil, err
	}
	opts := html.Options{Subtitle: "run " + strconv.FormatInt(id, 10)}
	if base != 0 {
		b, err := h.stacks(ctx, base)
		if err != nil {
			return nil, err
		}
		p = flame.Differential(b, p)
		opts.Subtitle = fmt.Sprintf("run %d against run %d (the base)", id, base)
	}
	var buf bytes.Buffer
	if err := html.Write(&buf, p, opts); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// stacks reads a flame run's folded stacks.
func (h handlers) stacks(ctx context.Context, id int64) (*flame.Profile, error) {
	path, err := h.e.OutputPath(ctx, id, FoldedName)
	if err != nil {
		return nil, err
	}
	diag := input.NewDiagnostics(io.Discard, 1)
	p, err := load.Profile(ctx, load.Input{Files: []string{path}, Format: "folded"}, diag, load.Progress{})
	if err != nil {
		return nil, fmt.Errorf("run %d: %s: %w", id, FoldedName, err)
	}
	return p, nil
}
