package apiutil

import (
	"net/http"

	"github.com/openkeel/ironic/internal/errs"
)

// PolicyRefused is what upstream's policy.authorize raises for a rule the
// caller may not use: HTTPForbidden naming the rule (403).
func PolicyRefused(rule string) error {
	return errs.New(errs.ClassHTTPForbidden, map[string]any{"resource": rule})
}

// RefuseAll is the authorization hook a resource package puts in place of
// one its wiring left unset: every rule is refused with PolicyRefused, so
// that a forgotten hook fails closed rather than allowing everything.
// Callers that mean to allow everything (tests) pass such a hook
// explicitly.
func RefuseAll[T any](_ *http.Request, rule string, _ T) error { return PolicyRefused(rule) }
