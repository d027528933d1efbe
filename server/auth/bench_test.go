package auth

import "testing"

// BenchmarkHashPasswordDefault measures one login's cost with the default
// argon2id parameters (docs/security.md quotes it).
func BenchmarkHashPasswordDefault(b *testing.B) {
	p := DefaultArgon2()
	for b.Loop() {
		if _, err := HashPassword("correct horse battery", p); err != nil {
			b.Fatal(err)
		}
	}
}
