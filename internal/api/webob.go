package api

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// A web framework exception raised while routing is rendered by pecan as
// JSON ({"code", "title", "description"}) only when JSON is the client's
// best choice among text/plain, text/html and application/json (in that
// order on equal quality; ParsableErrorMiddleware turns a missing or "*/*"
// Accept into application/json). Otherwise webob renders its own page
// (WSGIHTTPException.generate_response): HTML, webob's JSON or plain text,
// which ParsableErrorMiddleware wraps in error_message like any error.

// webobFormat is how upstream renders a routing exception for accept.
type webobFormat int

const (
	pecanJSON webobFormat = iota
	webobHTML
	webobJSON
	webobPlain
)

func negotiateWebob(accept string) webobFormat {
	if accept == "" || accept == "*/*" {
		return pecanJSON
	}
	ranges, valid := parseAccept(accept)
	quality := func(offer string) float64 {
		if !valid {
			// webob takes every offer for a header it cannot parse.
			return 1
		}
		return acceptQuality(ranges, offer)
	}
	best, bestQ := "", 0.0
	for _, offer := range []string{"text/plain", "text/html", "application/json"} {
		if q := quality(offer); q > bestQ {
			best, bestQ = offer, q
		}
	}
	if best == "application/json" {
		return pecanJSON
	}
	html, json := quality("text/html"), quality("application/json")
	switch {
	case html > 0 && html >= json:
		return webobHTML
	case json > 0:
		return webobJSON
	}
	return webobPlain
}

// webobExplanations are webob's explanations of the exceptions the router
// raises with its default body template.
var webobExplanations = map[int]string{
	http.StatusBadRequest: "The server could not comply with the request since it is either malformed or otherwise incorrect.",
	http.StatusNotFound:   "The resource could not be found.",
}

// webobPage is the text webob renders for a routing exception when pecan
// does not render JSON; ok is false when pecan does, or for an exception
// the router does not raise.
func webobPage(r *http.Request, code int, title string, detail *string) (string, bool) {
	accept := r.Header.Get("Accept")
	format := negotiateWebob(accept)
	if format == pecanJSON {
		return "", false
	}
	escape := func(s string) string { return s }
	if format == webobHTML {
		escape = htmlEscape
	}
	d := ""
	if detail != nil {
		d = *detail
	}
	var body string
	switch code {
	case http.StatusMethodNotAllowed:
		body = "The method " + escape(r.Method) + " is not allowed for this resource. <br /><br />\n" + escape(d)
	case http.StatusNotAcceptable:
		body = "The resource could not be generated that was acceptable to your browser\n(content of type " +
			escape(accept) + ". <br /><br />\n" + escape(d)
	default:
		explanation, known := webobExplanations[code]
		if !known {
			return "", false
		}
		body = escape(explanation) + "<br /><br />\n" + escape(d) + "\n\n"
	}
	status := fmt.Sprintf("%d %s", code, title)
	switch format {
	case webobHTML:
		return "<html>\n <head>\n  <title>" + status + "</title>\n </head>\n <body>\n  <h1>" + status + "</h1>\n  " +
			body + "\n </body>\n</html>", true
	case webobJSON:
		b := []byte(`{"message": `)
		b = pyfmt.AppendJSONString(b, body)
		b = append(b, `, "code": `...)
		b = pyfmt.AppendJSONString(b, status)
		b = append(b, `, "title": `...)
		b = pyfmt.AppendJSONString(b, title)
		return string(append(b, '}')), true
	}
	return status + "\n\n" + stripTags(body), true
}

var (
	brTag   = regexp.MustCompile(`(?is)<br.*?>`)
	comment = regexp.MustCompile(`<!--|-->`)
	anyTag  = regexp.MustCompile(`(?s)<.*?>`)
)

// stripTags is webob's strip_tags for the plain-text page.
func stripTags(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "\r", "")
	s = brTag.ReplaceAllString(s, "\n")
	s = comment.ReplaceAllString(s, "")
	return anyTag.ReplaceAllString(s, "")
}

// htmlEscape is webob's html_escape: Python's html.escape with quotes,
// non-ASCII as character references.
func htmlEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch c {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&#x27;")
		default:
			if c >= 0x80 {
				fmt.Fprintf(&b, "&#%d;", c)
			} else {
				b.WriteRune(c)
			}
		}
	}
	return b.String()
}

// writeWebobPage answers a routing exception with webob's page when the
// client's Accept calls for one, and reports whether it did. HEAD keeps
// the JSON path, whose empty error_message upstream sends for any Accept.
func (rt *router) writeWebobPage(w http.ResponseWriter, r *http.Request, err error) bool {
	e, ok := errs.As(err)
	if !ok || r.Method == http.MethodHead {
		return false
	}
	title, detail, ok := e.Webob()
	if !ok {
		return false
	}
	page, ok := webobPage(r, e.Code, title, detail)
	if !ok {
		return false
	}
	for k, v := range e.Headers {
		w.Header().Set(k, v)
	}
	if err := WriteJSON(w, e.Code, Object{{"error_message", page}}); err != nil {
		rt.log.Error("routing error answer", "path", r.URL.Path, "error", err)
	}
	return true
}
