package keystoneauth

import (
	"context"
	"fmt"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
)

// IronicAPIURL is upstream's get_ironic_api_url: the URL the ramdisk
// reaches this service at, from [service_catalog]/endpoint_override or the
// catalog's baremetal entry, without a trailing slash (ramdisk scripts
// append paths to it).
func IronicAPIURL(ctx context.Context, s *Session) (string, error) {
	u, err := s.Endpoint(ctx)
	if err != nil {
		if errs.Is(err, errs.ClassKeystoneFailure) || errs.Is(err, errs.ClassCatalogNotFound) || errs.Is(err, errs.ClassKeystoneUnauthorized) {
			return "", errs.NewMessage(errs.ClassInvalidParameterValue, fmt.Sprintf("Couldn't get the URL of the Ironic API service from the configuration file or keystone catalog. Keystone error: %s", err.Error()))
		}
		return "", err
	}
	return strings.TrimRight(u, "/"), nil
}
