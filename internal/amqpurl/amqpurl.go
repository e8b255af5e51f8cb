// Package amqpurl reads oslo.messaging's transport URLs for the AMQP
// clients of the notifier and the oslo.messaging RPC transport.
package amqpurl

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Parse turns oslo.messaging's transport URL into one AMQP URL per
// host: rabbit://user:pass@h1:5672,user:pass@h2:5672/vhost?ssl=1.
func Parse(transport string) ([]string, error) {
	scheme, rest, ok := strings.Cut(transport, "://")
	if !ok {
		return nil, fmt.Errorf("invalid transport URL %s", Mask(transport))
	}
	switch scheme {
	case "rabbit", "kombu", "amqp":
	default:
		return nil, fmt.Errorf("transport %q is not supported (rabbit only)", scheme)
	}
	hostPart, path, _ := strings.Cut(rest, "/")
	vhost, query, _ := strings.Cut(path, "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("invalid transport URL query: %w", err)
	}
	amqpScheme := "amqp"
	if ssl := strings.ToLower(q.Get("ssl")); ssl == "1" || ssl == "true" {
		amqpScheme = "amqps"
	}
	if vhost == "" {
		vhost = "/"
	}
	var out []string
	for _, h := range strings.Split(hostPart, ",") {
		user, pass, host := "guest", "guest", h
		if at := strings.LastIndex(h, "@"); at >= 0 {
			cred := h[:at]
			host = h[at+1:]
			u, p, _ := strings.Cut(cred, ":")
			if user, err = url.PathUnescape(u); err != nil {
				return nil, fmt.Errorf("invalid transport URL user: %w", err)
			}
			if pass, err = url.PathUnescape(p); err != nil {
				return nil, fmt.Errorf("invalid transport URL password: %w", err)
			}
		}
		if host == "" {
			host = "localhost"
		}
		if _, _, err := net.SplitHostPort(host); err != nil {
			host = net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(5672))
		}
		u := url.URL{Scheme: amqpScheme, User: url.UserPassword(user, pass), Host: host, Path: "/" + vhost}
		if vhost == "/" {
			u.Path = "/"
		}
		out = append(out, u.String())
	}
	return out, nil
}

// Mask hides a URL's password for messages.
func Mask(s string) string {
	if at := strings.LastIndex(s, "@"); at >= 0 {
		if i := strings.Index(s, "://"); i >= 0 && i < at {
			return s[:i+3] + "***@" + s[at+1:]
		}
	}
	return s
}
