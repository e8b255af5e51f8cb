package middleware

import "net/http"

// Middleware is one stage of the pipeline.
type Middleware func(http.Handler) http.Handler

// Chain wraps h so that mws run in the order given: mws[0] is outermost and
// sees the request first.
func Chain(h http.Handler, mws ...Middleware) http.Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] != nil {
			h = mws[i](h)
		}
	}
	return h
}
