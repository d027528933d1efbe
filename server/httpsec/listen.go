package httpsec

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// DefaultAddr is where latscope serve listens unless told otherwise: this
// machine only.
const DefaultAddr = "127.0.0.1:7879"

// ListenConfig is how the server is reached.
type ListenConfig struct {
	Addr                string // host:port; DefaultAddr when empty
	TLSCert, TLSKey     string // PEM files; both or neither
	AllowInsecureRemote bool   // serve plain HTTP on a non-loopback address anyway
}

// Check applies the listen policy: a loopback address may serve plain HTTP;
// any other needs TLS, or AllowInsecureRemote, which then yields a warning
// to print on every start.
func (c ListenConfig) Check() (warning string, err error) {
	addr := c.address()
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("listen address %q: %w", addr, err)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return "", errors.New("--tls-cert and --tls-key go together")
	}
	if c.TLSCert != "" || IsLoopback(host) {
		return "", nil
	}
	if !c.AllowInsecureRemote {
		return "", fmt.Errorf("listen address %s is reachable from other machines: give --tls-cert and --tls-key, "+
			"or accept plain HTTP (passwords and tokens readable on the network) with --insecure-listen", addr)
	}
	return fmt.Sprintf("WARNING: serving plain HTTP on %s: passwords, tokens and session cookies cross the network unencrypted", addr), nil
}

func (c ListenConfig) address() string {
	if c.Addr == "" {
		return DefaultAddr
	}
	return c.Addr
}

// IsLoopback reports whether a listen host reaches this machine only.
// Names other than localhost are not resolved: they count as remote.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.Unmap().IsLoopback()
}

// TLSConfig loads a certificate and key with modern defaults: TLS 1.2 at
// least, and for 1.2 only forward-secret AEAD suites (1.3 chooses its own).
func TLSConfig(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate %s, key %s: %w", certFile, keyFile, err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		CipherSuites: []uint16{
			tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305,
		},
		NextProtos: []string{"h2", "http/1.1"},
	}, nil
}

// Timeouts bound how long a client may hold a connection. There is no
// server-wide write timeout: routes set their own, so that event streams
// can run for hours while every other response is cut at its deadline.
type Timeouts struct {
	ReadHeader time.Duration // request line and headers: cuts slow-header (slowloris) clients
	Read       time.Duration // the whole request, body included
	Idle       time.Duration // between requests on a kept-alive connection
}

// DefaultTimeouts: 10 s for headers, 60 s for a request, 120 s idle.
func DefaultTimeouts() Timeouts {
	return Timeouts{ReadHeader: 10 * time.Second, Read: 60 * time.Second, Idle: 120 * time.Second}
}

// MaxHeaderBytes bounds request headers (the default is 1 MiB).
const MaxHeaderBytes = 32 << 10

// NewServer returns an http.Server with the timeouts, header limit and TLS
// settings above; tlsConfig is nil for plain HTTP.
func NewServer(h http.Handler, t Timeouts, tlsConfig *tls.Config, logger *slog.Logger) *http.Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    MaxHeaderBytes,
		TLSConfig:         tlsConfig,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// Listen applies the listen policy, logs its warning if any, loads TLS and
// opens the listener (wrapped in TLS when configured).
func Listen(c ListenConfig, logger *slog.Logger) (net.Listener, *tls.Config, error) {
	warning, err := c.Check()
	if err != nil {
		return nil, nil, err
	}
	if warning != "" && logger != nil {
		logger.Warn(warning)
	}
	var tlsConfig *tls.Config
	if c.TLSCert != "" {
		if tlsConfig, err = TLSConfig(c.TLSCert, c.TLSKey); err != nil {
			return nil, nil, err
		}
	}
	ln, err := net.Listen("tcp", c.address())
	if err != nil {
		return nil, nil, fmt.Errorf("listen on %s: %w", c.address(), err)
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	return ln, tlsConfig, nil
}
