package keystoneauth

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/config"
)

func TestIronicAPIURL(t *testing.T) {
	ctx := context.Background()
	ks := identity(t).AddService("baremetal", "ironic", "RegionOne", "http://ironic.example:6385/", "internal")
	load := func(defaults, sc map[string]string) *config.Config {
		t.Helper()
		c, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{"DEFAULT": defaults, "service_catalog": sc}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	creds := map[string]string{"auth_url": ks.URL(), "username": "ironic", "password": "s3cret", "project_name": "service",
		"user_domain_name": "Default", "project_domain_name": "Default"}

	c := load(map[string]string{"auth_strategy": "keystone"}, creds)
	if u, err := IronicAPIURL(ctx, New(ServiceCatalogOptions(c))); err != nil || u != "http://ironic.example:6385" {
		t.Fatalf("catalog URL %q, %v", u, err)
	}
	// Without Keystone the plugin is none: only endpoint_override works.
	c = load(map[string]string{"auth_strategy": "noauth"}, creds)
	_, err := IronicAPIURL(ctx, New(ServiceCatalogOptions(c)))
	wantClass(t, err, "InvalidParameterValue", "Couldn't get the URL of the Ironic API service from the configuration file or keystone catalog. Keystone error: Service type baremetal with endpoint type internal not found in keystone service catalog.")
	c = load(map[string]string{"auth_strategy": "noauth"}, map[string]string{"endpoint_override": "http://192.0.2.1:6385/"})
	if u, err := IronicAPIURL(ctx, New(ServiceCatalogOptions(c))); err != nil || u != "http://192.0.2.1:6385" {
		t.Fatalf("override URL %q, %v", u, err)
	}
	if ks.Authentications() != 1 {
		t.Fatalf("authentications = %d", ks.Authentications())
	}
}
