package mysql

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// DefaultPort is the MySQL/MariaDB port used when the URI gives none.
const DefaultPort = "3306"

// target is a parsed "mysql://user[:password]@host[:port][/db]" URI.
type target struct {
	scheme   string
	user     string
	password string
	hasPass  bool
	host     string
	port     string
	db       string
}

// parseURI reads the URI the Opener split at its first colon: scheme
// "mysql" (or "mariadb") and arg "//user@host:port/db".
func parseURI(scheme, arg string) (target, error) {
	if !strings.HasPrefix(arg, "//") {
		return target{}, fmt.Errorf("%s source %q: want %s://user@host:port/", scheme, redact(scheme, arg), scheme)
	}
	u, err := url.Parse(scheme + ":" + arg)
	if err != nil {
		return target{}, fmt.Errorf("%s source %s: bad URI (%v)", scheme, redact(scheme, arg), errors.Unwrap(err))
	}
	t := target{scheme: scheme, host: u.Hostname(), port: u.Port(), db: strings.Trim(u.Path, "/")}
	if u.User != nil {
		t.user = u.User.Username()
		t.password, t.hasPass = u.User.Password()
	}
	if t.host == "" {
		t.host = "127.0.0.1"
	}
	if t.port == "" {
		t.port = DefaultPort
	}
	if t.user == "" {
		return target{}, fmt.Errorf("%s source %s: no user name (want %s://user@host:port/)", scheme, redact(scheme, arg), scheme)
	}
	if strings.Contains(t.db, "/") {
		return target{}, fmt.Errorf("%s source %s: the path must be a database name", scheme, redact(scheme, arg))
	}
	return t, nil
}

// redact returns the URI with any password replaced by "xxxxx", for
// messages (it never fails: unparsable URIs lose everything before '@').
func redact(scheme, arg string) string {
	u, err := url.Parse(scheme + ":" + arg)
	if err == nil {
		return u.Redacted()
	}
	if i := strings.LastIndex(arg, "@"); i >= 0 {
		return scheme + "://xxxxx" + arg[i:]
	}
	return scheme + ":" + arg
}

// String is the URI without password, the source's name.
func (t target) String() string {
	u := url.URL{Scheme: t.scheme, User: url.User(t.user), Host: net.JoinHostPort(t.host, t.port), Path: "/" + t.db}
	return u.String()
}

// resolvePassword fills the password from the environment (MYSQL_PWD) or
// the password file (first line) when the URI has none.
func (t *target) resolvePassword(passwordFile string) error {
	if t.hasPass {
		return nil
	}
	if p, ok := os.LookupEnv("MYSQL_PWD"); ok {
		t.password, t.hasPass = p, true
		return nil
	}
	if passwordFile == "" {
		return nil
	}
	b, err := os.ReadFile(passwordFile)
	if err != nil {
		return fmt.Errorf("%s: reading the password file: %w", t, err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	t.password, t.hasPass = strings.TrimRight(line, "\r"), true
	return nil
}

// quietLogger drops the driver's own log lines ("closing bad idle
// connection"): lost connections are reported as gaps instead.
type quietLogger struct{}

func (quietLogger) Print(...any) {}

// config returns the driver configuration.
func (t target) config() *mysql.Config {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = t.user, t.password, "tcp", net.JoinHostPort(t.host, t.port), t.db
	c.Logger = quietLogger{}
	return c
}
