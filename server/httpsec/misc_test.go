package httpsec

import (
	"errors"
	"net/url"
	"testing"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
