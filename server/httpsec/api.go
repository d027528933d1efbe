package httpsec

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/latscope/latscope/server/auth"
)

// RegisterAuthAPI adds the routes of users, sessions, tokens, the audit log
// and the health check.
func (rt *Router) RegisterAuthAPI() {
	rt.Public("GET", "/healthz", rt.health)
	rt.Public("POST", "/api/v1/login", rt.login)
	rt.Handle("POST", "/api/v1/logout", auth.Viewer, rt.logout)
	rt.Handle("GET", "/api/v1/me", auth.Viewer, rt.me)
	rt.Handle("GET", "/api/v1/tokens", auth.Viewer, rt.listTokens)
	rt.Handle("POST", "/api/v1/tokens", auth.Operator, rt.createToken)
	rt.Handle("DELETE", "/api/v1/tokens/{id}", auth.Operator, rt.revokeToken)
	rt.Handle("GET", "/api/v1/users", auth.Admin, rt.listUsers)
	rt.Handle("POST", "/api/v1/users", auth.Admin, rt.addUser)
	rt.Handle("POST", "/api/v1/users/{name}/password", auth.Admin, rt.resetPassword)
	rt.Handle("PUT", "/api/v1/users/{name}/role", auth.Admin, rt.setRole)
	rt.Handle("DELETE", "/api/v1/users/{name}", auth.Admin, rt.removeUser)
	rt.Handle("GET", "/api/v1/audit", auth.Admin, rt.auditLog)
}

// fail answers with the status an error from server/auth or the request
// body deserves; unexpected errors are logged and answered vaguely.
func (rt *Router) fail(w http.ResponseWriter, r *http.Request, err error) {
	var tooLarge *http.MaxBytesError
	var limited *auth.RateLimitError
	switch {
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
	case errors.Is(err, auth.ErrExists), errors.Is(err, auth.ErrLastAdmin):
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

func (rt *Router) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
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
func (rt *Router) login(w http.ResponseWriter, r *http.Request) {
	var req loginRequest
	if err := decodeBody(r, &req); err != nil {
		rt.fail(w, r, err)
		return
	}
	if old, err := r.Cookie(rt.cookieName()); err == nil {
		if err := rt.store.EndSession(r.Context(), old.Value); err != nil {
			rt.internalError(w, r, err)
			return
		}
	}
	sess, err := rt.store.Login(r.Context(), req.User, req.Password, RemoteHost(r))
	if err != nil {
		rt.fail(w, r, err)
		return
	}
	http.SetCookie(w, rt.sessionCookie(sess.ID, sess.ExpiresAt))
	setUser(w, sess.User)
	writeJSON(w, http.StatusOK, sessionResponse{User: sess.User, Role: sess.Role, Via: "session", CSRFToken: sess.CSRF, ExpiresAt: sess.ExpiresAt})
}

func (rt *Router) logout(w http.ResponseWriter, r *http.Request) {
	p, _ := PrincipalFrom(r.Context())
	if err := rt.store.Logout(r.Context(), p, RemoteHost(r)); err != nil {
		rt.fail(w, r, err)
		return
	}
	if p.Via == "session" {
		http.SetCookie(w, rt.sessionCookie("", time.Time{}))
	}
	w.WriteHeader(http.StatusNoContent)
}

func (rt *Router) me(w http.ResponseWriter, r *http.Request) {
	p, _ := PrincipalFrom(r.Context())
	writeJSON(w, http.StatusOK, sessionResponse{User: p.User, Role: p.Role, Via: p.Via, CSRFToken: p.CSRFToken()})
}

func (rt *Router) actor(r *http.Request) auth.Actor {
	p, _ := PrincipalFrom(r.Context())
	return p.Actor(RemoteHost(r))
}

// listTokens lists the caller's tokens; an admin may ask for all=true.
func (rt *Router) listTokens(w http.ResponseWriter, r *http.Request) {
	p, _ := PrincipalFrom(r.Context())
	owner := p.User
	if r.URL.Query().Get("all") == "true" {
		if p.Role != auth.Admin {
			writeError(w, http.StatusForbidden, "all=true needs the admin role")
			return
		}
		owner = ""
	}
	tokens, err := rt.store.Tokens(r.Context(), owner)
	if err != nil {
		rt.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"tokens": nonNil(tokens)})
}

type createTokenRequest struct {
	Name      string    `json:"name"`
	Role      auth.Role `json:"role"`
	ExpiresIn string    `json:"expires_in,omitempty"` // a Go duration such as "720h"; default 90 days
	User      string    `json:"user,omitempty"`       // admins only: a token for another user
}

func (rt *Router) createToken(w http.ResponseWriter, r *http.Request) {
	var req createTokenRequest
	if err := decodeBody(r, &req); err != nil {
		rt.fail(w, r, err)
		return
	}
	var ttl time.Duration
	if req.ExpiresIn != "" {
		var err error
		if ttl, err = time.ParseDuration(req.ExpiresIn); err != nil || ttl <= 0 {
			writeError(w, http.StatusBadRequest, "expires_in must be a positive duration such as 720h")
			return
		}
	}
	tok, err := rt.store.CreateToken(r.Context(), rt.actor(r), req.User, req.Name, req.Role, ttl)
	if err != nil {
		rt.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, tok)
}

func (rt *Router) revokeToken(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := auth.ValidateTokenID(id); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := rt.store.RevokeToken(r.Context(), rt.actor(r), id); err != nil {
		rt.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (rt *Router) listUsers(w http.ResponseWriter, r *http.Request) {
	users, err := rt.store.Users(r.Context())
	if err != nil {
		rt.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"users": nonNil(users)})
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

func (rt *Router) addUser(w http.ResponseWriter, r *http.Request) {
	var req addUserRequest
	if err := decodeBody(r, &req); err != nil {
		rt.fail(w, r, err)
		return
	}
	generated, err := rt.store.AddUser(r.Context(), rt.actor(r), req.Name, req.Role, req.Password)
	if err != nil {
		rt.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, passwordResponse{User: req.Name, Password: generated})
}

// pathName reads the {name} of a user route; a name that is not a valid
// user name (a path, "..", control characters) is refused before any lookup.
func pathName(w http.ResponseWriter, r *http.Request) (string, bool) {
	name := r.PathValue("name")
	if err := auth.ValidateName("user", name); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return "", false
	}
	return name, true
}

type resetRequest struct {
	Password string `json:"password,omitempty"`
}

func (rt *Router) resetPassword(w http.ResponseWriter, r *http.Request) {
	name, ok := pathName(w, r)
	if !ok {
		return
	}
	var req resetRequest
	if err := decodeBody(r, &req); err != nil {
		rt.fail(w, r, err)
		return
	}
	generated, err := rt.store.ResetPassword(r.Context(), rt.actor(r), name, req.Password)
	if err != nil {
		rt.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, passwordResponse{User: name, Password: generated})
}

type roleRequest struct {
	Role auth.Role `json:"role"`
}

func (rt *Router) setRole(w http.ResponseWriter, r *http.Request) {
	name, ok := pathName(w, r)
	if !ok {
		return
	}
	var req roleRequest
	if err := decodeBody(r, &req); err != nil {
		rt.fail(w, r, err)
		return
	}
	if err := rt.store.SetRole(r.Context(), rt.actor(r), name, req.Role); err != nil {
		rt.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (rt *Router) removeUser(w http.ResponseWriter, r *http.Request) {
	name, ok := pathName(w, r)
	if !ok {
		return
	}
	if err := rt.store.RemoveUser(r.Context(), rt.actor(r), name); err != nil {
		rt.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// auditLog pages through the audit log, newest first: ?limit=N&before=ID.
func (rt *Router) auditLog(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	before, err1 := optionalInt(q.Get("before"))
	limit, err2 := optionalInt(q.Get("limit"))
	if err := errors.Join(err1, err2); err != nil || before < 0 || limit < 0 {
		writeError(w, http.StatusBadRequest, "before and limit must be non-negative integers")
		return
	}
	events, err := rt.store.AuditLog(r.Context(), before, int(limit))
	if err != nil {
		rt.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": nonNil(events)})
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
