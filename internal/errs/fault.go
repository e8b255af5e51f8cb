package errs

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"github.com/openkeel/ironic/internal/pyfmt"
)

// FaultOptions says how an error reaches the client.
type FaultOptions struct {
	// Routing is set for errors raised while routing, outside an exposed
	// handler (pecan.abort, webob exceptions in _lookup/_route, the /v1
	// version check). Upstream's framework renders those web framework
	// exceptions as {"code", "title", "description"}; everything else is
	// rendered as a fault {"faultcode", "faultstring", "debuginfo"}.
	Routing bool
	// DebugTracebacks is [DEFAULT]debug_tracebacks_in_api: 5xx faults carry
	// debugging detail in debuginfo.
	DebugTracebacks bool
}

// tracebackMarker starts the remote traceback that RPC errors may carry in
// their message; upstream cuts it off unless debugging is enabled.
const tracebackMarker = "Traceback (most recent call last):"

// Status is the HTTP status upstream answers for err: the error's code when
// it is a known HTTP status, otherwise 500.
func Status(err error) int {
	if e, ok := As(err); ok && http.StatusText(e.Code) != "" {
		return e.Code
	}
	return http.StatusInternalServerError
}

// FaultBody returns the status and the exact body upstream sends for err:
// {"error_message": "<inner JSON text>"}, serialized as Python's json.dumps
// does (", " and ": " separators, non-ASCII escaped) because clients decode
// the inner text themselves and some compare raw bytes.
func FaultBody(err error, opts FaultOptions) (int, []byte) {
	status := Status(err)
	e, isErr := As(err)
	var inner []byte
	if opts.Routing && isErr && e.webob {
		inner = routingBody(e)
	} else {
		inner = faultInner(err, e, isErr, status, opts.DebugTracebacks)
	}
	out := make([]byte, 0, len(inner)+32)
	out = append(out, `{"error_message": `...)
	out = pyfmt.AppendJSONString(out, string(inner))
	out = append(out, '}')
	return status, out
}

// routingBody is pecan's JSON for a webob exception: code, title and the
// detail (null when raised without one).
func routingBody(e *Error) []byte {
	b := []byte(`{"code": `)
	b = strconv.AppendInt(b, int64(e.Code), 10)
	b = append(b, `, "title": `...)
	b = pyfmt.AppendJSONString(b, e.title())
	b = append(b, `, "description": `...)
	if e.detail == nil {
		b = append(b, "null"...)
	} else {
		b = pyfmt.AppendJSONString(b, *e.detail)
	}
	return append(b, '}')
}

func faultInner(err error, e *Error, isErr bool, status int, debug bool) []byte {
	client := isErr && http.StatusText(e.Code) != "" && e.Code >= 400 && e.Code < 500
	faultCode := "Server"
	if client {
		faultCode = "Client"
	}
	faultString := defaultMessage
	if isErr {
		faultString = e.Message
		if e.faultCode != "" {
			faultCode = e.faultCode
		}
	}
	debugInfo := ""
	hasDebug := false
	if !client && debug {
		debugInfo, hasDebug = err.Error(), true
		if isErr && e.cause != nil {
			debugInfo = e.cause.Error()
		}
	}
	// Upstream's after-hook rewrites the body when it strips a traceback,
	// and that rewrite serializes compactly.
	compact := false
	if !debug && strings.Contains(faultString, tracebackMarker) {
		faultString = strings.TrimRightFunc(strings.SplitN(faultString, tracebackMarker, 2)[0], unicode.IsSpace)
		compact = true
	}
	sep, colon := ", ", ": "
	if compact {
		sep, colon = ",", ":"
	}
	b := []byte(`{"faultcode"`)
	b = append(b, colon...)
	b = pyfmt.AppendJSONString(b, faultCode)
	b = append(b, sep+`"faultstring"`+colon...)
	b = pyfmt.AppendJSONString(b, faultString)
	b = append(b, sep+`"debuginfo"`+colon...)
	if hasDebug {
		b = pyfmt.AppendJSONString(b, debugInfo)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}')
}

// WriteFault writes err as upstream's error response: status, the error's
// own headers, Content-Type application/json and the FaultBody. A HEAD
// request routed to a framework exception gets an empty error_message, as
// upstream's framework drops the body of HEAD error pages before the
// envelope is built.
func WriteFault(w http.ResponseWriter, r *http.Request, err error, opts FaultOptions) {
	if err == nil {
		err = errors.New("errs.WriteFault called without an error")
	}
	status, body := FaultBody(err, opts)
	if e, ok := As(err); ok {
		if opts.Routing && e.webob && r != nil && r.Method == http.MethodHead {
			body = []byte(`{"error_message": ""}`)
		}
		for k, v := range e.Headers {
			w.Header().Set(k, v)
		}
	}
	// Every 503 says when to come back, also those rebuilt from a
	// conductor's JSON-RPC answer (which carries no headers) and those of
	// classes raised without one (NoFreeConductorWorker…): clients such as
	// openstacksdk pace their retries of 503 by it.
	if status == http.StatusServiceUnavailable && w.Header().Get(headerRetryAfter) == "" {
		w.Header().Set(headerRetryAfter, strconv.Itoa(RetryAfterSeconds))
	}
	if status != http.StatusRequestEntityTooLarge && retryAfterBreaks(r) {
		w.Header().Del(headerRetryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// retryAfterBreaks reports whether r comes from python-ironicclient (and
// so the baremetal CLI), which must not see Retry-After on an error other
// than 413: its exception factory passes the header as retry_after= to
// every error class, and only its 413 class takes it, so a 503 with the
// header becomes a TypeError instead of the ServiceUnavailable its retry
// loop catches. Upstream never sends the header on a 503; other clients
// (openstacksdk over keystoneauth, gophercloud) read it.
func retryAfterBreaks(r *http.Request) bool {
	return r != nil && strings.Contains(r.Header.Get("User-Agent"), "python-ironicclient")
}
