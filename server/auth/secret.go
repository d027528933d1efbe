package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Secrets latscope hands out are 32 random bytes (256 bits) in unpadded
// base64url behind a prefix that says what they are, so a leaked one is
// recognisable (and greppable by secret scanners).
const (
	TokenPrefix   = "lsat_" // API token
	SessionPrefix = "lsss_" // browser session id (cookie value)
	secretBytes   = 32
	secretLen     = (secretBytes*8 + 5) / 6 // unpadded base64 characters: 43
)

// ErrMalformedSecret means a presented token or session id has the wrong shape.
var ErrMalformedSecret = errors.New("malformed credential")

func newSecret(prefix string) (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random secret: %w", err)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// ParseSecret checks that s is a credential of the given prefix and returns
// the SHA-256 digest under which it is stored. A fast hash is right here:
// the secret has 256 random bits, so there is nothing to brute-force.
func ParseSecret(prefix, s string) ([]byte, error) {
	if len(s) != len(prefix)+secretLen || !strings.HasPrefix(s, prefix) {
		return nil, ErrMalformedSecret
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(s[len(prefix):])
	if err != nil || len(raw) != secretBytes {
		return nil, ErrMalformedSecret
	}
	sum := sha256.Sum256([]byte(s))
	return sum[:], nil
}

// newPassword makes a random password for first start and resets:
// 18 bytes (144 bits) as 24 base64url characters, easy to paste.
func newPassword() (string, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random password: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// newID makes a short public identifier (tokens are listed and revoked by it).
func newID() (string, error) {
	b := make([]byte, 9)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random id: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
