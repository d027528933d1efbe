package auth

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/fakeclock"
)

// fastArgon2 keeps tests quick; the default parameters are checked apart.
// It is authtest.FastArgon2, which this package's tests cannot import
// (authtest imports server/auth).
var fastArgon2 = Argon2Params{Time: 1, MemoryKiB: 64, Threads: 1, SaltLen: 16, KeyLen: 32}

func newTestStore(t *testing.T) (*Store, *fakeclock.Clock) {
	t.Helper()
	c := fakeclock.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	s, err := OpenPath(context.Background(), filepath.Join(t.TempDir(), "auth.db"), Options{Argon2: fastArgon2, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, c
}

func TestPasswordHashRoundTrip(t *testing.T) {
	h, err := HashPassword("correct horse battery", fastArgon2)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("hash %q is not PHC argon2id", h)
	}
	for pw, want := range map[string]bool{"correct horse battery": true, "correct horse batterz": false, "": false} {
		if ok, err := VerifyPassword(pw, h); err != nil || ok != want {
			t.Errorf("VerifyPassword(%q) = %v, %v; want %v", pw, ok, err, want)
		}
	}
	h2, _ := HashPassword("correct horse battery", fastArgon2)
	if h2 == h {
		t.Error("two hashes of one password are equal: salt not random")
	}
}

func TestDefaultArgon2IsRFC9106(t *testing.T) {
	p := DefaultArgon2()
	if p.Time != 3 || p.MemoryKiB != 64*1024 || p.Threads != 4 || p.SaltLen < 16 || p.KeyLen < 32 {
		t.Fatalf("DefaultArgon2 = %+v", p)
	}
}

func TestVerifyPasswordRejectsMalformedHashes(t *testing.T) {
	for _, h := range []string{"", "$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5aw",
		"$argon2id$v=19$m=4294967295,t=1,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5aw",
		"$argon2id$v=19$m=64,t=0,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5aw", "$argon2id$v=19$m=64,t=1,p=1$!$!"} {
		if _, err := VerifyPassword("x", h); err == nil {
			t.Errorf("VerifyPassword accepted %q", h)
		}
	}
}

func TestBootstrapCreatesOneAdminOnce(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	pw, err := s.Bootstrap(ctx)
	if err != nil || len(pw) < 24 {
		t.Fatalf("Bootstrap = %q, %v", pw, err)
	}
	if again, err := s.Bootstrap(ctx); err != nil || again != "" {
		t.Fatalf("second Bootstrap = %q, %v; want nothing", again, err)
	}
	sess, err := s.Login(ctx, FirstAdmin, pw, "127.0.0.1")
	if err != nil || sess.Role != Admin {
		t.Fatalf("login with the bootstrap password: %+v, %v", sess, err)
	}
}

func TestSchemaVersionAndReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "auth.db")
	ctx := context.Background()
	s, err := OpenPath(ctx, path, Options{Argon2: fastArgon2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddUser(ctx, LocalActor(), "ann", Viewer, "a long password 1"); err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := s.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	s.Close()
	s, err = OpenPath(ctx, path, Options{Argon2: fastArgon2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	if err := s.db.QueryRow("SELECT version FROM auth_schema").Scan(&v); err != nil || v != SchemaVersion {
		t.Errorf("schema version = %d, %v", v, err)
	}
	if users, _ := s.Users(ctx); len(users) != 1 || users[0].Name != "ann" {
		t.Errorf("users after reopen = %+v", users)
	}
	if _, err := s.db.Exec("UPDATE auth_schema SET version = 99"); err != nil {
		t.Fatal(err)
	}
	if _, err := New(ctx, s.db, Options{Argon2: fastArgon2}); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("a newer schema was accepted: %v", err)
	}
}

func TestUserManagement(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	by := LocalActor()
	if _, err := s.AddUser(ctx, by, "root", Admin, "admin password 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddUser(ctx, by, "root", Viewer, "admin password 1"); !errors.Is(err, ErrExists) {
		t.Errorf("duplicate user: %v", err)
	}
	for _, bad := range []string{"", "../etc", "a/b", "Ann", ".hidden", "x\n", strings.Repeat("a", 65)} {
		if _, err := s.AddUser(ctx, by, bad, Viewer, "a long password 1"); !errors.Is(err, ErrInvalid) {
			t.Errorf("AddUser(%q) = %v; want ErrInvalid", bad, err)
		}
	}
	if _, err := s.AddUser(ctx, by, "bob", Viewer, "short"); !errors.Is(err, ErrInvalid) {
		t.Errorf("short password accepted: %v", err)
	}
	if err := s.SetRole(ctx, by, "root", Viewer); !errors.Is(err, ErrLastAdmin) {
		t.Errorf("demoting the last admin: %v", err)
	}
	if err := s.RemoveUser(ctx, by, "root"); !errors.Is(err, ErrLastAdmin) {
		t.Errorf("removing the last admin: %v", err)
	}
	pw, err := s.AddUser(ctx, by, "bob", Operator, "")
	if err != nil || pw == "" {
		t.Fatalf("AddUser with a generated password: %q, %v", pw, err)
	}
	sess, err := s.Login(ctx, "bob", pw, "10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ResetPassword(ctx, by, "bob", "a brand new password"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SessionPrincipal(ctx, sess.ID); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("a session outlived its user's password reset: %v", err)
	}
	if err := s.RemoveUser(ctx, by, "nobody"); !errors.Is(err, ErrNotFound) {
		t.Errorf("removing nobody: %v", err)
	}
	if err := s.RemoveUser(ctx, by, "bob"); err != nil {
		t.Fatal(err)
	}
	if users, _ := s.Users(ctx); len(users) != 1 {
		t.Errorf("users = %+v", users)
	}
}

func TestSessionExpiry(t *testing.T) {
	s, c := newTestStore(t)
	ctx := context.Background()
	if _, err := s.AddUser(ctx, LocalActor(), "ann", Viewer, "a long password 1"); err != nil {
		t.Fatal(err)
	}
	login := func() Session {
		sess, err := s.Login(ctx, "ann", "a long password 1", "127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		return sess
	}
	// Idle: 29 min between requests keeps it, 30 min ends it.
	sess := login()
	for i := 0; i < 3; i++ {
		c.Add(29 * time.Minute)
		if _, err := s.SessionPrincipal(ctx, sess.ID); err != nil {
			t.Fatalf("session idle 29 min refused: %v", err)
		}
	}
	c.Add(30 * time.Minute)
	if _, err := s.SessionPrincipal(ctx, sess.ID); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("session idle 30 min accepted: %v", err)
	}
	// Absolute: busy for 12 h, then refused.
	sess = login()
	for elapsed := time.Duration(0); elapsed < 12*time.Hour-10*time.Minute; elapsed += 10 * time.Minute {
		c.Add(10 * time.Minute)
		if _, err := s.SessionPrincipal(ctx, sess.ID); err != nil {
			t.Fatalf("busy session refused after %s: %v", elapsed, err)
		}
	}
	c.Add(10 * time.Minute)
	if _, err := s.SessionPrincipal(ctx, sess.ID); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("session older than 12 h accepted: %v", err)
	}
	if n, err := s.PruneSessions(ctx); err != nil || n != 0 {
		t.Errorf("PruneSessions = %d, %v (expired ones are deleted when presented)", n, err)
	}
}

func TestTokens(t *testing.T) {
	s, c := newTestStore(t)
	ctx := context.Background()
	root := LocalActor()
	for name, role := range map[string]Role{"op": Operator, "view": Viewer} {
		if _, err := s.AddUser(ctx, root, name, role, "a long password 1"); err != nil {
			t.Fatal(err)
		}
	}
	op := Actor{User: "op", Role: Operator, Remote: "127.0.0.1"}
	if _, err := s.CreateToken(ctx, op, "op", "ci", Admin, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("token above its owner's role: %v", err)
	}
	if _, err := s.CreateToken(ctx, op, "view", "ci", Viewer, 0); !errors.Is(err, ErrForbidden) {
		t.Errorf("operator made a token for someone else: %v", err)
	}
	if _, err := s.CreateToken(ctx, op, "", "ci", Viewer, 400*24*time.Hour); !errors.Is(err, ErrInvalid) {
		t.Errorf("token of 400 days: %v", err)
	}
	tok, err := s.CreateToken(ctx, op, "", "ci", Operator, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok.Secret, TokenPrefix) || len(tok.Secret) != len(TokenPrefix)+43 {
		t.Fatalf("token %q has the wrong shape", tok.Secret)
	}
	p, err := s.TokenPrincipal(ctx, tok.Secret)
	if err != nil || p.User != "op" || p.Role != Operator || p.Via != "token" {
		t.Fatalf("TokenPrincipal = %+v, %v", p, err)
	}
	// Demoting the owner caps the token at once.
	if err := s.SetRole(ctx, root, "op", Viewer); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.TokenPrincipal(ctx, tok.Secret); p.Role != Viewer {
		t.Errorf("token role after its owner's demotion = %v", p.Role)
	}
	// Expiry.
	c.Add(time.Hour)
	if _, err := s.TokenPrincipal(ctx, tok.Secret); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("expired token accepted: %v", err)
	}
	// Revocation: somebody else's token looks absent; the owner's goes at once.
	tok2, err := s.CreateToken(ctx, root, "view", "reader", Viewer, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeToken(ctx, op, tok2.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("revoking another user's token: %v", err)
	}
	if err := s.RevokeToken(ctx, Actor{User: "view", Role: Viewer}, tok2.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TokenPrincipal(ctx, tok2.Secret); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("revoked token accepted: %v", err)
	}
	list, err := s.Tokens(ctx, "")
	if err != nil || len(list) != 2 || list[1].RevokedAt.IsZero() {
		t.Errorf("Tokens = %+v, %v", list, err)
	}
	if err := s.RemoveUser(ctx, root, "view"); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.Tokens(ctx, "view"); len(list) != 0 {
		t.Errorf("a removed user's tokens remain: %+v", list)
	}
}

func TestLoginRateLimit(t *testing.T) {
	s, c := newTestStore(t)
	ctx := context.Background()
	if _, err := s.AddUser(ctx, LocalActor(), "ann", Viewer, "a long password 1"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if _, err := s.Login(ctx, "ann", "wrong password!!", "192.0.2.1"); !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("attempt %d: %v", i+1, err)
		}
	}
	var rl *RateLimitError
	if _, err := s.Login(ctx, "ann", "a long password 1", "192.0.2.2"); !errors.As(err, &rl) {
		t.Fatalf("6th attempt within the burst, even right and from elsewhere: %v; want a rate limit", err)
	}
	c.Add(30 * time.Second)
	if _, err := s.Login(ctx, "ann", "a long password 1", "192.0.2.2"); err != nil {
		t.Fatalf("after the refill: %v", err)
	}
	// Per address: 20 attempts over many names, then refused.
	for i := 0; i < 20; i++ {
		s.Login(ctx, "user"+string(rune('a'+i)), "whatever password", "2001:db8::1")
	}
	if _, err := s.Login(ctx, "ann", "a long password 1", "2001:db8::ffff"); !errors.As(err, &rl) {
		t.Errorf("21st attempt from the same /64: %v", err)
	}
	events, _ := s.AuditLog(ctx, 0, 0)
	count := map[string]int{}
	for _, e := range events {
		count[e.Action]++
	}
	if count["login.fail"] != 25 || count["login.limited"] != 2 || count["login"] != 1 {
		t.Errorf("audit counts = %v", count)
	}
}

func TestLimiterMemoryIsBounded(t *testing.T) {
	l := newLimiter(LimitPolicy{Burst: 2, Refill: time.Minute}, 100)
	now := time.Unix(0, 0)
	for i := 0; i < 1000; i++ {
		l.take(string(rune(i)), now)
	}
	if l.size() > 100 {
		t.Fatalf("limiter holds %d keys; want ≤ 100", l.size())
	}
	if ok, _ := l.take("new", now); ok {
		t.Error("a full limiter of limited keys let a new key in (should fail closed)")
	}
	if ok, _ := l.take("new", now.Add(2*time.Minute)); !ok {
		t.Error("after the buckets refilled, a new key is still refused")
	}
}

func TestAuditLogPaging(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		if err := s.Audit(ctx, Actor{User: "ann", Remote: "192.0.2.9"}, "job.change", "j", true, ""); err != nil {
			t.Fatal(err)
		}
	}
	page, err := s.AuditLog(ctx, 0, 2)
	if err != nil || len(page) != 2 || page[0].ID != 5 || page[0].Remote != "192.0.2.9" {
		t.Fatalf("first page = %+v, %v", page, err)
	}
	rest, _ := s.AuditLog(ctx, page[1].ID, 10)
	if len(rest) != 3 || rest[0].ID != 3 {
		t.Fatalf("second page = %+v", rest)
	}
}

// Events older than the retention go, younger ones stay, counted on the
// store's clock.
func TestPruneAuditByAge(t *testing.T) {
	s, c := newTestStore(t)
	ctx := context.Background()
	by := Actor{User: "ann", Remote: "192.0.2.9"}
	s.Audit(ctx, by, "job.create", "old", true, "")
	c.Add(10 * 24 * time.Hour)
	s.Audit(ctx, by, "job.create", "young", true, "")
	c.Add(360 * 24 * time.Hour) // old is 370 days old, young 360
	n, err := s.PruneAudit(ctx, 365*24*time.Hour)
	if err != nil || n != 1 {
		t.Fatalf("pruned %d, %v; want 1", n, err)
	}
	events, _ := s.AuditLog(ctx, 0, 0)
	if len(events) != 1 || events[0].Target != "young" {
		t.Errorf("left %+v, want the young event alone", events)
	}
}

func TestParseSecret(t *testing.T) {
	tok, err := newSecret(TokenPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseSecret(TokenPrefix, tok); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", TokenPrefix, tok[:len(tok)-1], tok + "A", SessionPrefix + tok[len(TokenPrefix):],
		tok[:len(tok)-1] + "=", tok[:len(tok)-1] + "/"} {
		if _, err := ParseSecret(TokenPrefix, bad); err == nil {
			t.Errorf("ParseSecret accepted %q", bad)
		}
	}
}

func FuzzParseSecret(f *testing.F) {
	tok, _ := newSecret(TokenPrefix)
	for _, seed := range []string{tok, "", TokenPrefix, tok + "x", "lsat_" + strings.Repeat("_", 43), "lsat_" + strings.Repeat("\xff", 43)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hash, err := ParseSecret(TokenPrefix, s)
		if err != nil {
			return
		}
		if len(hash) != 32 || !strings.HasPrefix(s, TokenPrefix) || len(s) != len(TokenPrefix)+43 {
			t.Fatalf("ParseSecret(%q) accepted a malformed secret", s)
		}
	})
}

func FuzzValidateName(f *testing.F) {
	for _, seed := range []string{"admin", "../x", "a/b", "a.b-c_d", "", ".x", "A"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidateName("user", name) != nil {
			return
		}
		if strings.ContainsAny(name, "/\\\x00 ") || strings.HasPrefix(name, ".") || len(name) > MaxNameLen {
			t.Fatalf("ValidateName accepted %q", name)
		}
	})
}

func TestAuditSurvivesACancelledRequest(t *testing.T) {
	s, _ := newTestStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.audit(ctx, Actor{User: "ann", Remote: "192.0.2.1"}, "login.fail", "ann", false, "")
	events, err := s.AuditLog(context.Background(), 0, 0)
	if err != nil || len(events) != 1 {
		t.Fatalf("events after a cancelled request = %+v, %v", events, err)
	}
}

func TestStoreSharesACallersDatabase(t *testing.T) {
	s, _ := newTestStore(t)
	if _, err := s.db.Exec(`CREATE TABLE archive_series (id INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	shared, err := New(context.Background(), s.db, Options{Argon2: fastArgon2})
	if err != nil {
		t.Fatal(err)
	}
	if err := shared.Close(); err != nil { // does not close a database it did not open
		t.Fatal(err)
	}
	if err := s.db.Ping(); err != nil {
		t.Fatalf("New's Close closed the caller's database: %v", err)
	}
}
