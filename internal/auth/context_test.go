package auth

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
)

func contextEqual(a, b *Context) bool { return reflect.DeepEqual(a, b) }

// fields prints every field (tests only: it includes tokens).
func fields(c *Context) string { return fmt.Sprintf("%+v", *c) }

func sprintAll(c *Context) string { return fmt.Sprintf("%v %+v %#v %s", c, c, c, c) }

func TestFromHeaders(t *testing.T) {
	cases := []struct {
		name   string
		header http.Header
		want   Context
	}{
		{
			name:   "nothing",
			header: http.Header{},
			want:   Context{Roles: []string{}, ServiceRoles: []string{}, IsAdminProject: true},
		},
		{
			name: "keystonemiddleware headers",
			header: http.Header{
				"X-Auth-Token": {"tok"}, "X-User-Id": {"u1"}, "X-User-Name": {"alice"},
				"X-User-Domain-Id": {"default"}, "X-User-Domain-Name": {"Default"},
				"X-Project-Id": {"p1"}, "X-Project-Name": {"demo"},
				"X-Project-Domain-Id": {"default"}, "X-Project-Domain-Name": {"Default"},
				"X-Domain-Id": {"d1"}, "X-Domain-Name": {"Dom"},
				"Openstack-System-Scope": {"all"}, "X-Roles": {"admin, member ,reader"},
				"X-Is-Admin-Project": {"False"},
				"X-Service-Token":    {"stok"}, "X-Service-User-Id": {"su"}, "X-Service-User-Name": {"nova"},
				"X-Service-User-Domain-Id": {"sud"}, "X-Service-User-Domain-Name": {"SUD"},
				"X-Service-Project-Id": {"sp"}, "X-Service-Project-Name": {"service"},
				"X-Service-Project-Domain-Id": {"spd"}, "X-Service-Project-Domain-Name": {"SPD"},
				"X-Service-Roles": {"service"},
			},
			want: Context{
				AuthToken: "tok", UserID: "u1", UserName: "alice", UserDomainID: "default", UserDomainName: "Default",
				ProjectID: "p1", ProjectName: "demo", ProjectDomainID: "default", ProjectDomainName: "Default",
				DomainID: "d1", DomainName: "Dom", SystemScope: "all", Roles: []string{"admin", "member", "reader"},
				IsAdminProject: false, ServiceToken: "stok", ServiceUserID: "su", ServiceUserName: "nova",
				ServiceUserDomainID: "sud", ServiceUserDomainName: "SUD", ServiceProjectID: "sp",
				ServiceProjectName: "service", ServiceProjectDomainID: "spd", ServiceProjectDomainName: "SPD",
				ServiceRoles: []string{"service"},
			},
		},
		{
			name: "legacy names, lower priority",
			header: http.Header{
				"X-Storage-Token": {"st"}, "X-User": {"bob"}, "X-Tenant-Id": {"t1"}, "X-Tenant": {"t2"},
				"X-Tenant-Name": {"tn"}, "X-Role": {"r1,,r2"}, "X-Is-Admin-Project": {"TRUE"},
			},
			want: Context{AuthToken: "st", UserID: "bob", ProjectID: "t1", ProjectName: "tn",
				Roles: []string{"r1", "", "r2"}, ServiceRoles: []string{}, IsAdminProject: true},
		},
		{
			name:   "current names win over legacy ones",
			header: http.Header{"X-User-Id": {"new"}, "X-User": {"old"}, "X-Roles": {"a"}, "X-Role": {"b"}, "X-Tenant-Id": {"old"}, "X-Project-Id": {"new"}},
			want:   Context{UserID: "new", ProjectID: "new", Roles: []string{"a"}, ServiceRoles: []string{}, IsAdminProject: true},
		},
		{
			name:   "repeated headers joined as WSGI does",
			header: http.Header{"X-Roles": {"a", "b"}},
			want:   Context{Roles: []string{"a", "b"}, ServiceRoles: []string{}, IsAdminProject: true},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := FromHeaders(tc.header)
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", *got, tc.want)
			}
		})
	}
}

func TestToPolicyCredentials(t *testing.T) {
	c := &Context{UserID: "u", ProjectName: "demo", IsPublicAPI: true, IsAdminProject: true}
	got := c.ToPolicyCredentials()
	want := Credentials{
		"user_id": "u", "user_domain_id": nil, "system_scope": nil, "domain_id": nil, "project_id": nil,
		"project_domain_id": nil, "roles": []string{}, "is_admin_project": true, "service_user_id": nil,
		"service_user_domain_id": nil, "service_project_id": nil, "service_project_domain_id": nil,
		"service_roles": []string{}, "project_name": "demo", "is_public_api": true,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

func TestNoAuthAndPublicRoutes(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/v1/nodes", nil)
	r.Header.Set("X-Roles", "admin")
	r.Header.Set("X-Project-Id", "p1")
	r.Header.Set("X-Auth-Token", "client-token")
	c, err := NoAuth{}.Authenticate(r)
	if err != nil {
		t.Fatal(err)
	}
	if c.Strategy != StrategyNoAuth || c.ProjectID != "p1" || len(c.Roles) != 1 || c.Roles[0] != "admin" || c.AuthToken != "" || c.IsPublicAPI {
		t.Errorf("noauth context = %+v", *c)
	}
	for strategy, keep := range map[string]bool{StrategyKeystone: true, StrategyHTTPBasic: false, StrategyNoAuth: false} {
		p := ForPublicRoute(r, strategy)
		if !p.IsPublicAPI || p.ProjectID != "p1" || (p.AuthToken == "client-token") != keep {
			t.Errorf("%s public context = %+v", strategy, *p)
		}
	}
	ctx := WithContext(context.Background(), c)
	if FromContext(ctx) != c || FromContext(context.Background()) != nil {
		t.Error("context round trip")
	}
}

// FromHeaders looks its names up as they are written, so each must be in
// http.Header's canonical form: a header set under any spelling (Set
// canonicalizes it) is read into its field.
func TestFromHeadersNames(t *testing.T) {
	for _, c := range []struct {
		header string
		get    func(*Context) string
	}{
		{"x-auth-token", func(c *Context) string { return c.AuthToken }},
		{"x-storage-token", func(c *Context) string { return c.AuthToken }},
		{"x-user-id", func(c *Context) string { return c.UserID }},
		{"x-user", func(c *Context) string { return c.UserID }},
		{"x-project-id", func(c *Context) string { return c.ProjectID }},
		{"x-tenant-id", func(c *Context) string { return c.ProjectID }},
		{"x-tenant", func(c *Context) string { return c.ProjectID }},
		{"x-domain-id", func(c *Context) string { return c.DomainID }},
		{"x-domain-name", func(c *Context) string { return c.DomainName }},
		{"openstack-system-scope", func(c *Context) string { return c.SystemScope }},
		{"x-user-domain-id", func(c *Context) string { return c.UserDomainID }},
		{"x-project-domain-id", func(c *Context) string { return c.ProjectDomainID }},
		{"x-user-name", func(c *Context) string { return c.UserName }},
		{"x-project-name", func(c *Context) string { return c.ProjectName }},
		{"x-tenant-name", func(c *Context) string { return c.ProjectName }},
		{"x-user-domain-name", func(c *Context) string { return c.UserDomainName }},
		{"x-project-domain-name", func(c *Context) string { return c.ProjectDomainName }},
		{"x-service-token", func(c *Context) string { return c.ServiceToken }},
		{"x-service-user-id", func(c *Context) string { return c.ServiceUserID }},
		{"x-service-user-name", func(c *Context) string { return c.ServiceUserName }},
		{"x-service-user-domain-id", func(c *Context) string { return c.ServiceUserDomainID }},
		{"x-service-user-domain-name", func(c *Context) string { return c.ServiceUserDomainName }},
		{"x-service-project-id", func(c *Context) string { return c.ServiceProjectID }},
		{"x-service-project-name", func(c *Context) string { return c.ServiceProjectName }},
		{"x-service-project-domain-id", func(c *Context) string { return c.ServiceProjectDomainID }},
		{"x-service-project-domain-name", func(c *Context) string { return c.ServiceProjectDomainName }},
		{"x-roles", func(c *Context) string { return fmt.Sprint(c.Roles) }},
		{"x-role", func(c *Context) string { return fmt.Sprint(c.Roles) }},
		{"x-service-roles", func(c *Context) string { return fmt.Sprint(c.ServiceRoles) }},
		{"x-is-admin-project", func(c *Context) string { return fmt.Sprint(c.IsAdminProject) }},
	} {
		h := http.Header{}
		h.Set(c.header, "v")
		got := c.get(FromHeaders(h))
		if got != "v" && got != "[v]" && got != "false" {
			t.Errorf("%s: read %q", c.header, got)
		}
	}
}
