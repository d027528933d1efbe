// Package authtest helps tests of latscope serve's users: a store whose
// password hashes cost microseconds. server/auth's own tests cannot import
// it (it imports server/auth) and keep their copy of FastArgon2.
package authtest

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/latscope/latscope/server/auth"
)

// FastArgon2 keeps tests quick; it protects nothing, so only tests use it.
var FastArgon2 = auth.Argon2Params{Time: 1, MemoryKiB: 64, Threads: 1, SaltLen: 16, KeyLen: 32}

// Store opens a users' store in a temporary directory with FastArgon2 and
// the given clock (nil: the real one), closed when the test ends.
func Store(t testing.TB, now func() time.Time) *auth.Store {
	t.Helper()
	s, err := auth.OpenPath(t.Context(), filepath.Join(t.TempDir(), "auth.db"), auth.Options{Argon2: FastArgon2, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
