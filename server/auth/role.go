// Package auth is the security core of latscope serve: users with roles,
// argon2id password hashes, API tokens, browser sessions with CSRF tokens,
// login rate limits and the audit log, stored in SQLite.
//
// It knows nothing of HTTP: server/httpsec puts it behind the router.
package auth

import "fmt"

// Role orders what a principal may do; a higher role may do all a lower one may.
type Role int

// The roles, weakest first. NoRole is the zero value so that a forgotten
// role grants nothing.
const (
	NoRole Role = iota
	Viewer
	Operator
	Admin
)

var roleNames = [...]string{NoRole: "none", Viewer: "viewer", Operator: "operator", Admin: "admin"}

func (r Role) String() string {
	if r < NoRole || r > Admin {
		return fmt.Sprintf("role(%d)", int(r))
	}
	return roleNames[r]
}

// Valid reports whether r is one of viewer, operator or admin.
func (r Role) Valid() bool { return r >= Viewer && r <= Admin }

// Allows reports whether a principal with role r may use something that
// needs at least role min.
func (r Role) Allows(min Role) bool { return r.Valid() && min.Valid() && r >= min }

// ParseRole reads "viewer", "operator" or "admin".
func ParseRole(s string) (Role, error) {
	for r := Viewer; r <= Admin; r++ {
		if roleNames[r] == s {
			return r, nil
		}
	}
	return NoRole, fmt.Errorf("unknown role %q (want viewer, operator or admin)", s)
}

// MarshalText writes the role's name, so JSON shows "admin" rather than 3.
func (r Role) MarshalText() ([]byte, error) {
	if !r.Valid() {
		return nil, fmt.Errorf("cannot encode %v", r)
	}
	return []byte(r.String()), nil
}

// UnmarshalText reads a role's name.
func (r *Role) UnmarshalText(b []byte) error {
	v, err := ParseRole(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

func minRole(a, b Role) Role {
	if a < b {
		return a
	}
	return b
}
