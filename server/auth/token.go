package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Token lifetimes: every token expires; 90 days unless asked otherwise.
const (
	DefaultTokenTTL = 90 * 24 * time.Hour
	MaxTokenTTL     = 366 * 24 * time.Hour
)

// TokenInfo is a token as listed: never the secret, which exists only in
// the response that created it.
type TokenInfo struct {
	ID         string    `json:"id"`
	User       string    `json:"user"`
	Name       string    `json:"name"`
	Role       Role      `json:"role"`
	CreatedAt  time.Time `json:"created_at"`
	ExpiresAt  time.Time `json:"expires_at"`
	RevokedAt  time.Time `json:"revoked_at,omitzero"`
	LastUsedAt time.Time `json:"last_used_at,omitzero"`
}

// NewToken is a token just created: Secret is shown this once.
type NewToken struct {
	TokenInfo
	Secret string `json:"token"`
}

// CreateToken makes an API token for owner with a role no higher than the
// owner's. Only an admin may create one for somebody else.
func (s *Store) CreateToken(ctx context.Context, by Actor, owner, name string, role Role, ttl time.Duration) (NewToken, error) {
	if owner == "" {
		owner = by.User
	}
	if owner != by.User && by.Role != Admin {
		return NewToken{}, fmt.Errorf("token for %s: %w", owner, ErrForbidden)
	}
	if err := ValidateName("token", name); err != nil {
		return NewToken{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if ttl == 0 {
		ttl = DefaultTokenTTL
	}
	if ttl < 0 || ttl > MaxTokenTTL {
		return NewToken{}, invalid("a token lives between 1 s and %s", MaxTokenTTL)
	}
	ownerRole, err := s.userRole(ctx, s.db, owner)
	if err != nil {
		return NewToken{}, err
	}
	if !role.Valid() {
		return NewToken{}, invalid("a token needs a role: viewer, operator or admin")
	}
	if role > ownerRole {
		return NewToken{}, invalid("role %s is above %s's role %s", role, owner, ownerRole)
	}
	secret, err := newSecret(TokenPrefix)
	if err != nil {
		return NewToken{}, err
	}
	hash, err := ParseSecret(TokenPrefix, secret)
	if err != nil {
		return NewToken{}, err
	}
	id, err := newID()
	if err != nil {
		return NewToken{}, err
	}
	now := s.now()
	info := TokenInfo{ID: id, User: owner, Name: name, Role: role, CreatedAt: now.UTC(), ExpiresAt: now.Add(ttl).UTC()}
	_, err = s.db.ExecContext(ctx, `INSERT INTO auth_tokens(id, hash, user_name, name, role, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, id, hash, owner, name, role.String(), nanos(now), nanos(info.ExpiresAt))
	if err != nil {
		return NewToken{}, fmt.Errorf("create token: %w", err)
	}
	s.audit(ctx, by, "token.create", owner+"/"+id, true, fmt.Sprintf("name=%s role=%s expires=%s", name, role, info.ExpiresAt.Format(time.RFC3339)))
	return NewToken{TokenInfo: info, Secret: secret}, nil
}

// TokenPrincipal resolves a bearer token. Revocation and expiry are checked
// against the database on every request, so they take effect at once.
func (s *Store) TokenPrincipal(ctx context.Context, secret string) (Principal, error) {
	hash, err := ParseSecret(TokenPrefix, secret)
	if err != nil {
		return Principal{}, ErrUnauthenticated
	}
	now := s.now()
	var id, user, tokenRole, userRole string
	var expires, revoked, lastUsed int64
	err = s.db.QueryRowContext(ctx, `SELECT t.id, t.user_name, t.role, u.role, t.expires_at, t.revoked_at, t.last_used_at
		FROM auth_tokens t JOIN auth_users u ON u.name = t.user_name WHERE t.hash = ?`, hash).
		Scan(&id, &user, &tokenRole, &userRole, &expires, &revoked, &lastUsed)
	if errors.Is(err, sql.ErrNoRows) {
		return Principal{}, ErrUnauthenticated
	}
	if err != nil {
		return Principal{}, fmt.Errorf("look up token: %w", err)
	}
	if revoked != 0 || now.UnixNano() >= expires {
		return Principal{}, ErrUnauthenticated
	}
	tr, err1 := ParseRole(tokenRole)
	ur, err2 := ParseRole(userRole)
	if err := errors.Join(err1, err2); err != nil {
		return Principal{}, fmt.Errorf("token %s: %w", id, err)
	}
	if now.Sub(fromNanos(lastUsed)) >= touchEvery {
		s.touch(ctx, "token", `UPDATE auth_tokens SET last_used_at = ? WHERE id = ?`, nanos(now), id)
	}
	return Principal{User: user, Role: minRole(tr, ur), Via: "token", TokenID: id}, nil
}

// Tokens lists the tokens of owner, or everybody's when owner is "".
func (s *Store) Tokens(ctx context.Context, owner string) ([]TokenInfo, error) {
	return queryAll(ctx, s.db, "list tokens", scanToken, `SELECT id, user_name, name, role, created_at, expires_at, revoked_at, last_used_at
		FROM auth_tokens WHERE ? = '' OR user_name = ? ORDER BY created_at, id`, owner, owner)
}

func scanToken(rows *sql.Rows) (TokenInfo, error) {
	var t TokenInfo
	var role string
	var created, expires, revoked, used int64
	if err := rows.Scan(&t.ID, &t.User, &t.Name, &role, &created, &expires, &revoked, &used); err != nil {
		return t, err
	}
	var err error
	if t.Role, err = ParseRole(role); err != nil {
		return t, fmt.Errorf("token %s: %w", t.ID, err)
	}
	t.CreatedAt, t.ExpiresAt, t.RevokedAt, t.LastUsedAt = fromNanos(created), fromNanos(expires), fromNanos(revoked), fromNanos(used)
	return t, nil
}

// RevokeToken revokes a token by id: the owner's own, or anyone's for an
// admin. The next request with it is refused.
func (s *Store) RevokeToken(ctx context.Context, by Actor, id string) error {
	var owner string
	err := s.db.QueryRowContext(ctx, `SELECT user_name FROM auth_tokens WHERE id = ?`, id).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) || err == nil && owner != by.User && by.Role != Admin {
		// Somebody else's token is reported as absent: ids are not a way to probe.
		return fmt.Errorf("token %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("revoke token %s: %w", id, err)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE auth_tokens SET revoked_at = ? WHERE id = ? AND revoked_at = 0`,
		nanos(s.now()), id); err != nil {
		return fmt.Errorf("revoke token %s: %w", id, err)
	}
	s.audit(ctx, by, "token.revoke", owner+"/"+id, true, "")
	return nil
}

// ValidateTokenID checks the shape of a public token id (12 base64url
// characters) before it is looked up.
func ValidateTokenID(id string) error {
	if len(id) != 12 {
		return invalid("malformed token id")
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return invalid("malformed token id")
		}
	}
	return nil
}
