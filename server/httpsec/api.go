package httpsec

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/latscope/latscope/server/auth"
)

// RegisterAuthAPI adds the routes of users, sessions, tokens, the audit log
// and the health check.
func (rt *Router) RegisterAuthAPI() {
	rt.Public("GET", "/healthz", rt.api(rt.health))
	rt.Public("POST", "/api/v1/login", rt.api(withBody(rt.login)))
	rt.Handle("POST", "/api/v1/logout", auth.Viewer, rt.api(rt.logout))
	rt.Handle("GET", "/api/v1/me", auth.Viewer, rt.api(rt.me))
	rt.Handle("GET", "/api/v1/tokens", auth.Viewer, rt.api(rt.listTokens))
	rt.Handle("POST", "/api/v1/tokens", auth.Operator, rt.api(withBody(rt.createToken)))
	rt.Handle("DELETE", "/api/v1/tokens/{id}", auth.Operator, rt.api(rt.revokeToken))
	rt.Handle("GET", "/api/v1/users", auth.Admin, rt.api(rt.listUsers))
	rt.Handle("POST", "/api/v1/users", auth.Admin, rt.api(withBody(rt.addUser)))
	rt.Handle("POST", "/api/v1/users/{name}/password", auth.Admin, rt.api(withBody(rt.resetPassword)))
	rt.Handle("PUT", "/api/v1/users/{name}/role", auth.Admin, rt.api(withBody(rt.setRole)))
	rt.Handle("DELETE", "/api/v1/users/{name}", auth.Admin, rt.api(rt.removeUser))
	rt.Handle("GET", "/api/v1/audit", auth.Admin, rt.api(rt.auditLog))
}

// APIFunc is one API call: it returns the status and the value to send as
// JSON (nil: the status alone), or an error mapped onto a status:
// auth.ErrInvalid 400, auth.ErrNotFound 404, auth.ErrForbidden 403, and
// anything unexpected 500, logged and answered vaguely.
type APIFunc func(w http.ResponseWriter, r *http.Request) (int, any, error)

// API adapts an APIFunc into a handler for Handle, so that every route of
// the server answers and fails the same way (errors as {"error": "..."}).
func (rt *Router) API(f APIFunc) http.HandlerFunc { return rt.api(f) }

// WithBody adapts a call that takes the request's JSON body, decoded into
// a Req as the auth API's are (application/json, capped, unknown fields
// refused), into an APIFunc.
func WithBody[Req any](f func(w http.ResponseWriter, r *http.Request, req Req) (int, any, error)) APIFunc {
	return withBody(f)
}

func (rt *Router) api(f APIFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		status, body, err := f(w, r)
		switch {
		case err != nil:
			rt.fail(w, r, err)
		case body == nil:
			w.WriteHeader(status)
		default:
			writeJSON(w, status, body)
		}
	}
}

// withBody decodes the request's JSON body into a Req for f.
func withBody[Req any](f func(w http.ResponseWriter, r *http.Request, req Req) (int, any, error)) APIFunc {
	return func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		var req Req
		if err := decodeBody(r, &req); err != nil {
			return 0, nil, err
		}
		return f(w, r, req)
	}
}

// Fail answers an error as the API does, for handlers that are not
// APIFuncs (a stream that cannot start).
func (rt *Router) Fail(w http.ResponseWriter, r *http.Request, err error) { rt.fail(w, r, err) }

// fail answers with the status an error from server/auth or the request
// body deserves; unexpected errors are logged and answered vaguely.
func (rt *Router) fail(w http.ResponseWriter, r *http.Request, err error) {
	var tooLarge *http.MaxBytesError
	var limited *auth.RateLimitError
	var unavailable unavailableError
	switch {
	case errors.As(err, &unavailable):
		w.Header().Set("Retry-After", retryAfterUnavailable)
		writeError(w, http.StatusServiceUnavailable, err.Error())
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, "request body over "+strconv.FormatInt(tooLarge.Limit, 10)+" bytes")
	case errors.As(err, &limited):
		w.Header().Set("Retry-After", strconv.Itoa(int(limited.RetryAfter.Seconds())+1))
		writeError(w, http.StatusTooManyRequests, limited.Error())
	case errors.Is(err, errMediaType):
		writeError(w, http.StatusUnsupportedMediaType, err.Error())
	case errors.Is(err, auth.ErrBadCredentials):
		writeError(w, http.StatusUnauthorized, err.Error())
	case errors.Is(err, auth.ErrInvalid):
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, auth.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, auth.ErrExists), errors.Is(err, auth.ErrLastAdmin), errors.Is(err, auth.ErrConflict):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, auth.ErrForbidden):
		writeError(w, http.StatusForbidden, err.Error())
	default:
		var bad *badRequestError
		if errors.As(err, &bad) {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		rt.internalError(w, r, err)
	}
}

func (rt *Router) health(w http.ResponseWriter, r *http.Request) (int, any, error) {
	return http.StatusOK, map[string]string{"status": "ok"}, nil
}

type loginRequest struct {
	User     string `json:"user"`
	Password string `json:"password"`
}

type sessionResponse struct {
	User      string    `json:"user"`
	Role      auth.Role `json:"role"`
	Via       string    `json:"via"`
	CSRFToken string    `json:"csrf_token,omitempty"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// login opens a new session. A session cookie the client already sent is
// ended, never adopted: the new session always has a fresh id.
func (rt *Router) login(w http.ResponseWriter, r *http.Request, req loginRequest) (int, any, error) {
	if old, err := r.Cookie(rt.cookieName()); err == nil {
		if err := rt.store.EndSession(r.Context(), old.Value); err != nil {
			return 0, nil, err
		}
	}
	sess, err := rt.store.Login(r.Context(), req.User, req.Password, RemoteHost(r))
	if err != nil {
		return 0, nil, err
	}
	http.SetCookie(w, rt.sessionCookie(sess.ID, sess.ExpiresAt))
	setUser(w, sess.User)
	return http.StatusOK, sessionResponse{User: sess.User, Role: sess.Role, Via: "session", CSRFToken: sess.CSRF, ExpiresAt: sess.ExpiresAt}, nil
}

func (rt *Router) logout(w http.ResponseWriter, r *http.Request) (int, any, error) {
	p, _ := PrincipalFrom(r.Context())
	if err := rt.store.Logout(r.Context(), p, RemoteHost(r)); err != nil {
		return 0, nil, err
	}
	if p.Via == "session" {
		http.SetCookie(w, rt.sessionCookie("", time.Time{}))
	}
	return http.StatusNoContent, nil, nil
}

func (rt *Router) me(w http.ResponseWriter, r *http.Request) (int, any, error) {
	p, _ := PrincipalFrom(r.Context())
	return http.StatusOK, sessionResponse{User: p.User, Role: p.Role, Via: p.Via, CSRFToken: p.CSRFToken()}, nil
}

func (rt *Router) actor(r *http.Request) auth.Actor {
	p, _ := PrincipalFrom(r.Context())
	return p.Actor(RemoteHost(r))
}

// listTokens lists the caller's tokens; an admin may ask for all=true.
func (rt *Router) listTokens(w http.ResponseWriter, r *http.Request) (int, any, error) {
	p, _ := PrincipalFrom(r.Context())
	owner := p.User
	if r.URL.Query().Get("all") == "true" {
		if p.Role != auth.Admin {
			return 0, nil, fmt.Errorf("all=true needs the admin role: %w", auth.ErrForbidden)
		}
		owner = ""
	}
	tokens, err := rt.store.Tokens(r.Context(), owner)
	return http.StatusOK, map[string]any{"tokens": nonNil(tokens)}, err
}

type createTokenRequest struct {
	Name      string    `json:"name"`
	Role      auth.Role `json:"role"`
	ExpiresIn string    `json:"expires_in,omitempty"` // a Go duration such as "720h"; default 90 days
	User      string    `json:"user,omitempty"`       // admins only: a token for another user
}

func (rt *Router) createToken(w http.ResponseWriter, r *http.Request, req createTokenRequest) (int, any, error) {
	var ttl time.Duration
	if req.ExpiresIn != "" {
		var err error
		if ttl, err = time.ParseDuration(req.ExpiresIn); err != nil || ttl <= 0 {
			return 0, nil, &badRequestError{msg: "expires_in must be a positive duration such as 720h"}
		}
	}
	tok, err := rt.store.CreateToken(r.Context(), rt.actor(r), req.User, req.Name, req.Role, ttl)
	return http.StatusCreated, tok, err
}

func (rt *Router) revokeToken(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id := r.PathValue("id")
	if err := auth.ValidateTokenID(id); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, rt.store.RevokeToken(r.Context(), rt.actor(r), id)
}

func (rt *Router) listUsers(w http.ResponseWriter, r *http.Request) (int, any, error) {
	users, err := rt.store.Users(r.Context())
	return http.StatusOK, map[string]any{"users": nonNil(users)}, err
}

type addUserRequest struct {
	Name     string    `json:"name"`
	Role     auth.Role `json:"role"`
	Password string    `json:"password,omitempty"` // empty: a random one, returned once
}

type passwordResponse struct {
	User     string `json:"user"`
	Password string `json:"password,omitempty"` // only when generated
}

func (rt *Router) addUser(w http.ResponseWriter, r *http.Request, req addUserRequest) (int, any, error) {
	generated, err := rt.store.AddUser(r.Context(), rt.actor(r), req.Name, req.Role, req.Password)
	return http.StatusCreated, passwordResponse{User: req.Name, Password: generated}, err
}

// pathName reads the {name} of a user route; a name that is not a valid
// user name (a path, "..", control characters) is refused before any lookup.
func pathName(r *http.Request) (string, error) {
	name := r.PathValue("name")
	if err := auth.ValidateName("user", name); err != nil {
		return "", fmt.Errorf("%w: %v", auth.ErrInvalid, err)
	}
	return name, nil
}

type resetRequest struct {
	Password string `json:"password,omitempty"`
}

func (rt *Router) resetPassword(w http.ResponseWriter, r *http.Request, req resetRequest) (int, any, error) {
	name, err := pathName(r)
	if err != nil {
		return 0, nil, err
	}
	generated, err := rt.store.ResetPassword(r.Context(), rt.actor(r), name, req.Password)
	return http.StatusOK, passwordResponse{User: name, Password: generated}, err
}

type roleRequest struct {
	Role auth.Role `json:"role"`
}

func (rt *Router) setRole(w http.ResponseWriter, r *http.Request, req roleRequest) (int, any, error) {
	name, err := pathName(r)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, rt.store.SetRole(r.Context(), rt.actor(r), name, req.Role)
}

func (rt *Router) removeUser(w http.ResponseWriter, r *http.Request) (int, any, error) {
	name, err := pathName(r)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, rt.store.RemoveUser(r.Context(), rt.actor(r), name)
}

// auditLog pages through the audit log, newest first: ?limit=N&before=ID.
func (rt *Router) auditLog(w http.ResponseWriter, r *http.Request) (int, any, error) {
	q := r.URL.Query()
	before, err1 := optionalInt(q.Get("before"))
	limit, err2 := optionalInt(q.Get("limit"))
	if err := errors.Join(err1, err2); err != nil || before < 0 || limit < 0 {
		return 0, nil, &badRequestError{msg: "before and limit must be non-negative integers"}
	}
	events, err := rt.store.AuditLog(r.Context(), before, int(limit))
	return http.StatusOK, map[string]any{"events": nonNil(events)}, err
}

func optionalInt(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
