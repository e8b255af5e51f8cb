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

// RefuseList is the list-scope hook (NodeBound.ListProject) put in place
// of one the wiring left unset: the listing of resource is refused as a
// caller with neither "baremetal:<resource>:list_all" nor a project is.
func RefuseList(_ *http.Request, resource string) (*string, error) {
	return nil, PolicyRefused("baremetal:" + resource + ":list_all")
}
