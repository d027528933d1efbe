// Package remote reads a running `latscope serve` as a SOURCE:
// `latscope report|heatmap|record|convert https://HOST:7879 --from -1h
// --series 'db01*' --token-file F`. It fetches the server's export route
// in latscope's recording format and replays it with the recording
// reader, so every view works on the server's archive as on a local one.
package remote

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/recording"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// TokenEnv is the environment variable holding the API token when no
// --token-file is given.
const TokenEnv = "LATSCOPE_TOKEN"

// Store is a server as a source.Store: a URL rather than a path.
func Store() source.Store {
	return source.Store{
		Name: "server",
		Description: "a running latscope serve's archive, over its REST API: selected with --from, --until and --series, " +
			"the API token from --token-file or " + TokenEnv + " (never printed), TLS checked against the system's roots and --ca-file",
		Detection: "an http:// or https:// URL (plain http only to loopback)",
		Example:   "latscope report https://latscope.example:7879 --series 'db01*' --from -1h --token-file ~/.latscope-token",
		Match:     IsServer,
		Open:      open,
	}
}

// serverSource reads one export of a server.
type serverSource struct {
	target Target
	token  string
	client *http.Client
	events []string
	diag   *input.Diagnostics
}

// open checks everything that needs no connection: the URL, the token
// and the TLS settings, so that mistakes are told before any request.
func open(spec string, opts source.Options, diag *input.Diagnostics) (source.Source, error) {
	if opts.Follow {
		return nil, fmt.Errorf("%s: --follow does not apply to a server (read a window with --from and --until)", spec)
	}
	t, err := ParseTarget(spec, opts)
	if err != nil {
		return nil, err
	}
	if err := t.checkTransport(); err != nil {
		return nil, err
	}
	warn := opts.Progress
	if warn == nil {
		warn = io.Discard
	}
	token, err := readToken(opts.Server.TokenFile, os.Getenv(TokenEnv), warn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Server, err)
	}
	client, err := NewClient(opts.Server, warn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Server, err)
	}
	return &serverSource{target: t, token: token, client: client, events: opts.Events, diag: diag}, nil
}

func (s *serverSource) Name() string { return s.target.Server }

// Run fetches the export and replays it.
func (s *serverSource) Run(ctx context.Context, emit func(stream.Interval) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.target.Export.String(), nil)
	if err != nil {
		return fmt.Errorf("%s: %w", s.target.Server, err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Accept", "application/octet-stream")
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is said once, first
		}
		return fmt.Errorf("%s: cannot reach the server: %w", s.target.Server, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s.refused(resp)
	}
	body := &bodyReader{r: resp.Body}
	replay, err := recording.OpenReplay(s.target.Server, body, s.diag, recording.ReplayOptions{Events: s.events})
	if err == nil {
		err = replay.Run(ctx, emit)
	}
	if body.err != nil {
		return fmt.Errorf("%s: the export was cut: %w", s.target.Server, body.err)
	}
	return err
}

// refused turns an error answer into a message naming the server, the
// status and what the server said.
func (s *serverSource) refused(resp *http.Response) error {
	var answer struct {
		Error string `json:"error"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	said := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &answer) == nil && answer.Error != "" {
		said = answer.Error
	}
	status := resp.Status
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return fmt.Errorf("%s: token refused (%s): check --token-file or %s; expired and revoked tokens are refused too", s.target.Server, status, TokenEnv)
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return fmt.Errorf("%s: %s to %s: the token is not sent on; give that address", s.target.Server, status, resp.Header.Get("Location"))
	}
	if said == "" {
		return fmt.Errorf("%s: %s", s.target.Server, status)
	}
	return fmt.Errorf("%s: %s: %s", s.target.Server, status, said)
}

// bodyReader remembers a transport error of the body, which the recording
// reader would report as damage: a cut export is a failure, not a
// recording that ends early.
type bodyReader struct {
	r   io.Reader
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		b.err = err
	}
	return n, err
}

// ReadTokenFile reads a bearer token from the first line of file, with
// the checks of readToken: other sources that send a token (a
// Prometheus-compatible store) read theirs the same way.
func ReadTokenFile(file string, warn io.Writer) (string, error) { return readToken(file, "", warn) }

// readToken reads the API token from file (its first line), else takes
// env's value. A file that group or others may read is warned about, as
// ssh warns of an open key, but read: secrets mounted by orchestrators are
// often 0644, and refusing would push tokens onto command lines instead.
func readToken(file, env string, warn io.Writer) (string, error) {
	if file == "" {
		if env == "" {
			return "", fmt.Errorf("no API token: give --token-file FILE or set %s (create one with POST /api/v1/tokens)", TokenEnv)
		}
		return checkToken(env, TokenEnv)
	}
	st, err := os.Stat(file)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	if mode := st.Mode().Perm(); mode&0o077 != 0 {
		fmt.Fprintf(warn, "latscope: warning: the token file %s can be read by group or others (mode %04o): chmod 600 %s\n", file, mode, file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return checkToken(strings.TrimSpace(line), file)
}

// checkToken refuses an empty token or one that cannot be a header value,
// without ever showing it.
func checkToken(token, from string) (string, error) {
	if token == "" {
		return "", fmt.Errorf("%s: no token on its first line", from)
	}
	for _, r := range token {
		if r <= ' ' || r == 0x7f {
			return "", fmt.Errorf("%s: the token holds spaces or control characters", from)
		}
	}
	return token, nil
}

// NewClient is an HTTP client that checks certificates against the
// system's roots plus --ca-file (or not at all, warned) and follows no
// redirect, so that the token goes nowhere but the server named.
func NewClient(o source.ServerOptions, warn io.Writer) (*http.Client, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--ca-file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca-file %s: no PEM certificate in it", o.CAFile)
		}
		cfg.RootCAs = pool
	}
	if o.InsecureSkipVerify {
		fmt.Fprintln(warn, "latscope: warning: --insecure-skip-verify: the server's certificate is not checked; anyone on the path can read the token")
		cfg.InsecureSkipVerify = true
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = cfg
	return &http.Client{
		Transport:     transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}
