package middleware

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"text/template"
	"time"
	"unicode/utf8"

	"github.com/openkeel/ironic/internal/config"
)

// HealthcheckConfig is [healthcheck]: whether and where the health check
// answers, its back ends and who may see it.
type HealthcheckConfig struct {
	// Enabled is [healthcheck]/enabled; the wiring may force it on (the
	// all-in-one default always answers GET /healthcheck).
	Enabled bool
	// Path is [healthcheck]/path ("/healthcheck" by default). Upstream
	// hard-codes "/healthcheck"; both match it and everything below it.
	Path string
	// Detailed adds the server's state (time, runtime, goroutine stacks)
	// and each back end's details to the JSON and HTML answers.
	Detailed bool
	// Backends are the checks run on each request, in order.
	Backends []HealthBackend
	// AllowedSourceRanges, when not empty, limits the health check to
	// clients in these networks; others reach the API as any request.
	AllowedSourceRanges []netip.Prefix
	// IgnoreProxiedRequests hands requests carrying an X-Forwarded*
	// header to the API instead of answering them.
	IgnoreProxiedRequests bool
}

// HealthResult is one back end's answer (oslo.middleware's
// HealthcheckResult).
type HealthResult struct {
	Available bool
	Reason    string
	Details   string
}

// HealthBackend is one oslo.middleware health check plugin. port is the
// port of the listener that received the request.
type HealthBackend interface {
	Check(port int) HealthResult
}

// DisableByFile is oslo.middleware's disable_by_file plugin: the service
// reports itself unavailable while Path exists.
type DisableByFile struct{ Path string }

// Check looks for the file.
func (d DisableByFile) Check(int) HealthResult {
	switch {
	case d.Path == "":
		slog.Warn("DisableByFile healthcheck middleware enabled without disable_by_file_path set")
		return HealthResult{Available: true, Reason: "OK", Details: "No 'disable_by_file_path' configuration value specified"}
	case !exists(d.Path):
		return HealthResult{Available: true, Reason: "OK", Details: fmt.Sprintf("Path '%s' was not found", d.Path)}
	default:
		return HealthResult{Reason: "DISABLED BY FILE", Details: fmt.Sprintf("Path '%s' was found", d.Path)}
	}
}

// DisableByFilesPorts is oslo.middleware's disable_by_files_ports plugin:
// a listener's port is reported unavailable while its file exists.
type DisableByFilesPorts struct{ Paths map[int]string }

// Check looks for the file of port.
func (d DisableByFilesPorts) Check(port int) HealthResult {
	p, ok := d.Paths[port]
	switch {
	case !ok || p == "":
		slog.Warn("DisableByFilesPorts healthcheck middleware enabled without disable_by_file_paths set for port", "port", port)
		return HealthResult{Available: true, Reason: "OK"}
	case !exists(p):
		return HealthResult{Available: true, Reason: "OK"}
	default:
		return HealthResult{Reason: "DISABLED BY FILE"}
	}
}

// exists is os.path.exists: any error (even permission) counts as absent.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// HealthcheckConfigFrom reads [healthcheck]. A malformed network of
// allowed_source_ranges or port:path of disable_by_file_paths is an error,
// as it stops upstream's API from starting; a back end this build does not
// have is skipped with a warning, as stevedore skips one it cannot load.
func HealthcheckConfigFrom(c *config.Config) (HealthcheckConfig, error) {
	hc := HealthcheckConfig{
		Enabled:               c.BoolOf(config.HealthcheckEnabled),
		Path:                  c.StringOf(config.HealthcheckPath),
		Detailed:              c.BoolOf(config.HealthcheckDetailed),
		IgnoreProxiedRequests: c.BoolOf(config.HealthcheckIgnoreProxiedRequests),
	}
	for _, r := range c.ListOf(config.HealthcheckAllowedSourceRanges) {
		p, err := parseNetwork(r)
		if err != nil {
			return HealthcheckConfig{}, fmt.Errorf("[healthcheck]/allowed_source_ranges: %w", err)
		}
		hc.AllowedSourceRanges = append(hc.AllowedSourceRanges, p)
	}
	for _, name := range c.ListOf(config.HealthcheckBackends) {
		switch name {
		case "disable_by_file":
			hc.Backends = append(hc.Backends, DisableByFile{Path: c.StringOf(config.HealthcheckDisableByFilePath)})
		case "disable_by_files_ports":
			paths := map[int]string{}
			for _, pp := range c.ListOf(config.HealthcheckDisableByFilePaths) {
				pp = strings.TrimSpace(pp)
				if pp == "" {
					continue
				}
				port, path, ok := strings.Cut(pp, ":")
				n, err := strconv.Atoi(strings.TrimSpace(port))
				if !ok || err != nil {
					return HealthcheckConfig{}, fmt.Errorf("[healthcheck]/disable_by_file_paths: %q is not port:path", pp)
				}
				paths[n] = path
			}
			hc.Backends = append(hc.Backends, DisableByFilesPorts{Paths: paths})
		default:
			slog.Warn("unknown [healthcheck] backend, ignored", "backend", name)
		}
	}
	return hc, nil
}

// parseNetwork is Python's ipaddress.ip_network in strict mode: an
// address alone is a one-address network, and host bits set are refused.
func parseNetwork(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q does not appear to be an IPv4 or IPv6 network", s)
		}
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q does not appear to be an IPv4 or IPv6 network", s)
	}
	if p.Masked() != p {
		return netip.Prefix{}, fmt.Errorf("%s has host bits set", s)
	}
	return p, nil
}

// healthOffers are oslo.middleware's answer types in preference order.
var healthOffers = []string{"text/plain", "text/html", "application/json"}

// proxiedHeaders are the headers ignore_proxied_requests looks for, as
// oslo.middleware spells them (HTTP_X_FORWARDED… in the WSGI environ).
var proxiedHeaders = []string{"X-Forwarded", "X-Forwarded-Proto", "X-Forwarded-Host", "X-Forwarded-For", "X-Forwarded-Prefix"}

// Healthcheck answers requests for cfg.Path (and paths below it) before
// authentication, as oslo.middleware's Healthcheck: the back ends run in
// order and any unavailable one makes the answer 503; otherwise any
// method but HEAD gets 200 (HEAD 204), with the reasons as text/plain,
// or the JSON or HTML form when Accept prefers it. Other paths, every
// path when disabled, and requests the source range or proxy filters
// skip go on to the application.
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
			if (p != path && !strings.HasPrefix(p, path+"/")) || !cfg.admits(r) {
				next.ServeHTTP(w, r)
				return
			}
			results := make([]HealthResult, 0, len(cfg.Backends))
			healthy := true
			for _, b := range cfg.Backends {
				res := b.Check(serverPort(r))
				healthy = healthy && res.Available
				results = append(results, res)
			}
			status, ctype, body := http.StatusOK, "text/plain", ""
			switch {
			case r.Method == http.MethodHead:
				status = http.StatusNoContent
			default:
				switch ctype = bestOffer(r.Header.Values("Accept"), healthOffers); ctype {
				case "application/json":
					body = cfg.jsonBody(results)
				case "text/html":
					body = cfg.htmlBody(results)
				default:
					body = textBody(results)
				}
			}
			if !healthy {
				status = http.StatusServiceUnavailable
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

// admits applies allowed_source_ranges and ignore_proxied_requests: a
// request they turn away is not a health check at all.
func (cfg HealthcheckConfig) admits(r *http.Request) bool {
	if len(cfg.AllowedSourceRanges) > 0 {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		a, err := netip.ParseAddr(host)
		if err != nil {
			return false
		}
		a = a.Unmap()
		in := false
		for _, p := range cfg.AllowedSourceRanges {
			if p.Contains(a) {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	if cfg.IgnoreProxiedRequests {
		for _, h := range proxiedHeaders {
			if r.Header.Get(h) != "" {
				return false
			}
		}
	}
	return true
}

// serverPort is WSGI's SERVER_PORT: the port of the listener that took
// the request, or the Host header's when the listener is unknown.
func serverPort(r *http.Request) int {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			return int(ap.Port())
		}
	}
	if _, port, err := net.SplitHostPort(r.Host); err == nil {
		n, _ := strconv.Atoi(port)
		return n
	}
	if r.TLS != nil {
		return 443
	}
	return 80
}

// textBody is oslo.middleware's plain template: the non-empty reasons,
// one a line.
func textBody(results []HealthResult) string {
	var lines []string
	for _, res := range results {
		if res.Reason != "" {
			lines = append(lines, res.Reason)
		}
	}
	return strings.Join(lines, "\n")
}

// resultClass is the class name oslo.middleware reports for every result.
const resultClass = "HealthcheckResult"

// serverState is what detailed mode adds. oslo.middleware reports the
// Python interpreter; here the keys stay and the values are the Go
// runtime's: its version, GOOS-GOARCH, the garbage collections run so far
// and GOGC, and one stack per goroutine (there are no green threads).
type serverState struct {
	Hostname, Now, Version, Platform string
	GCCounts, GCThreshold            []int
	Threads                          []string
}

func currentState() serverState {
	host, _ := os.Hostname()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gogc := 100
	if v, err := strconv.Atoi(os.Getenv("GOGC")); err == nil {
		gogc = v
	}
	return serverState{
		Hostname:    host,
		Now:         time.Now().UTC().Format("2006-01-02 15:04:05.000000"),
		Version:     runtime.Version(),
		Platform:    runtime.GOOS + "-" + runtime.GOARCH,
		GCCounts:    []int{int(ms.NumGC)},
		GCThreshold: []int{gogc},
		Threads:     goroutineStacks(),
	}
}

// goroutineStacks is every goroutine's stack, one entry each.
func goroutineStacks() []string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, s := range strings.Split(strings.TrimSpace(string(buf)), "\n\n") {
		out = append(out, s+"\n")
	}
	return out
}

// jsonBody is oslo.middleware's JSON answer, as json.dumps(indent=4,
// sort_keys=True) writes it.
func (cfg HealthcheckConfig) jsonBody(results []HealthResult) string {
	var body map[string]any
	if cfg.Detailed {
		st := currentState()
		reasons := make([]map[string]string, 0, len(results))
		for _, res := range results {
			reasons = append(reasons, map[string]string{"reason": res.Reason, "details": res.Details, "class": resultClass})
		}
		body = map[string]any{
			"detailed": true, "python_version": st.Version, "now": st.Now, "platform": st.Platform,
			"gc":      map[string]any{"counts": st.GCCounts, "threshold": st.GCThreshold},
			"reasons": reasons, "greenthreads": []string{}, "threads": st.Threads,
		}
	} else {
		reasons := make([]string, 0, len(results))
		for _, res := range results {
			reasons = append(reasons, res.Reason)
		}
		body = map[string]any{"detailed": false, "reasons": reasons}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "    ")
	if err := enc.Encode(body); err != nil {
		// Strings, ints and bools always encode.
		panic("healthcheck: encode answer: " + err.Error())
	}
	return asciiJSON(strings.TrimSuffix(b.String(), "\n"))
}

// asciiJSON escapes non-ASCII characters as \uXXXX, as Python's
// json.dumps does by default (ensure_ascii).
func asciiJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// healthHTMLTemplate is oslo.middleware's HTML template with its
// whitespace control, so that the page is the same byte for byte.
var healthHTMLTemplate = template.Must(template.New("healthcheck").Funcs(template.FuncMap{
	"e":     html.EscapeString,
	"tuple": pyTuple,
}).Parse(`
<HTML>
<HEAD><TITLE>Healthcheck Status</TITLE></HEAD>
<BODY>
{{if .Detailed -}}
<H1>Server status</H1>
{{if .Hostname -}}
<B>Server hostname:</B><PRE>{{e .Hostname}}</PRE>
{{- end}}
<B>Current time:</B><PRE>{{e .Now}}</PRE>
<B>Python version:</B><PRE>{{e .Version}}</PRE>
<B>Platform:</B><PRE>{{e .Platform}}</PRE>
<HR></HR>
<H2>Garbage collector:</H2>
<B>Counts:</B><PRE>{{e (tuple .GCCounts)}}</PRE>
<B>Thresholds:</B><PRE>{{e (tuple .GCThreshold)}}</PRE>
<HR></HR>
{{- end}}
<H2>Result of {{len .Results}} checks:</H2>
<TABLE bgcolor="#ffffff" border="1">
<TBODY>
<TR>
{{if .Detailed -}}
<TH>
Kind
</TH>
<TH>
Reason
</TH>
<TH>
Details
</TH>
{{else}}
<TH>
Reason
</TH>
{{- end}}
</TR>
{{range .Results -}}
{{if .Reason -}}
<TR>
{{if $.Detailed -}}
    <TD>{{e $.Class}}</TD>
{{- end}}
    <TD>{{e .Reason}}</TD>
{{if $.Detailed -}}
    <TD>{{e .Details}}</TD>
{{- end}}
</TR>
{{- end}}
{{- end}}
</TBODY>
</TABLE>
<HR></HR>
{{if .Detailed -}}
{{if .Threads -}}
<H2>{{len .Threads}} greenthread(s) active:</H2>
<TABLE bgcolor="#ffffff" border="1">
<TBODY>
{{range .Threads -}}
<TR>
    <TD><PRE>{{e .}}</PRE></TD>
</TR>
{{- end}}
</TBODY>
</TABLE>
<HR></HR>
{{- end}}
{{if .Threads -}}
<H2>{{len .Threads}} thread(s) active:</H2>
<TABLE bgcolor="#ffffff" border="1">
<TBODY>
{{range .Threads -}}
<TR>
    <TD><PRE>{{e .}}</PRE></TD>
</TR>
{{- end}}
</TBODY>
</TABLE>
{{- end}}
{{- end}}
</BODY>
</HTML>
`))

// pyTuple writes ints as Python's repr of a tuple.
func pyTuple(v []int) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = strconv.Itoa(n)
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

type healthPage struct {
	serverState
	Detailed bool
	Class    string
	Results  []HealthResult
}

// htmlBody renders the HTML answer. oslo.middleware hands its HTML
// template the thread stacks as green threads too, so a detailed page
// lists the stacks twice; the page keeps that shape.
func (cfg HealthcheckConfig) htmlBody(results []HealthResult) string {
	page := healthPage{Detailed: cfg.Detailed, Class: resultClass, Results: results}
	if cfg.Detailed {
		page.serverState = currentState()
	}
	return renderHealthHTML(page)
}

func renderHealthHTML(page healthPage) string {
	var b strings.Builder
	if err := healthHTMLTemplate.Execute(&b, page); err != nil {
		// The template and its data are fixed; a failure is a bug here.
		panic("healthcheck: render page: " + err.Error())
	}
	return strings.TrimSpace(b.String())
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
