package apiutil

import (
	"net/http"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// A hook left unset answers what upstream's policy.authorize raises for a
// refused rule.
func TestRefuseAll(t *testing.T) {
	for _, err := range []error{
		PolicyRefused("baremetal:port:get"),
		RefuseAll[*model.Node](nil, "baremetal:port:get", nil),
		RefuseAll[*string](&http.Request{}, "baremetal:port:get", nil),
	} {
		if !errs.Is(err, errs.ClassHTTPForbidden) || errs.Status(err) != http.StatusForbidden ||
			err.Error() != "Access was denied to the following resource: baremetal:port:get" {
			t.Errorf("refusal %v: status %d", err, errs.Status(err))
		}
	}
}
