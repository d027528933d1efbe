package auth

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Principal is who a request acts as, once its credential checked out.
type Principal struct {
	User    string
	Role    Role   // the effective role: a token's role capped by its owner's
	Via     string // "session" or "token"
	TokenID string // for tokens
	csrf    string // for sessions
	session []byte // hash of the session id, for logout
}

// Actor is the principal acting from a client address.
func (p Principal) Actor(remote string) Actor {
	return Actor{User: p.User, Role: p.Role, Remote: remote}
}

// CSRFToken is the session's synchronizer token ("" for tokens).
func (p Principal) CSRFToken() string { return p.csrf }

// CheckCSRF compares a presented CSRF token with the session's in constant time.
func (p Principal) CheckCSRF(presented string) bool {
	return p.csrf != "" && subtle.ConstantTimeCompare([]byte(presented), []byte(p.csrf)) == 1
}

// Session is a new browser session: ID goes into the cookie, CSRF to the page.
type Session struct {
	ID        string
	CSRF      string
	User      string
	Role      Role
	ExpiresAt time.Time // absolute expiry
}

// Login checks a user's password, rate-limited per user and per client
// address, and opens a new session under a fresh random id: a session id
// the client already had is never reused (no fixation).
func (s *Store) Login(ctx context.Context, name, password, remote string) (Session, error) {
	now := s.now()
	actor := Actor{User: name, Remote: remote}
	if ValidateName("user", name) != nil || len(password) > MaxPasswordLen {
		s.audit(ctx, Actor{User: "?", Remote: remote}, "login.fail", "", false, "malformed user name or password")
		return Session{}, ErrBadCredentials
	}
	if err := s.takeLoginAttempt(name, remote, now); err != nil {
		s.audit(ctx, actor, "login.limited", name, false, err.Error())
		return Session{}, err
	}
	role, ok, err := s.checkPassword(ctx, name, password)
	if err != nil {
		return Session{}, err
	}
	if !ok {
		s.audit(ctx, actor, "login.fail", name, false, "")
		return Session{}, ErrBadCredentials
	}
	sess, err := s.newSession(ctx, name, role, now)
	if err != nil {
		return Session{}, err
	}
	actor.Role = role
	s.audit(ctx, actor, "login", name, true, "")
	return sess, nil
}

func (s *Store) takeLoginAttempt(name, remote string, now time.Time) error {
	okUser, waitUser := s.userLimit.take(name, now)
	okAddr, waitAddr := s.addrLimit.take(addressKey(remote), now)
	if okUser && okAddr {
		return nil
	}
	return &RateLimitError{RetryAfter: max(waitUser, waitAddr)}
}

// checkPassword verifies against a dummy hash for unknown users, so that
// the time taken does not say which names exist.
func (s *Store) checkPassword(ctx context.Context, name, password string) (Role, bool, error) {
	var roleName, hashed string
	err := s.db.QueryRowContext(ctx, `SELECT role, password_hash FROM auth_users WHERE name = ?`, name).Scan(&roleName, &hashed)
	known := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return NoRole, false, fmt.Errorf("look up user: %w", err)
	}
	if !known {
		hashed = s.dummyHash
	}
	var match bool
	var verr error
	if err := s.hash(ctx, func() { match, verr = VerifyPassword(password, hashed) }); err != nil {
		return NoRole, false, err
	}
	if verr != nil {
		return NoRole, false, fmt.Errorf("user %s: stored password: %w", name, verr)
	}
	if !known || !match {
		return NoRole, false, nil
	}
	role, err := ParseRole(roleName)
	return role, err == nil, err
}

func (s *Store) newSession(ctx context.Context, name string, role Role, now time.Time) (Session, error) {
	id, err := newSecret(SessionPrefix)
	if err != nil {
		return Session{}, err
	}
	csrf, err := newSecret("")
	if err != nil {
		return Session{}, err
	}
	hash, err := ParseSecret(SessionPrefix, id)
	if err != nil {
		return Session{}, err
	}
	expires := now.Add(s.opt.SessionMax)
	_, err = s.db.ExecContext(ctx, `INSERT INTO auth_sessions(hash, user_name, csrf, created_at, last_seen_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)`, hash, name, csrf, nanos(now), nanos(now), nanos(expires))
	if err != nil {
		return Session{}, fmt.Errorf("create session: %w", err)
	}
	return Session{ID: id, CSRF: csrf, User: name, Role: role, ExpiresAt: expires}, nil
}

// touchEvery limits last-seen writes to one a minute per session.
const touchEvery = time.Minute

// SessionPrincipal resolves a session id from a cookie. Sessions idle longer
// than SessionIdle or older than SessionMax are deleted and refused.
func (s *Store) SessionPrincipal(ctx context.Context, id string) (Principal, error) {
	hash, err := ParseSecret(SessionPrefix, id)
	if err != nil {
		return Principal{}, ErrUnauthenticated
	}
	now := s.now()
	var user, roleName, csrf string
	var lastSeen, expires int64
	err = s.db.QueryRowContext(ctx, `SELECT s.user_name, u.role, s.csrf, s.last_seen_at, s.expires_at
		FROM auth_sessions s JOIN auth_users u ON u.name = s.user_name WHERE s.hash = ?`, hash).
		Scan(&user, &roleName, &csrf, &lastSeen, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return Principal{}, ErrUnauthenticated
	}
	if err != nil {
		return Principal{}, fmt.Errorf("look up session: %w", err)
	}
	if now.UnixNano() >= expires || now.Sub(fromNanos(lastSeen)) >= s.opt.SessionIdle {
		if _, err := s.db.ExecContext(ctx, `DELETE FROM auth_sessions WHERE hash = ?`, hash); err != nil {
			return Principal{}, fmt.Errorf("end expired session: %w", err)
		}
		return Principal{}, ErrUnauthenticated
	}
	if now.Sub(fromNanos(lastSeen)) >= touchEvery {
		s.touch(ctx, "session", `UPDATE auth_sessions SET last_seen_at = ? WHERE hash = ?`, nanos(now), hash)
	}
	role, err := ParseRole(roleName)
	if err != nil {
		return Principal{}, fmt.Errorf("session of %s: %w", user, err)
	}
	return Principal{User: user, Role: role, Via: "session", csrf: csrf, session: hash}, nil
}

// touch records that a session or token was used. It is bookkeeping, not
// a check: when it cannot be written (a full disk, where the API must
// still show the stalled jobs), the request goes on and the failure is
// logged.
func (s *Store) touch(ctx context.Context, what, query string, args ...any) {
	if _, err := s.db.ExecContext(ctx, query, args...); err != nil {
		s.opt.Logger.Warn("recording the last use of a "+what, "error", err.Error())
	}
}

// EndSession deletes a presented session id, if it is one; logout and login
// both use it, so an old cookie is dead once a new one is issued.
func (s *Store) EndSession(ctx context.Context, id string) error {
	hash, err := ParseSecret(SessionPrefix, id)
	if err != nil {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM auth_sessions WHERE hash = ?`, hash); err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}

// Logout ends the principal's session and records it.
func (s *Store) Logout(ctx context.Context, p Principal, remote string) error {
	if p.session != nil {
		if _, err := s.db.ExecContext(ctx, `DELETE FROM auth_sessions WHERE hash = ?`, p.session); err != nil {
			return fmt.Errorf("end session: %w", err)
		}
	}
	s.audit(ctx, p.Actor(remote), "logout", p.User, true, "via="+p.Via)
	return nil
}

// PruneSessions deletes expired sessions; the server calls it now and then
// so the table does not grow with abandoned browsers.
func (s *Store) PruneSessions(ctx context.Context) (int64, error) {
	now := s.now()
	res, err := s.db.ExecContext(ctx, `DELETE FROM auth_sessions WHERE expires_at <= ? OR last_seen_at <= ?`,
		nanos(now), nanos(now.Add(-s.opt.SessionIdle)))
	if err != nil {
		return 0, fmt.Errorf("prune sessions: %w", err)
	}
	return res.RowsAffected()
}
