package middleware

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/config"
)

// HealthcheckConfig says whether and where the health check answers.
type HealthcheckConfig struct {
	// Enabled is [healthcheck]/enabled; the wiring may force it on (the
	// all-in-one default always answers GET /healthcheck).
	Enabled bool
	// Path is [healthcheck]/path ("/healthcheck" by default). Upstream
	// hard-codes "/healthcheck"; both match it and everything below it.
	Path string
}

// HealthcheckConfigFrom reads [healthcheck].
func HealthcheckConfigFrom(c *config.Config) HealthcheckConfig {
	return HealthcheckConfig{Enabled: c.BoolOf(config.HealthcheckEnabled), Path: c.StringOf(config.HealthcheckPath)}
}

// healthOffers are oslo.middleware's answer types in preference order.
var healthOffers = []string{"text/plain", "text/html", "application/json"}

// healthHTML is oslo.middleware's HTML page for zero checks, not detailed.
const healthHTML = "<HTML>\n<HEAD><TITLE>Healthcheck Status</TITLE></HEAD>\n<BODY>\n\n" +
	"<H2>Result of 0 checks:</H2>\n<TABLE bgcolor=\"#ffffff\" border=\"1\">\n<TBODY>\n<TR>\n\n" +
	"<TH>\nReason\n</TH>\n</TR>\n\n</TBODY>\n</TABLE>\n<HR></HR>\n\n</BODY>\n</HTML>"

// Healthcheck answers requests for cfg.Path (and paths below it) before
// authentication, as oslo.middleware's Healthcheck without backends: any
// method but HEAD gets 200 with an empty text/plain body (or the JSON or
// HTML form when Accept prefers it), HEAD gets 204. Other paths, and every
// path when disabled, go on to the application.
func Healthcheck(cfg HealthcheckConfig) Middleware {
	path := cfg.Path
	if path == "" {
		path = "/healthcheck"
	}
	return func(next http.Handler) http.Handler {
		if !cfg.Enabled {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p := r.URL.Path
			if p == "" {
				p = "/"
			}
			if p != path && !strings.HasPrefix(p, path+"/") {
				next.ServeHTTP(w, r)
				return
			}
			status, ctype, body := http.StatusOK, "text/plain", ""
			if r.Method == http.MethodHead {
				status = http.StatusNoContent
			} else {
				switch ctype = bestOffer(r.Header.Values("Accept"), healthOffers); ctype {
				case "application/json":
					body = "{\n    \"detailed\": false,\n    \"reasons\": []\n}"
				case "text/html":
					body = healthHTML
				}
			}
			w.Header().Set("Content-Type", ctype+"; charset=UTF-8")
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(status)
			if r.Method != http.MethodHead {
				_, _ = w.Write([]byte(body))
			}
		})
	}
}

// bestOffer picks among offers (in preference order) the one the Accept
// header ranks highest, as webob's acceptable_offers()[0]: a specific
// media range beats a type/* one, which beats */*; q=0 refuses; ties go to
// the earlier offer. No Accept header accepts everything; nothing
// acceptable falls back to offers[0].
func bestOffer(accept []string, offers []string) string {
	if len(accept) == 0 {
		return offers[0]
	}
	best, bestQ := "", 0.0
	for _, offer := range offers {
		q := acceptQuality(strings.Join(accept, ","), offer)
		if q > bestQ {
			best, bestQ = offer, q
		}
	}
	if best == "" {
		return offers[0]
	}
	return best
}

func acceptQuality(accept, offer string) float64 {
	otype, osub, _ := strings.Cut(offer, "/")
	q, spec := 0.0, -1
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		t, sub, _ := strings.Cut(mt, "/")
		s := -1
		switch {
		case t == otype && sub == osub:
			s = 2
		case t == otype && sub == "*":
			s = 1
		case t == "*" && sub == "*":
			s = 0
		}
		if s < 0 || s < spec {
			continue
		}
		pq := 1.0
		if v, ok := params["q"]; ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > 1 {
				continue
			}
			pq = f
		}
		if s > spec {
			spec, q = s, pq
		} else if pq > q {
			q = pq
		}
	}
	return q
}
