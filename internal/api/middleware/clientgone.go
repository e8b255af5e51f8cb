package middleware

import (
	"context"
	"errors"
	"net/http"
)

// StatusClientClosedRequest is the status logged and counted for a request
// whose client went away before its answer was written (nginx's 499).
// It is never sent: there is nobody left to read it (a client that only
// half-closed gets a 503 to retry), and the work the disconnect canceled
// says nothing about the server's health.
const StatusClientClosedRequest = 499

// ClientGone reports whether the client of r has gone away: Go's server
// cancels a request's context when the connection's reader meets EOF or
// an error (the client closed or half-closed its side) or a write to it
// fails (broken pipe, reset), and otherwise only after the handler
// returned. Deadlines are not a disconnect.
func ClientGone(r *http.Request) bool {
	return errors.Is(context.Cause(r.Context()), context.Canceled)
}

// ClientClosedMarker is implemented by the response writers that log or
// count answers (the request log's, the API metrics'): once marked, they
// record StatusClientClosedRequest whatever status is then written.
type ClientClosedMarker interface {
	MarkClientClosed()
}

// MarkClientClosed tells every recording writer around w that its client
// went away before the answer: the router calls it when the failure it is
// answering is the disconnect's own doing (work canceled with the
// request, a broken pipe while writing), so that a real server error
// answered to a client that also left is still recorded as one.
func MarkClientClosed(w http.ResponseWriter) {
	for w != nil {
		if m, ok := w.(ClientClosedMarker); ok {
			m.MarkClientClosed()
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

// LoggedStatus is the status to log and count for a request answered
// status (0 when nothing was written, which net/http sends as 200):
// StatusClientClosedRequest when the writer was marked (MarkClientClosed)
// or when nothing was written and the client is gone.
func LoggedStatus(r *http.Request, status int, marked bool) int {
	if marked || (status == 0 && ClientGone(r)) {
		return StatusClientClosedRequest
	}
	if status == 0 {
		return http.StatusOK
	}
	return status
}
