package middleware

import (
	"context"
	"errors"
	"net/http"
)

// StatusClientClosedRequest is the status logged and counted for a request
// whose client went away before its answer was written (nginx's 499).
// It is never sent: there is nobody left to read it, and what the server
// may have tried to answer (often a 503 or 500 from the work the
// disconnect canceled) says nothing about the server's health.
const StatusClientClosedRequest = 499

// ClientGone reports whether the client of r has gone away: Go's server
// cancels a request's context when the connection's reader meets EOF or
// an error (the client closed or half-closed its side) or a write to it
// fails (broken pipe, reset), and otherwise only after the handler
// returned. Deadlines are not a disconnect.
func ClientGone(r *http.Request) bool {
	return errors.Is(context.Cause(r.Context()), context.Canceled)
}

// LoggedStatus is the status to log and count for a request answered
// status (0 when nothing was written, which net/http sends as 200): a
// request whose client went away and that got no answer, or a server
// error brought about by the disconnect, is StatusClientClosedRequest.
func LoggedStatus(r *http.Request, status int) int {
	if ClientGone(r) && (status == 0 || status >= http.StatusInternalServerError) {
		return StatusClientClosedRequest
	}
	if status == 0 {
		return http.StatusOK
	}
	return status
}
