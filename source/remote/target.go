package remote

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/latscope/latscope/source"
)

// ExportPath is the server's export route, below the SOURCE's path.
const ExportPath = "/api/v1/export"

// selectionParams are the export parameters a SOURCE URL may carry; the
// flags --series, --from and --until fill in those it does not.
var selectionParams = []string{"series", "from", "to", "resolution"}

// Target is a server SOURCE resolved into the request to send.
type Target struct {
	// Server is scheme://host[:port][/prefix]: how errors name the server.
	Server string
	// Export is the export request: the recording of the selection.
	Export *url.URL
}

// IsServer reports whether a SOURCE names a server: an http:// or https://
// URL.
func IsServer(spec string) bool {
	scheme, _, ok := strings.Cut(spec, "://")
	return ok && (strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https"))
}

// ParseTarget reads a server SOURCE, such as https://host:7879,
// https://host/latscope (behind a proxy) or a pasted export URL with its
// series, from, to and resolution, and adds the selection of opts
// (--series, --from, --until). A selection given both in the URL and by a
// flag is refused rather than one silently winning.
func ParseTarget(spec string, opts source.Options) (Target, error) {
	u, err := url.Parse(spec)
	if err != nil {
		return Target{}, fmt.Errorf("server URL: %w", err)
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		return Target{}, fmt.Errorf("server URL %q: want http:// or https://", spec)
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return Target{}, fmt.Errorf("server URL %q: no host (want %s://HOST:PORT)", spec, scheme)
	case u.User != nil:
		return Target{}, fmt.Errorf("server URL: no user or password in the URL: give the API token with --token-file or %s", TokenEnv)
	}
	prefix := strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), ExportPath)
	server := &url.URL{Scheme: scheme, Host: u.Host, Path: prefix}
	query, err := selection(u.Query(), opts)
	if err != nil {
		return Target{}, fmt.Errorf("%s: %w", server, err)
	}
	export := *server
	export.Path = strings.TrimSuffix(prefix, "/") + ExportPath
	export.RawQuery = query.Encode()
	return Target{Server: server.String(), Export: &export}, nil
}

// selection merges the URL's selection parameters with the flags' and
// asks for the recording format.
func selection(in url.Values, opts source.Options) (url.Values, error) {
	out := url.Values{}
	for key, values := range in {
		switch {
		case key == "format":
			if f := in.Get(key); f != "lsr" && f != "latscope" {
				return nil, fmt.Errorf("format=%s: a server SOURCE is read as a recording (format=lsr); use latscope convert for other formats", f)
			}
			continue
		case !slices.Contains(selectionParams, key):
			return nil, fmt.Errorf("unknown parameter %q in the URL (known: %s)", key, strings.Join(selectionParams, ", "))
		case len(values) != 1:
			return nil, fmt.Errorf("parameter %q given %d times", key, len(values))
		}
		out.Set(key, values[0])
	}
	flags := []struct {
		param, flag, value string
	}{{"series", "--series", opts.Series}, {"from", "--from", when(opts.From)}, {"to", "--until", when(opts.To)}}
	for _, f := range flags {
		if f.value == "" {
			continue
		}
		if out.Has(f.param) {
			return nil, fmt.Errorf("%s given both in the URL (%s=) and by %s: give one", f.param, f.param, f.flag)
		}
		out.Set(f.param, f.value)
	}
	out.Set("format", "lsr")
	return out, nil
}

// when is a --from or --until instant as the server reads it exactly.
func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// errPlainToken refuses to send a token in clear over the network.
var errPlainToken = errors.New("refusing to send the API token over plain http:// to a host that is not this machine's loopback: use https:// (the server's --tls-cert and --tls-key)")

// checkTransport refuses plain http to any host but loopback: the token
// would cross the network in clear.
func (t Target) checkTransport() error {
	if t.Export.Scheme == "https" || IsLoopback(t.Export.Hostname()) {
		return nil
	}
	return fmt.Errorf("%s: %w", t.Server, errPlainToken)
}

// IsLoopback reports whether host is localhost or a loopback address.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
