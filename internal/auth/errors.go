package auth

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/pyfmt"
)

// Error is an authentication failure carrying the exact response upstream's
// middleware gives. It is both an error and the http.Handler that writes
// that response.
type Error struct {
	Status int
	// Header holds the response headers (Content-Type, WWW-Authenticate).
	Header http.Header
	// Body is the response body when it does not depend on the request.
	Body []byte
	// Message is the error's text (also the message in the body).
	Message string
	// render builds the body from the request (content negotiation);
	// nil means Body as is.
	render func(r *http.Request) (contentType string, body []byte)
	// cause is the underlying failure (for logs; never a token).
	cause error
}

func (e *Error) Error() string {
	if e.cause != nil {
		return e.Message + ": " + e.cause.Error()
	}
	return e.Message
}

// Unwrap returns the underlying failure.
func (e *Error) Unwrap() error { return e.cause }

// ServeHTTP writes the response. HEAD requests get the headers only, as
// webob answers them.
func (e *Error) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body := e.Body
	for k, v := range e.Header {
		w.Header()[k] = append([]string(nil), v...)
	}
	if e.render != nil {
		var ct string
		ct, body = e.render(r)
		w.Header().Set("Content-Type", ct)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(e.Status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// basicError is what ironic's BasicAuthMiddleware answers for an Ironic
// exception: {"error": {"message": str(e), "code": e.code}} serialised by
// webob's json_body (compact separators), with the exception's headers.
func basicError(status int, message string, header http.Header) *Error {
	var b strings.Builder
	b.WriteString(`{"error":{"message":`)
	b.Write(pyfmt.AppendJSONString(nil, message))
	b.WriteString(`,"code":`)
	b.WriteString(strconv.Itoa(status))
	b.WriteString(`}}`)
	h := http.Header{}
	for k, v := range header {
		h[k] = v
	}
	h.Set("Content-Type", "application/json")
	return &Error{Status: status, Header: h, Body: []byte(b.String()), Message: message}
}

// basicRealm is ironic's Unauthorized exception header.
const basicRealm = `Basic realm="Baremetal API"`

func basicUnauthorized(message string) *Error {
	return basicError(http.StatusUnauthorized, message, http.Header{"Www-Authenticate": {basicRealm}})
}

func basicBadRequest(message string) *Error {
	return basicError(http.StatusBadRequest, message, nil)
}

// basicConfigInvalid is ironic's ConfigInvalid (500) as the basic-auth
// middleware renders it.
func basicConfigInvalid(detail string, cause error) *Error {
	e := basicError(http.StatusInternalServerError, "Invalid configuration file. "+detail, nil)
	e.cause = cause
	return e
}

// keystoneUnauthorizedMessage is auth_token's rejection text.
const keystoneUnauthorizedMessage = "The request you have made requires authentication."

// keystoneUnauthorized is auth_token's 401: its own JSON body (Python's
// default separators), charset UTF-8, and WWW-Authenticate pointing at
// www_authenticate_uri.
func keystoneUnauthorized(wwwAuthenticateURI string, cause error) *Error {
	body := `{"error": {"code": 401, "title": "Unauthorized", "message": ` +
		string(pyfmt.AppendJSONString(nil, keystoneUnauthorizedMessage)) + `}}`
	return &Error{
		Status: http.StatusUnauthorized,
		Header: http.Header{
			"Content-Type":     {"application/json; charset=UTF-8"},
			"Www-Authenticate": {`Keystone uri="` + wwwAuthenticateURI + `"`},
		},
		Body:    []byte(body),
		Message: keystoneUnauthorizedMessage,
		cause:   cause,
	}
}

const (
	unavailableDetail      = "The Keystone service is temporarily unavailable."
	unavailableExplanation = "The server is currently unavailable. Please try again at a later time."
	unavailableStatus      = "503 Service Unavailable"
)

// keystoneUnavailable is auth_token's webob HTTPServiceUnavailable raised
// with a detail: webob renders it as HTML, JSON or plain text depending on
// the Accept header.
func keystoneUnavailable(cause error) *Error {
	return &Error{
		Status:  http.StatusServiceUnavailable,
		Header:  http.Header{},
		Message: unavailableDetail,
		cause:   cause,
		render:  renderUnavailable,
	}
}

func renderUnavailable(r *http.Request) (string, []byte) {
	// webob's body template: explanation, two <br />, the detail, an empty
	// comment line.
	raw := unavailableExplanation + "<br /><br />\n" + unavailableDetail + "\n\n"
	switch negotiate(r.Header.Values("Accept")) {
	case "text/html":
		return "text/html; charset=UTF-8", []byte("<html>\n <head>\n  <title>" + unavailableStatus +
			"</title>\n </head>\n <body>\n  <h1>" + unavailableStatus + "</h1>\n  " + raw + "\n </body>\n</html>")
	case "application/json":
		return "application/json", []byte(`{"message": ` + string(pyfmt.AppendJSONString(nil, raw)) +
			`, "code": "` + unavailableStatus + `", "title": "Service Unavailable"}`)
	default:
		// plain_body strips the tags: newlines become spaces, <br /> a newline.
		plain := strings.ReplaceAll(strings.ReplaceAll(raw, "\n", " "), "<br />", "\n")
		return "text/plain; charset=UTF-8", []byte(unavailableStatus + "\n\n" + plain)
	}
}

// negotiate is webob's acceptable_offers(["text/html", "application/json"])
// first pick: the offer with the highest quality, the more specific media
// range deciding an offer's quality, ties to the earlier offer. An empty
// or absent Accept header matches nothing (plain text then).
func negotiate(accept []string) string {
	offers := []string{"text/html", "application/json"}
	best, bestQ := "", 0.0
	for _, offer := range offers {
		q := quality(strings.Join(accept, ","), offer)
		if q > bestQ {
			best, bestQ = offer, q
		}
	}
	return best
}

func quality(accept, offer string) float64 {
	otype, osub, _ := strings.Cut(offer, "/")
	bestSpec, q := -1, 0.0
	for _, part := range strings.Split(accept, ",") {
		params := strings.Split(part, ";")
		mr := strings.ToLower(strings.TrimSpace(params[0]))
		if mr == "" {
			continue
		}
		t, s, _ := strings.Cut(mr, "/")
		spec := -1
		switch {
		case t == otype && s == osub:
			spec = 2
		case t == otype && s == "*":
			spec = 1
		case t == "*" && s == "*":
			spec = 0
		}
		if spec <= bestSpec {
			continue
		}
		pq := 1.0
		for _, p := range params[1:] {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					pq = f
				}
			}
		}
		bestSpec, q = spec, pq
	}
	return q
}
