package httpsec

import (
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
