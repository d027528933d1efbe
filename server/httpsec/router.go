// Package httpsec is the HTTP side of latscope serve's security core: a
// router on which every route declares the least role it needs, so that a
// route cannot be added without authentication; the auth API; the listen
// policy and TLS defaults; and log redaction.
//
// It is a package of its own, apart from the server that will run jobs and
// read the archive, so that the rules every request passes through import
// nothing but server/auth and can be tested alone.
package httpsec

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/latscope/latscope/server/auth"
)

// PublicRoutes are the only routes reachable without a credential: logging
// in (the API and the browser's login page, a static form that holds no
// data) and the health check. Public refuses any other.
func PublicRoutes() []string { return []string{"POST /api/v1/login", "GET /login", "GET /healthz"} }

// Defaults for routes that do not say otherwise.
const (
	DefaultMaxBody      = 64 << 10
	DefaultWriteTimeout = 30 * time.Second
)

// Config is what the router needs to know about how it is served.
type Config struct {
	TLS    bool // cookies get Secure and the __Host- prefix; responses get HSTS
	Logger *slog.Logger
}

// RouteInfo describes a registered route; tests enumerate them.
type RouteInfo struct {
	Method, Path string
	MinRole      auth.Role // NoRole for the public routes
	Public       bool
	MaxBody      int64
	WriteTimeout time.Duration // 0: none (streams such as Server-Sent Events)
	// LoginRedirect, on a browser page, sends a request without a valid
	// credential to this login page (with the page as ?next=) instead of
	// answering 401.
	LoginRedirect string
}

// Pattern is the route as http.ServeMux reads it.
func (ri RouteInfo) Pattern() string { return ri.Method + " " + ri.Path }

// StateChanging reports whether the method changes state (and so needs a
// CSRF token under a session, and more than a viewer's role).
func (ri RouteInfo) StateChanging() bool { return unsafeMethod(ri.Method) }

func unsafeMethod(m string) bool {
	return m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions
}

// RouteOption changes one route's limits.
type RouteOption func(*RouteInfo)

// MaxBody caps the request body of a route.
func MaxBody(n int64) RouteOption { return func(ri *RouteInfo) { ri.MaxBody = n } }

// RedirectToLogin makes a route a browser page: a request without a valid
// credential is sent to the login page at path, which returns to it.
func RedirectToLogin(path string) RouteOption {
	return func(ri *RouteInfo) { ri.LoginRedirect = path }
}

// WriteTimeout sets a route's write deadline; 0 removes it, for streams.
func WriteTimeout(d time.Duration) RouteOption { return func(ri *RouteInfo) { ri.WriteTimeout = d } }

// Router wraps http.ServeMux so that registering a route means saying who
// may use it. Anything not registered answers 401 to strangers and 404 to
// users, so probing for routes needs a credential too.
type Router struct {
	store  *auth.Store
	cfg    Config
	mux    *http.ServeMux
	routes []RouteInfo
	errs   []error
}

// NewRouter returns a router whose routes authenticate against store.
func NewRouter(store *auth.Store, cfg Config) *Router {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	rt := &Router{store: store, cfg: cfg, mux: http.NewServeMux()}
	rt.mux.Handle("/", rt.guard(RouteInfo{MinRole: auth.Viewer, MaxBody: DefaultMaxBody, WriteTimeout: DefaultWriteTimeout},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeError(w, http.StatusNotFound, "no such route")
		})))
	return rt
}

// Handle registers "METHOD /path" for principals of at least role min.
func (rt *Router) Handle(method, path string, min auth.Role, h http.HandlerFunc, opts ...RouteOption) {
	if !min.Valid() {
		rt.errs = append(rt.errs, fmt.Errorf("route %s %s: a role is required (use Public for the listed exceptions)", method, path))
		return
	}
	rt.add(RouteInfo{Method: method, Path: path, MinRole: min}, h, opts)
}

// Public registers one of PublicRoutes without authentication.
func (rt *Router) Public(method, path string, h http.HandlerFunc, opts ...RouteOption) {
	if !slices.Contains(PublicRoutes(), method+" "+path) {
		rt.errs = append(rt.errs, fmt.Errorf("route %s %s cannot be public: only %s are", method, path, strings.Join(PublicRoutes(), ", ")))
		return
	}
	rt.add(RouteInfo{Method: method, Path: path, Public: true}, h, opts)
}

func (rt *Router) add(ri RouteInfo, h http.HandlerFunc, opts []RouteOption) {
	if ri.Method == "" || !strings.HasPrefix(ri.Path, "/") || h == nil {
		rt.errs = append(rt.errs, fmt.Errorf("route %q %q: needs a method, an absolute path and a handler", ri.Method, ri.Path))
		return
	}
	ri.MaxBody, ri.WriteTimeout = DefaultMaxBody, DefaultWriteTimeout
	for _, o := range opts {
		o(&ri)
	}
	if err := rt.register(ri.Pattern(), rt.guard(ri, h)); err != nil {
		rt.errs = append(rt.errs, err)
		return
	}
	rt.routes = append(rt.routes, ri)
}

// register turns ServeMux's panic on a conflicting pattern into an error.
func (rt *Router) register(pattern string, h http.Handler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("route %s: %v", pattern, p)
		}
	}()
	rt.mux.Handle(pattern, h)
	return nil
}

// Routes lists every registered route, in registration order.
func (rt *Router) Routes() []RouteInfo { return slices.Clone(rt.routes) }

// Handler returns the router with its outer layers (security headers,
// request log, panic recovery), or the errors of bad registrations.
func (rt *Router) Handler() (http.Handler, error) {
	if err := errors.Join(rt.errs...); err != nil {
		return nil, err
	}
	return rt.outer(rt.mux), nil
}
