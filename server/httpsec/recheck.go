package httpsec

import (
	"errors"
	"net/http"

	"github.com/latscope/latscope/server/auth"
)

// Recheck authenticates a long-lived request again (an event stream):
// a token revoked or expired, a session ended, or a role lowered since
// the request began ends it, as it would refuse a new request.
func (rt *Router) Recheck(r *http.Request, min auth.Role) error {
	p, err := rt.authenticate(r)
	if err != nil {
		return err
	}
	if !p.Role.Allows(min) {
		return auth.ErrForbidden
	}
	return nil
}

// StillAllowed is a stream's heartbeat check: false when Recheck refuses
// the credential. A failing users' database is logged but does not end
// the stream, as it says nothing of the credential.
func (rt *Router) StillAllowed(r *http.Request, min auth.Role) bool {
	err := rt.Recheck(r, min)
	if errors.Is(err, auth.ErrUnauthenticated) || errors.Is(err, auth.ErrForbidden) {
		return false
	}
	if err != nil {
		rt.cfg.Logger.Warn("checking a stream's credential", "path", r.URL.Path, "error", err.Error())
	}
	return true
}
