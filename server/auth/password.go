package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2Params are the argon2id cost parameters. They are stored with every
// hash (PHC string format), so raising them later keeps old hashes readable.
type Argon2Params struct {
	Time      uint32 // passes over memory
	MemoryKiB uint32
	Threads   uint8
	SaltLen   uint32
	KeyLen    uint32
}

// DefaultArgon2 is RFC 9106's second recommended option (t=3, 64 MiB, p=4),
// the one for machines without 2 GiB to spare per hash; about 0.1–0.2 s on
// one core of a current server. Store bounds how many hashes run at once.
func DefaultArgon2() Argon2Params {
	return Argon2Params{Time: 3, MemoryKiB: 64 * 1024, Threads: 4, SaltLen: 16, KeyLen: 32}
}

var b64 = base64.RawStdEncoding

// HashPassword returns an argon2id hash in the PHC string format:
// $argon2id$v=19$m=65536,t=3,p=4$SALT$KEY.
func HashPassword(password string, p Argon2Params) (string, error) {
	salt := make([]byte, p.SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, p.Time, p.MemoryKiB, p.Threads, p.KeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.MemoryKiB, p.Time, p.Threads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// errBadHash means a stored hash is not one this package wrote.
var errBadHash = errors.New("malformed argon2id hash")

// maxArgon2MemoryKiB refuses stored parameters that would exhaust memory.
const maxArgon2MemoryKiB = 1 << 20

// VerifyPassword reports whether password matches the PHC-encoded hash,
// comparing in constant time.
func VerifyPassword(password, encoded string) (bool, error) {
	p, salt, key, err := parseHash(encoded)
	if err != nil {
		return false, err
	}
	got := argon2.IDKey([]byte(password), salt, p.Time, p.MemoryKiB, p.Threads, uint32(len(key)))
	return subtle.ConstantTimeCompare(got, key) == 1, nil
}

func parseHash(encoded string) (Argon2Params, []byte, []byte, error) {
	var p Argon2Params
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return p, nil, nil, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return p, nil, nil, errBadHash
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.MemoryKiB, &p.Time, &p.Threads); err != nil {
		return p, nil, nil, errBadHash
	}
	if p.Time == 0 || p.Threads == 0 || p.MemoryKiB == 0 || p.MemoryKiB > maxArgon2MemoryKiB {
		return p, nil, nil, errBadHash
	}
	salt, err1 := b64.DecodeString(parts[4])
	key, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(salt) < 8 || len(key) < 16 {
		return p, nil, nil, errBadHash
	}
	return p, salt, key, nil
}
