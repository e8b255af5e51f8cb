package sqldb

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

func TestParseConnectionMySQL(t *testing.T) {
	cases := []struct {
		name, url                 string
		user, pass, net, addr, db string
		timeout, readTimeout      time.Duration
	}{
		{name: "pymysql with port and charset", url: "mysql+pymysql://ironic:secret@db.example.org:3307/ironic?charset=utf8",
			user: "ironic", pass: "secret", net: "tcp", addr: "db.example.org:3307", db: "ironic", timeout: 10 * time.Second},
		{name: "plain mysql, default port", url: "mysql://ironic:secret@10.0.0.5/ironic",
			user: "ironic", pass: "secret", net: "tcp", addr: "10.0.0.5:3306", db: "ironic", timeout: 10 * time.Second},
		{name: "mysqldb driver", url: "mysql+mysqldb://root@127.0.0.1/ironic",
			user: "root", net: "tcp", addr: "127.0.0.1:3306", db: "ironic", timeout: 10 * time.Second},
		{name: "percent-encoded password", url: "mysql+pymysql://ironic:p%40ss%3Aw%2Frd%25@db:3306/ironic?charset=utf8",
			user: "ironic", pass: "p@ss:w/rd%", net: "tcp", addr: "db:3306", db: "ironic", timeout: 10 * time.Second},
		{name: "unix socket", url: "mysql+pymysql://ironic:secret@/ironic?unix_socket=/var/run/mysqld/mysqld.sock&charset=utf8",
			user: "ironic", pass: "secret", net: "unix", addr: "/var/run/mysqld/mysqld.sock", db: "ironic", timeout: 10 * time.Second},
		{name: "IPv6 host", url: "mysql+pymysql://ironic:secret@[fd00::5]:3306/ironic",
			user: "ironic", pass: "secret", net: "tcp", addr: "[fd00::5]:3306", db: "ironic", timeout: 10 * time.Second},
		{name: "devstack plugin parameter ignored, timeouts honoured", url: "mysql+pymysql://root:pw@127.0.0.1/ironic?charset=utf8&plugin=dbcounter&connect_timeout=3&read_timeout=2.5",
			user: "root", pass: "pw", net: "tcp", addr: "127.0.0.1:3306", db: "ironic", timeout: 3 * time.Second, readTimeout: 2500 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, dsn, err := ParseConnection(tc.url)
			if err != nil {
				t.Fatalf("ParseConnection: %v", err)
			}
			if d != MySQL {
				t.Fatalf("dialect = %q, want mysql", d)
			}
			cfg, err := mysql.ParseDSN(dsn)
			if err != nil {
				t.Fatalf("DSN %q does not parse: %v", dsn, err)
			}
			if cfg.User != tc.user || cfg.Passwd != tc.pass || cfg.Net != tc.net || cfg.Addr != tc.addr || cfg.DBName != tc.db {
				t.Errorf("got user=%q pass=%q net=%q addr=%q db=%q; want %q %q %q %q %q",
					cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName, tc.user, tc.pass, tc.net, tc.addr, tc.db)
			}
			if cfg.Timeout != tc.timeout || cfg.ReadTimeout != tc.readTimeout {
				t.Errorf("timeouts = %v/%v, want %v/%v", cfg.Timeout, cfg.ReadTimeout, tc.timeout, tc.readTimeout)
			}
			if !cfg.ParseTime || cfg.Loc != time.UTC || !cfg.ClientFoundRows || cfg.Collation != "utf8mb4_unicode_ci" {
				t.Errorf("parseTime=%v loc=%v foundRows=%v collation=%q; want true UTC true utf8mb4_unicode_ci",
					cfg.ParseTime, cfg.Loc, cfg.ClientFoundRows, cfg.Collation)
			}
			if cfg.Params["time_zone"] != "'+00:00'" || cfg.Params["sql_mode"] != "'TRADITIONAL'" {
				t.Errorf("session params = %v", cfg.Params)
			}
		})
	}
}

func TestParseConnectionSQLite(t *testing.T) {
	cases := []struct {
		name, url, path string
		memory          bool
	}{
		{name: "relative", url: "sqlite:///ironic.sqlite", path: "ironic.sqlite"},
		{name: "relative with folder", url: "sqlite:///var/ironic.db", path: "var/ironic.db"},
		{name: "absolute", url: "sqlite:////var/lib/ironic/ironic.sqlite", path: "/var/lib/ironic/ironic.sqlite"},
		{name: "in memory", url: "sqlite://", memory: true},
		{name: "in memory, explicit", url: "sqlite:///:memory:", memory: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseConnection(tc.url)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if c.dialect != SQLite || c.memory != tc.memory {
				t.Fatalf("dialect=%q memory=%v, want sqlite %v", c.dialect, c.memory, tc.memory)
			}
			path, query, _ := strings.Cut(strings.TrimPrefix(c.dsn, "file:"), "?")
			q, err := url.ParseQuery(query)
			if err != nil {
				t.Fatalf("DSN %q: %v", c.dsn, err)
			}
			wantPragmas := []string{"busy_timeout(10000)", "foreign_keys(1)"}
			if tc.memory {
				if !strings.HasPrefix(path, "/openkeel-memory-") || q.Get("vfs") != "memdb" {
					t.Errorf("in-memory DSN %q: want a shared memdb name", c.dsn)
				}
			} else {
				if path != tc.path {
					t.Errorf("path = %q, want %q", path, tc.path)
				}
				wantPragmas = append(wantPragmas, "journal_mode(WAL)")
			}
			got := strings.Join(q["_pragma"], " ")
			for _, p := range wantPragmas {
				if !strings.Contains(got, p) {
					t.Errorf("pragmas %q lack %s", got, p)
				}
			}
			if q.Get("_txlock") != "immediate" {
				t.Errorf("_txlock = %q, want immediate", q.Get("_txlock"))
			}
		})
	}
	a, _ := parseConnection("sqlite://")
	b, _ := parseConnection("sqlite://")
	if a.dsn == b.dsn {
		t.Errorf("two in-memory databases share the DSN %q", a.dsn)
	}
}

func TestParseConnectionErrorsHidePassword(t *testing.T) {
	cases := []struct{ name, url, want string }{
		{"unknown backend", "postgresql://u:hunter2@db/ironic", "unsupported backend"},
		{"no database", "mysql+pymysql://u:hunter2@db/", "must name one database"},
		{"bad port", "mysql+pymysql://u:hunter2@db:99999/ironic", "port"},
		{"unsupported TLS option", "mysql+pymysql://u:hunter2@db/ironic?ssl_cipher=AES128", "TLS"},
		{"sqlite with host", "sqlite://host/ironic.db", "no host"},
		{"not a URL", "u:hunter2@db/ironic", "not a URL"},
		{"bad escape", "mysql+pymysql://u:hunter2%zz@db/ironic", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ParseConnection(tc.url)
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error reveals the password: %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}
