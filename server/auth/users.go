package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Actor is who does something and from where, for permission checks and
// the audit log.
type Actor struct {
	User   string
	Role   Role
	Remote string // client address, or "local" for the command line
}

// LocalActor is the command line (latscope serve users ...) and first start.
func LocalActor() Actor { return Actor{User: "latscope", Role: Admin, Remote: "local"} }

// User is a user as listed; the password hash never leaves the store.
type User struct {
	Name      string    `json:"name"`
	Role      Role      `json:"role"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Password lengths: long enough to resist guessing, short enough that
// hashing a request body costs no more than a normal login.
const (
	MinPasswordLen = 12
	MaxPasswordLen = 256
)

// FirstAdmin is the user first start creates.
const FirstAdmin = "admin"

func validatePassword(p string) error {
	if n := utf8.RuneCountInString(p); n < MinPasswordLen || len(p) > MaxPasswordLen {
		return invalid("a password needs %d to %d characters", MinPasswordLen, MaxPasswordLen)
	}
	return nil
}

// Bootstrap creates the first admin with a random password when there is
// no user at all, and returns that password: the only time it is shown.
// With users already there it returns "" and does nothing.
func (s *Store) Bootstrap(ctx context.Context) (password string, err error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM auth_users`).Scan(&n); err != nil {
		return "", fmt.Errorf("count users: %w", err)
	}
	if n > 0 {
		return "", nil
	}
	return s.AddUser(ctx, LocalActor(), FirstAdmin, Admin, "")
}

// AddUser creates a user. An empty password makes a random one, returned
// once; a given password is not returned.
func (s *Store) AddUser(ctx context.Context, by Actor, name string, role Role, password string) (string, error) {
	if err := ValidateName("user", name); err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if !role.Valid() {
		return "", invalid("unknown role")
	}
	hashed, generated, err := s.passwordHash(ctx, password)
	if err != nil {
		return "", err
	}
	now := nanos(s.now())
	_, err = s.db.ExecContext(ctx, `INSERT INTO auth_users(name, role, password_hash, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?)`, name, role.String(), hashed, now, now)
	if err != nil {
		if exists, qerr := s.userExists(ctx, name); qerr == nil && exists {
			return "", fmt.Errorf("user %s: %w", name, ErrExists)
		}
		return "", fmt.Errorf("add user %s: %w", name, err)
	}
	s.audit(ctx, by, "user.add", name, true, "role="+role.String())
	return generated, nil
}

// passwordHash validates a chosen password or makes a random one.
func (s *Store) passwordHash(ctx context.Context, password string) (hashed, generated string, err error) {
	if password == "" {
		if generated, err = newPassword(); err != nil {
			return "", "", err
		}
		password = generated
	} else if err := validatePassword(password); err != nil {
		return "", "", err
	}
	var herr error
	if err := s.hash(ctx, func() { hashed, herr = HashPassword(password, s.opt.Argon2) }); err != nil {
		return "", "", err
	}
	return hashed, generated, herr
}

func (s *Store) userExists(ctx context.Context, name string) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM auth_users WHERE name = ?`, name).Scan(&n)
	return n > 0, err
}

// Users lists every user by name.
func (s *Store) Users(ctx context.Context) ([]User, error) {
	return queryAll(ctx, s.db, "list users", scanUser, `SELECT name, role, created_at, updated_at FROM auth_users ORDER BY name`)
}

func scanUser(rows *sql.Rows) (User, error) {
	var u User
	var role string
	var created, updated int64
	if err := rows.Scan(&u.Name, &role, &created, &updated); err != nil {
		return u, err
	}
	var err error
	if u.Role, err = ParseRole(role); err != nil {
		return u, fmt.Errorf("user %s: %w", u.Name, err)
	}
	u.CreatedAt, u.UpdatedAt = fromNanos(created), fromNanos(updated)
	return u, nil
}

func (s *Store) userRole(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, name string) (Role, error) {
	var role string
	err := q.QueryRowContext(ctx, `SELECT role FROM auth_users WHERE name = ?`, name).Scan(&role)
	if errors.Is(err, sql.ErrNoRows) {
		return NoRole, fmt.Errorf("user %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return NoRole, fmt.Errorf("user %s: %w", name, err)
	}
	return ParseRole(role)
}

// ResetPassword sets a user's password (a random one, returned once, when
// password is empty) and ends all of that user's sessions.
func (s *Store) ResetPassword(ctx context.Context, by Actor, name, password string) (string, error) {
	if _, err := s.userRole(ctx, s.db, name); err != nil {
		return "", err
	}
	hashed, generated, err := s.passwordHash(ctx, password)
	if err != nil {
		return "", err
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE auth_users SET password_hash = ?, updated_at = ? WHERE name = ?`,
			hashed, nanos(s.now()), name)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("user %s: %w", name, ErrNotFound)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM auth_sessions WHERE user_name = ?`, name)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("reset password of %s: %w", name, err)
	}
	s.audit(ctx, by, "user.reset", name, true, "")
	return generated, nil
}

// SetRole changes a user's role. Sessions and tokens follow at once: a
// token's role is capped by its owner's current role on every request.
func (s *Store) SetRole(ctx context.Context, by Actor, name string, role Role) error {
	if !role.Valid() {
		return invalid("unknown role")
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		old, err := s.userRole(ctx, tx, name)
		if err != nil {
			return err
		}
		if old == Admin && role != Admin {
			if err := lastAdminGuard(ctx, tx); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE auth_users SET role = ?, updated_at = ? WHERE name = ?`,
			role.String(), nanos(s.now()), name)
		return err
	})
	if err != nil {
		return fmt.Errorf("set role of %s: %w", name, err)
	}
	s.audit(ctx, by, "user.role", name, true, "role="+role.String())
	return nil
}

// RemoveUser deletes a user with their tokens and sessions.
func (s *Store) RemoveUser(ctx context.Context, by Actor, name string) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		role, err := s.userRole(ctx, tx, name)
		if err != nil {
			return err
		}
		if role == Admin {
			if err := lastAdminGuard(ctx, tx); err != nil {
				return err
			}
		}
		for _, q := range []string{
			`DELETE FROM auth_sessions WHERE user_name = ?`,
			`DELETE FROM auth_tokens WHERE user_name = ?`,
			`DELETE FROM auth_users WHERE name = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("remove user %s: %w", name, err)
	}
	s.audit(ctx, by, "user.remove", name, true, "")
	return nil
}

func lastAdminGuard(ctx context.Context, tx *sql.Tx) error {
	var admins int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM auth_users WHERE role = ?`, Admin.String()).Scan(&admins); err != nil {
		return err
	}
	if admins <= 1 {
		return ErrLastAdmin
	}
	return nil
}

func (s *Store) inTx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}
