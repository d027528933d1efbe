package auditwatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/latscope/latscope/audit/correlate"
	"github.com/latscope/latscope/internal/htmlpage"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/httpsec"
)

// Render draws a watch's timeline page (view/audittimeline, given by the
// server so that this package stays free of views).
type Render func(w io.Writer, title string, chains []correlate.Chain) error

// Register adds the audit watches' routes, all for viewers: the list,
// a watch's chains (JSON, or JSON lines for a log pipeline) and its
// timeline page. A nil set answers an empty list and 404s.
func Register(rt *httpsec.Router, s *Set, render Render) {
	h := handlers{s: s, render: render}
	rt.Handle("GET", "/api/v1/audit-watches", auth.Viewer, rt.API(h.list))
	rt.Handle("GET", "/api/v1/audit-watches/{name}/chains", auth.Viewer, h.chains(rt))
	rt.Handle("GET", "/api/v1/audit-watches/{name}/timeline", auth.Viewer, h.timeline(rt))
}

type handlers struct {
	s      *Set
	render Render
}

type listResponse struct {
	Watches []Status `json:"watches"`
}

func (h handlers) list(w http.ResponseWriter, r *http.Request) (int, any, error) {
	resp := listResponse{Watches: []Status{}}
	if h.s != nil {
		resp.Watches = h.s.Statuses()
	}
	return http.StatusOK, resp, nil
}

// ChainsResponse is GET /api/v1/audit-watches/{name}/chains's answer.
type ChainsResponse struct {
	Watch  Status            `json:"watch"`
	Chains []correlate.Chain `json:"chains"`
}

// selection reads a request's watch and its since/until window.
func (h handlers) selection(r *http.Request) ([]correlate.Chain, Status, error) {
	if h.s == nil {
		return nil, Status{}, fmt.Errorf("%w: no audit watches are configured", auth.ErrNotFound)
	}
	q := r.URL.Query()
	var since, until time.Time
	for _, p := range []struct {
		name string
		t    *time.Time
	}{{"since", &since}, {"until", &until}} {
		if v := q.Get(p.name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return nil, Status{}, fmt.Errorf("%w: %s %q: want RFC 3339 (2026-11-20T10:00:00Z)", auth.ErrInvalid, p.name, v)
			}
			*p.t = t
		}
	}
	chains, st, err := h.s.Chains(r.PathValue("name"), since, until)
	if err != nil {
		return nil, Status{}, fmt.Errorf("%w: %v", auth.ErrNotFound, err)
	}
	return chains, st, nil
}

func (h handlers) chains(rt *httpsec.Router) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		chains, st, err := h.selection(r)
		if err != nil {
			rt.Fail(w, r, err)
			return
		}
		var b bytes.Buffer
		switch format := r.URL.Query().Get("format"); format {
		case "", "json":
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			err = json.NewEncoder(&b).Encode(ChainsResponse{Watch: st, Chains: chains})
		case "jsonl":
			w.Header().Set("Content-Type", "application/x-ndjson")
			enc := json.NewEncoder(&b)
			for _, c := range chains {
				if err = enc.Encode(c); err != nil {
					break
				}
			}
		default:
			err = fmt.Errorf("%w: format %q: want json or jsonl", auth.ErrInvalid, format)
		}
		if err != nil {
			w.Header().Del("Content-Type")
			rt.Fail(w, r, err)
			return
		}
		w.Write(b.Bytes())
	}
}

func (h handlers) timeline(rt *httpsec.Router) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		chains, st, err := h.selection(r)
		var b bytes.Buffer
		if err == nil {
			err = h.render(&b, "Audit watch "+st.Name, chains)
		}
		if err != nil {
			rt.Fail(w, r, err)
			return
		}
		htmlpage.SandboxHeaders(w.Header())
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(b.Bytes())
	}
}
