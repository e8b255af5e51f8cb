package sqldb

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Dialect names the SQL backend behind a connection.
type Dialect string

// The two backends upstream Ironic supports and we keep supporting.
const (
	SQLite Dialect = "sqlite"
	MySQL  Dialect = "mysql"
)

// SQLite connection settings. busy_timeout makes a writer wait for the
// single write lock instead of failing; immediate transactions take that lock
// at BEGIN so a read-then-write transaction can never fail to upgrade.
// foreign_keys is on because upstream configures oslo.db with sqlite_fk=True
// ("sqlite as close to a real database as possible").
const sqliteBusyTimeout = 10 * time.Second

// busyTimeoutPragma is the _pragma value that sets SQLite's busy timeout.
func busyTimeoutPragma(d time.Duration) string {
	return fmt.Sprintf("busy_timeout(%d)", d.Milliseconds())
}

// connection is a parsed oslo.db URL.
type connection struct {
	dialect Dialect
	dsn     string
	// memory is true for an in-memory SQLite database, which lives only as
	// long as one connection holds it.
	memory bool
	mysql  *mysql.Config
	tls    *tlsOptions
}

// ParseConnection maps an oslo.db connection URL ([database]/connection, as
// upstream ironic.conf writes it) to a Dialect and a DSN for the Go driver:
// go-sql-driver/mysql for mysql://, mysql+pymysql:// and mysql+mysqldb://,
// modernc.org/sqlite for sqlite://. Errors never repeat the password.
func ParseConnection(rawURL string) (Dialect, string, error) {
	c, err := parseConnection(rawURL)
	if err != nil {
		return "", "", err
	}
	return c.dialect, c.dsn, nil
}

func parseConnection(rawURL string) (*connection, error) {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return nil, fmt.Errorf("database connection %q: not a URL (want e.g. mysql+pymysql://user:pass@host/ironic or sqlite:///path)", redact(rawURL))
	}
	backend, _, _ := strings.Cut(strings.ToLower(scheme), "+")
	switch backend {
	case "sqlite":
		return parseSQLite(rawURL, rest)
	case "mysql", "mariadb":
		c, err := parseMySQL(rawURL)
		if err != nil {
			return nil, fmt.Errorf("database connection %q: %w", redact(rawURL), err)
		}
		return c, nil
	default:
		return nil, fmt.Errorf("database connection %q: unsupported backend %q (want mysql or sqlite)", redact(rawURL), scheme)
	}
}

// parseSQLite follows SQLAlchemy: sqlite:// and sqlite:///:memory: are
// in-memory; sqlite:///rel/path is relative and sqlite:////abs/path absolute.
func parseSQLite(rawURL, rest string) (*connection, error) {
	path, query, _ := strings.Cut(rest, "?")
	if path != "" && !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("database connection %q: sqlite URLs have no host: use sqlite:///relative/path or sqlite:////absolute/path", redact(rawURL))
	}
	path = strings.TrimPrefix(path, "/")
	if query != "" {
		if _, err := url.ParseQuery(query); err != nil {
			return nil, fmt.Errorf("database connection %q: %w", redact(rawURL), err)
		}
	}
	params := url.Values{}
	params.Add("_pragma", busyTimeoutPragma(sqliteBusyTimeout))
	params.Add("_pragma", "foreign_keys(1)")
	params.Set("_txlock", "immediate")
	if path == "" || path == ":memory:" {
		// The memdb VFS shares one database among all pooled connections
		// (a name starting with '/' makes it shared) with normal file
		// locking, so busy_timeout and immediate transactions behave as on
		// a file; shared-cache mode would fail fast with SQLITE_LOCKED.
		// A random name: two Opens of "sqlite://" never share data.
		name := "/openkeel-memory-" + rand.Text()
		params.Set("vfs", "memdb")
		return &connection{dialect: SQLite, memory: true, dsn: "file:" + name + "?" + params.Encode()}, nil
	}
	// WAL lets readers proceed while one writer commits; it is a property of
	// the database file, so setting it on every connection is harmless.
	params.Add("_pragma", "journal_mode(WAL)")
	params.Add("_pragma", "synchronous(NORMAL)")
	return &connection{dialect: SQLite, dsn: "file:" + sqliteURIEscaper.Replace(path) + "?" + params.Encode()}, nil
}

// sqliteURIEscaper protects the characters SQLite's URI filenames give a
// meaning to, so any file name opens as itself.
var sqliteURIEscaper = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

// parseMySQL builds a go-sql-driver config. The connection always uses
// utf8mb4 (upstream asks for charset=utf8 but its tables are utf8mb4), the
// UTC time zone (upstream stores naive UTC DATETIMEs) and TRADITIONAL sql_mode
// (oslo.db's default [database]/mysql_sql_mode). Found-rows is on, as
// SQLAlchemy sets it, so an UPDATE reports matched rows on both backends.
func parseMySQL(rawURL string) (*connection, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, err
	}
	cfg := mysql.NewConfig()
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	if cfg.DBName == "" || strings.Contains(cfg.DBName, "/") {
		return nil, errors.New("the URL must name one database, e.g. mysql+pymysql://user:pass@host/ironic")
	}
	q := u.Query()
	if sock := q.Get("unix_socket"); sock != "" {
		cfg.Net = "unix"
		cfg.Addr = sock
	} else {
		host := u.Hostname()
		if host == "" {
			host = "localhost"
		}
		port := u.Port()
		if port == "" {
			port = "3306"
		} else if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return nil, fmt.Errorf("bad port %q", port)
		}
		cfg.Net = "tcp"
		cfg.Addr = net.JoinHostPort(host, port)
	}
	for key, durField := range map[string]*time.Duration{
		"connect_timeout": &cfg.Timeout,
		"read_timeout":    &cfg.ReadTimeout,
		"write_timeout":   &cfg.WriteTimeout,
	} {
		if v := q.Get(key); v != "" {
			secs, err := strconv.ParseFloat(v, 64)
			if err != nil || secs < 0 {
				return nil, fmt.Errorf("bad %s %q (want seconds)", key, v)
			}
			*durField = time.Duration(secs * float64(time.Second))
		}
	}
	tlsOpts, err := parseTLSOptions(q)
	if err != nil {
		return nil, err
	}
	if tlsOpts != nil {
		// The DSN string can only say "verified TLS"; Open builds the real
		// configuration from the files named in the URL.
		cfg.TLSConfig = "true"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.Collation = "utf8mb4_unicode_ci"
	cfg.ClientFoundRows = true
	cfg.RejectReadOnly = true
	// Arguments are escaped client-side into the text (safe for utf8mb4;
	// the driver refuses it for multi-byte collations where it is not, and
	// follows NO_BACKSLASH_ESCAPES), saving the prepare and close round
	// trips of a server-side statement per query.
	cfg.InterpolateParams = true
	cfg.Params = map[string]string{
		"time_zone": "'+00:00'",
		"sql_mode":  "'TRADITIONAL'",
	}
	return &connection{dialect: MySQL, dsn: cfg.FormatDSN(), mysql: cfg, tls: tlsOpts}, nil
}

// redact returns the URL with its password replaced, for error messages and
// logs. Whatever does not parse as scheme://… is cut at the last '@'.
func redact(rawURL string) string {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		if i := strings.LastIndex(rawURL, "@"); i >= 0 {
			return "***" + rawURL[i:]
		}
		return rawURL
	}
	if u, err := url.Parse(rawURL); err == nil {
		if u.User != nil {
			if _, has := u.User.Password(); has {
				u.User = url.UserPassword(u.User.Username(), "***")
			}
		}
		return u.String()
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		return scheme + "://***" + rest[i:]
	}
	return rawURL
}

// Redact returns a connection URL with its password masked, for logging.
func Redact(rawURL string) string { return redact(rawURL) }
