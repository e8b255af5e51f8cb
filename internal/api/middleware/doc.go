// Package middleware holds the HTTP stages that run in front of Ironic's
// router, each a Middleware (func(http.Handler) http.Handler) that the API
// assembles with Chain.
//
// Upstream's order (ironic/api/app.py setup_app), outermost first, which the
// API must keep because it decides which error wins:
//
//  1. RequestLog        one line per request (method, path, status, duration, request id)
//  2. JSONExtension     strips ".json" for clients older than 1.91
//  3. CORS              [cors] options; answers preflight OPTIONS
//  4. AssignRequestID   x-openstack-request-id and openstack-request-id
//  5. Healthcheck       [healthcheck]/path, before authentication
//  6. ProxyHeaders      Forwarded / X-Forwarded-* when enable_proxy_headers_parsing
//  7. Authenticate      Authenticator, skipped for the public routes (401 first)
//  8. BodyLimits        JSON size (413) and depth (400), before any parsing
//  9. the error wrapper, version check and routing (package api)
//
// Handlers decode bodies with DecodeJSON, which relies on BodyLimits having
// run.
package middleware
