package runs

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/latscope/latscope/internal/htmlpage"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/httpsec"
)

// Register adds the runs' routes: operators start and cancel, viewers
// read.
func Register(rt *httpsec.Router, e *Executor) {
	h := handlers{e: e}
	rt.Handle("POST", "/api/v1/runs", auth.Operator, rt.API(h.start))
	rt.Handle("GET", "/api/v1/runs", auth.Viewer, rt.API(h.list))
	rt.Handle("GET", "/api/v1/runs/options", auth.Viewer, rt.API(h.options))
	rt.Handle("GET", "/api/v1/runs/{id}", auth.Viewer, rt.API(h.get))
	rt.Handle("POST", "/api/v1/runs/{id}/cancel", auth.Operator, rt.API(h.cancel))
	rt.Handle("GET", "/api/v1/runs/{id}/log", auth.Viewer, rt.API(h.log))
	rt.Handle("GET", "/api/v1/runs/{id}/events", auth.Viewer, h.events(rt), httpsec.WriteTimeout(0))
	rt.Handle("GET", "/api/v1/runs/{id}/outputs/{name}", auth.Viewer, h.output)
	rt.Handle("GET", "/api/v1/runs/{id}/flame", auth.Viewer, h.flame)
}

type handlers struct{ e *Executor }

// StartRequest is the body of POST /api/v1/runs.
type StartRequest struct {
	Kind   string          `json:"kind"`
	Params json.RawMessage `json:"params"`
}

func actor(r *http.Request) auth.Actor {
	p, _ := httpsec.PrincipalFrom(r.Context())
	return p.Actor(httpsec.RemoteHost(r))
}

func (h handlers) start(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var req StartRequest
	if err := httpsec.DecodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	run, err := h.e.Start(r.Context(), actor(r), req.Kind, req.Params)
	if err != nil {
		return 0, nil, err
	}
	w.Header().Set("Location", "/api/v1/runs/"+strconv.FormatInt(run.ID, 10))
	return http.StatusCreated, run, nil
}

// listResponse is a page of runs, newest first; NextBefore asks for the
// next page (absent on the last).
type listResponse struct {
	Runs       []Run `json:"runs"`
	NextBefore int64 `json:"next_before,omitempty"`
}

func (h handlers) list(w http.ResponseWriter, r *http.Request) (int, any, error) {
	q := r.URL.Query()
	before, err1 := optionalInt(q.Get("before"))
	limit, err2 := optionalInt(q.Get("limit"))
	if err1 != nil || err2 != nil {
		return 0, nil, fmt.Errorf("%w: before and limit must be non-negative integers", auth.ErrInvalid)
	}
	if limit == 0 || limit > MaxPage {
		limit = 50
	}
	runs, err := h.e.List(r.Context(), before, int(limit))
	if err != nil {
		return 0, nil, err
	}
	resp := listResponse{Runs: runs}
	if len(runs) == int(limit) {
		resp.NextBefore = runs[len(runs)-1].ID
	}
	return http.StatusOK, resp, nil
}

func (h handlers) get(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id, err := pathID(r)
	if err != nil {
		return 0, nil, err
	}
	run, err := h.e.Get(r.Context(), id)
	return http.StatusOK, run, err
}

func (h handlers) cancel(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id, err := pathID(r)
	if err != nil {
		return 0, nil, err
	}
	run, err := h.e.Cancel(r.Context(), actor(r), id)
	return http.StatusOK, run, err
}

// maxLogRead bounds one answer of the log route.
const maxLogRead = 256 << 10

// logResponse is a piece of a run's log: Text from Offset to Next. A
// client follows the log by asking again from Next until Complete.
type logResponse struct {
	State    State  `json:"state"`
	Offset   int64  `json:"offset"`
	Next     int64  `json:"next"`
	Complete bool   `json:"complete"`
	Text     string `json:"text"`
}

func (h handlers) log(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id, err := pathID(r)
	if err != nil {
		return 0, nil, err
	}
	offset, err := optionalInt(r.URL.Query().Get("offset"))
	if err != nil {
		return 0, nil, fmt.Errorf("%w: offset must be a non-negative integer", auth.ErrInvalid)
	}
	run, path, err := h.e.LogPath(r.Context(), id)
	if err != nil {
		return 0, nil, err
	}
	text, err := readFrom(path, offset, maxLogRead)
	if err != nil {
		return 0, nil, err
	}
	next := offset + int64(len(text))
	resp := logResponse{State: run.State, Offset: offset, Next: next, Text: text}
	// Complete only when the run had ended before the read, so nothing
	// written after it can be missed.
	if run.State.Final() {
		fi, err := os.Stat(path)
		resp.Complete = err != nil || next >= fi.Size()
	}
	return http.StatusOK, resp, nil
}

// readFrom reads up to n bytes of a file from offset ("" past its end or
// if it does not exist yet).
func readFrom(path string, offset int64, n int) (string, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("run log: %w", err)
	}
	defer f.Close()
	buf := make([]byte, n)
	got, err := f.ReadAt(buf, offset)
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("run log: %w", err)
	}
	return string(buf[:got]), nil
}

// failPlain answers an error as the API does, for the handlers that are
// not rt.API (they write files).
func failPlain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// output serves one of a run's outputs with its type.
func (h handlers) output(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, msg string) { failPlain(w, status, msg) }
	id, err := pathID(r)
	if err != nil {
		fail(http.StatusBadRequest, err.Error())
		return
	}
	name := r.PathValue("name")
	ct, ok := ContentType(name)
	if !ok {
		fail(http.StatusNotFound, fmt.Sprintf("no output %q: runs write only %s", name, outputNames()))
		return
	}
	path, err := h.e.OutputPath(r.Context(), id, name)
	if err != nil {
		fail(http.StatusNotFound, err.Error())
		return
	}
	f, err := os.Open(path)
	if err != nil {
		fail(http.StatusNotFound, fmt.Sprintf("run %d: output %s is gone", id, name))
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		fail(http.StatusInternalServerError, "internal error")
		return
	}
	w.Header().Set("Content-Type", ct)
	if strings.HasPrefix(ct, "text/html") {
		htmlpage.SandboxHeaders(w.Header())
	}
	w.Header().Set("Content-Disposition", fmt.Sprintf(`inline; filename="run-%d-%s"`, id, name))
	http.ServeContent(w, r, "", fi.ModTime(), f)
}

func pathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("%w: run id %q: want a positive integer from /api/v1/runs", auth.ErrInvalid, r.PathValue("id"))
	}
	return id, nil
}

func optionalInt(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err == nil && n < 0 {
		err = fmt.Errorf("negative")
	}
	return n, err
}
