package auth

import "fmt"

// MaxNameLen bounds user and token names.
const MaxNameLen = 64

// ValidateName accepts names made of lower-case letters, digits, '.', '_'
// and '-', starting with a letter or digit, so a name can never be a path
// ("..", "a/b"), hide control characters in the audit log, or look like
// another name in a different case.
func ValidateName(kind, name string) error {
	if name == "" || len(name) > MaxNameLen {
		return fmt.Errorf("%s name must have 1 to %d characters", kind, MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '.' || c == '_' || c == '-')
		if !ok {
			return fmt.Errorf("%s name %q: use a-z, 0-9, '.', '_' and '-', starting with a letter or digit", kind, name)
		}
	}
	return nil
}
