package auth

import (
	"errors"
	"fmt"
	"time"
)

// Errors the server maps onto HTTP statuses.
var (
	ErrInvalid         = errors.New("invalid request")
	ErrNotFound        = errors.New("not found")
	ErrExists          = errors.New("already exists")
	ErrConflict        = errors.New("conflict")
	ErrForbidden       = errors.New("not allowed")
	ErrLastAdmin       = errors.New("the last admin cannot be removed or demoted")
	ErrBadCredentials  = errors.New("wrong user name or password")
	ErrUnauthenticated = errors.New("credential unknown, expired or revoked")
)

// RateLimitError says a login was refused before its password was checked.
type RateLimitError struct{ RetryAfter time.Duration }

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("too many login attempts; retry in %s", e.RetryAfter.Round(time.Second))
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}
