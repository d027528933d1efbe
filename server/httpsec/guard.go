package httpsec

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/latscope/latscope/server/auth"
)

// CSRFHeader carries a session's synchronizer token on state-changing
// requests. A page of another site can make the browser send the cookie,
// but cannot read the token nor set this header without a CORS preflight,
// which this server never grants.
const CSRFHeader = "X-CSRF-Token"

type principalKey struct{}

// PrincipalFrom returns who the request acts as (false on public routes).
func PrincipalFrom(ctx context.Context) (auth.Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(auth.Principal)
	return p, ok
}

// RemoteHost is the client address without its port. X-Forwarded-For is
// not trusted: behind a proxy, every client is the proxy.
func RemoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// guard wraps a route's handler in its deadline, body cap, authentication,
// CSRF check and role check, in that order.
func (rt *Router) guard(ri RouteInfo, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ri.WriteTimeout > 0 {
			// Errors mean the connection cannot take deadlines (a test
			// recorder); the server's own timeouts still apply then.
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(ri.WriteTimeout))
		}
		r.Body = http.MaxBytesReader(w, r.Body, ri.MaxBody)
		if ri.Public {
			h.ServeHTTP(w, r)
			return
		}
		p, err := rt.authenticate(r)
		switch {
		case errors.Is(err, auth.ErrUnauthenticated) && ri.LoginRedirect != "":
			http.Redirect(w, r, ri.LoginRedirect+"?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		case errors.Is(err, auth.ErrUnauthenticated):
			w.Header().Set("WWW-Authenticate", `Bearer realm="latscope"`)
			writeError(w, http.StatusUnauthorized, "authentication required")
			return
		case err != nil:
			rt.internalError(w, r, err)
			return
		}
		if p.Via == "session" && unsafeMethod(r.Method) && !p.CheckCSRF(r.Header.Get(CSRFHeader)) {
			writeError(w, http.StatusForbidden, "missing or wrong "+CSRFHeader+" header")
			return
		}
		if !p.Role.Allows(ri.MinRole) {
			msg := "this needs the " + ri.MinRole.String() + " role"
			if ri.LoginRedirect != "" {
				writePageError(w, http.StatusForbidden, msg)
				return
			}
			writeError(w, http.StatusForbidden, msg)
			return
		}
		setUser(w, p.User)
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

// authenticate reads a bearer token, or else the session cookie. A request
// that presents an Authorization header is judged by it alone.
func (rt *Router) authenticate(r *http.Request) (auth.Principal, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return auth.Principal{}, auth.ErrUnauthenticated
		}
		return rt.store.TokenPrincipal(r.Context(), strings.TrimSpace(token))
	}
	c, err := r.Cookie(rt.cookieName())
	if err != nil {
		return auth.Principal{}, auth.ErrUnauthenticated
	}
	return rt.store.SessionPrincipal(r.Context(), c.Value)
}

// cookieName uses the __Host- prefix under TLS: browsers then accept the
// cookie only if Secure, for path / and without a Domain, so a sibling
// subdomain cannot plant one.
func (rt *Router) cookieName() string {
	if rt.cfg.TLS {
		return "__Host-latscope_session"
	}
	return "latscope_session"
}

func (rt *Router) sessionCookie(value string, expires time.Time) *http.Cookie {
	c := &http.Cookie{
		Name: rt.cookieName(), Value: value, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: rt.cfg.TLS,
	}
	if value == "" {
		c.MaxAge = -1
	} else {
		c.Expires = expires
	}
	return c
}
