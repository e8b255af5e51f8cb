package rpc

import "context"

// RequestContext is the caller's identity as upstream's RequestContext
// serialises it (to_dict) into the "context" parameter of every JSON-RPC
// call, so the conductor acts with the API caller's rights and logs under
// the caller's request id.
type RequestContext struct {
	UserID          string   `json:"user_id,omitempty"`
	UserName        string   `json:"user_name,omitempty"`
	ProjectID       string   `json:"project_id,omitempty"`
	ProjectName     string   `json:"project_name,omitempty"`
	DomainID        string   `json:"domain_id,omitempty"`
	UserDomainID    string   `json:"user_domain_id,omitempty"`
	ProjectDomainID string   `json:"project_domain_id,omitempty"`
	SystemScope     string   `json:"system_scope,omitempty"`
	Roles           []string `json:"roles,omitempty"`
	IsAdmin         bool     `json:"is_admin,omitempty"`
	IsPublicAPI     bool     `json:"is_public_api,omitempty"`
	ReadOnly        bool     `json:"read_only,omitempty"`
	ShowDeleted     bool     `json:"show_deleted,omitempty"`
	RequestID       string   `json:"request_id,omitempty"`
	GlobalRequestID string   `json:"global_request_id,omitempty"`
	// AuthToken travels because the conductor calls other services (image
	// service, networking) on the user's behalf, as upstream does; it is
	// never logged.
	AuthToken string `json:"auth_token,omitempty"`
}

type requestContextKey struct{}

// WithRequestContext returns ctx carrying rc.
func WithRequestContext(ctx context.Context, rc *RequestContext) context.Context {
	return context.WithValue(ctx, requestContextKey{}, rc)
}

// RequestContextFrom returns the RequestContext in ctx, or nil.
func RequestContextFrom(ctx context.Context) *RequestContext {
	rc, _ := ctx.Value(requestContextKey{}).(*RequestContext)
	return rc
}
