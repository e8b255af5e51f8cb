package errs

// webobClass is one of the web framework's HTTP exceptions (webob.exc),
// which upstream's routing layer (pecan.abort, controllers raising webob
// exceptions) produces instead of Ironic exceptions.
type webobClass struct {
	class, parent Class
	code          int
	title         string
	// explanation is str(exc) when raised without detail.
	explanation string
}

const (
	webobPrefix       = "webob.exc."
	clientExplanation = "The server could not comply with the request since it is either malformed or otherwise incorrect."
	serverExplanation = "The server has either erred or is incapable of performing the requested operation."
)

// The web framework's classes, named as upstream's API layer qualifies
// them.
const (
	ClassWebobHTTPError                 Class = webobPrefix + "HTTPError"
	ClassWebobHTTPClientError           Class = webobPrefix + "HTTPClientError"
	ClassWebobHTTPServerError           Class = webobPrefix + "HTTPServerError"
	ClassWebobHTTPBadRequest            Class = webobPrefix + "HTTPBadRequest"
	ClassWebobHTTPUnauthorized          Class = webobPrefix + "HTTPUnauthorized"
	ClassWebobHTTPForbidden             Class = webobPrefix + "HTTPForbidden"
	ClassWebobHTTPNotFound              Class = webobPrefix + "HTTPNotFound"
	ClassWebobHTTPMethodNotAllowed      Class = webobPrefix + "HTTPMethodNotAllowed"
	ClassWebobHTTPNotAcceptable         Class = webobPrefix + "HTTPNotAcceptable"
	ClassWebobHTTPConflict              Class = webobPrefix + "HTTPConflict"
	ClassWebobHTTPGone                  Class = webobPrefix + "HTTPGone"
	ClassWebobHTTPLengthRequired        Class = webobPrefix + "HTTPLengthRequired"
	ClassWebobHTTPRequestEntityTooLarge Class = webobPrefix + "HTTPRequestEntityTooLarge"
	ClassWebobHTTPRequestURITooLong     Class = webobPrefix + "HTTPRequestURITooLong"
	ClassWebobHTTPUnsupportedMediaType  Class = webobPrefix + "HTTPUnsupportedMediaType"
	ClassWebobHTTPUnprocessableEntity   Class = webobPrefix + "HTTPUnprocessableEntity"
	ClassWebobHTTPTooManyRequests       Class = webobPrefix + "HTTPTooManyRequests"
	ClassWebobHTTPInternalServerError   Class = webobPrefix + "HTTPInternalServerError"
	ClassWebobHTTPNotImplemented        Class = webobPrefix + "HTTPNotImplemented"
	ClassWebobHTTPServiceUnavailable    Class = webobPrefix + "HTTPServiceUnavailable"
)

// webobClasses are webob's (1.8 series, the released line upstream runs)
// 4xx/5xx exceptions with their titles (the HTTP
// reason phrase webob uses, which differs from Go's for a few codes).
// Classes that only override the HTML template inherit the base
// explanation.
var webobClasses = []webobClass{
	{ClassWebobHTTPError, webobPrefix + "WSGIHTTPException", 500, "Internal Server Error", ""},
	{ClassWebobHTTPClientError, ClassWebobHTTPError, 400, "Bad Request", clientExplanation},
	{ClassWebobHTTPServerError, ClassWebobHTTPError, 500, "Internal Server Error", serverExplanation},
	{ClassWebobHTTPBadRequest, ClassWebobHTTPClientError, 400, "Bad Request", clientExplanation},
	{ClassWebobHTTPUnauthorized, ClassWebobHTTPClientError, 401, "Unauthorized", "This server could not verify that you are authorized to access the document you requested.  Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required."},
	{ClassWebobHTTPForbidden, ClassWebobHTTPClientError, 403, "Forbidden", "Access was denied to this resource."},
	{ClassWebobHTTPNotFound, ClassWebobHTTPClientError, 404, "Not Found", "The resource could not be found."},
	{ClassWebobHTTPMethodNotAllowed, ClassWebobHTTPClientError, 405, "Method Not Allowed", clientExplanation},
	{ClassWebobHTTPNotAcceptable, ClassWebobHTTPClientError, 406, "Not Acceptable", clientExplanation},
	{ClassWebobHTTPConflict, ClassWebobHTTPClientError, 409, "Conflict", "There was a conflict when trying to complete your request."},
	{ClassWebobHTTPGone, ClassWebobHTTPClientError, 410, "Gone", "This resource is no longer available.  No forwarding address is given."},
	{ClassWebobHTTPLengthRequired, ClassWebobHTTPClientError, 411, "Length Required", "Content-Length header required."},
	{ClassWebobHTTPRequestEntityTooLarge, ClassWebobHTTPClientError, 413, "Request Entity Too Large", "The body of your request was too large for this server."},
	{ClassWebobHTTPRequestURITooLong, ClassWebobHTTPClientError, 414, "Request-URI Too Long", "The request URI was too long for this server."},
	{ClassWebobHTTPUnsupportedMediaType, ClassWebobHTTPClientError, 415, "Unsupported Media Type", clientExplanation},
	{ClassWebobHTTPUnprocessableEntity, ClassWebobHTTPClientError, 422, "Unprocessable Entity", "Unable to process the contained instructions"},
	{ClassWebobHTTPTooManyRequests, ClassWebobHTTPClientError, 429, "Too Many Requests", "The client has sent too many requests in a given amount of time"},
	{ClassWebobHTTPInternalServerError, ClassWebobHTTPServerError, 500, "Internal Server Error", serverExplanation},
	{ClassWebobHTTPNotImplemented, ClassWebobHTTPServerError, 501, "Not Implemented", serverExplanation},
	{ClassWebobHTTPServiceUnavailable, ClassWebobHTTPServerError, 503, "Service Unavailable", "The server is currently unavailable. Please try again at a later time."},
}

func webobFor(code int) *webobClass {
	// The generic bases come first in the table; the specific class for a
	// code is the last entry carrying it.
	var found *webobClass
	for i := range webobClasses {
		if webobClasses[i].code == code {
			found = &webobClasses[i]
		}
	}
	return found
}

func webobByClass(class Class) *webobClass {
	for i := range webobClasses {
		if webobClasses[i].class == class {
			return &webobClasses[i]
		}
	}
	return nil
}

// HTTPStatus is a webob exception for code raised with a detail, as
// controllers do with webob.exc.HTTPNotFound("..."). Codes webob has no
// class for fall back to the generic client or server error class.
func HTTPStatus(code int, detail string) *Error {
	return webobError(code, &detail)
}

// Abort is pecan.abort(code): a webob exception whose detail is empty.
func Abort(code int) *Error {
	return HTTPStatus(code, "")
}

// HTTPStatusNoDetail is a webob exception raised as a bare class (detail
// None), as pecan's own router does for an unknown path.
func HTTPStatusNoDetail(code int) *Error {
	return webobError(code, nil)
}

func webobError(code int, detail *string) *Error {
	c := webobFor(code)
	if c == nil {
		if code >= 500 {
			c = webobByClass(ClassWebobHTTPServerError)
		} else {
			c = webobByClass(ClassWebobHTTPClientError)
		}
	}
	msg := c.explanation
	if detail != nil && *detail != "" {
		msg = *detail
	}
	return &Error{Class: c.class, Code: code, Message: msg, webob: true, detail: detail}
}

// WithHeaders returns e with extra response headers added (a copy; e is
// not modified).
func (e *Error) WithHeaders(h map[string]string) *Error {
	c := *e
	c.Headers = make(map[string]string, len(e.Headers)+len(h))
	for k, v := range e.Headers {
		c.Headers[k] = v
	}
	for k, v := range h {
		c.Headers[k] = v
	}
	return &c
}

// title is webob's reason phrase for the error's code.
func (e *Error) title() string {
	if c := webobFor(e.Code); c != nil {
		return c.title
	}
	if c := webobByClass(e.Class); c != nil {
		return c.title
	}
	return ""
}

// Webob reports a web framework exception's title and detail (nil when
// raised without one), for the renderings webob chooses by the client's
// Accept header; ok is false for any other error.
func (e *Error) Webob() (title string, detail *string, ok bool) {
	if !e.webob {
		return "", nil, false
	}
	return e.title(), e.detail, true
}
