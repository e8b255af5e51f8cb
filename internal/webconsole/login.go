package webconsole

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/errs"
)

// maxLoginBody bounds what the login form may send: a user name, a
// password and two scope names fit many times over.
const maxLoginBody = 8 << 10

// Login obtains a Keystone token for the console's login form from the
// identity endpoint the API validates tokens against. The page keeps the
// token (never the password) and sends it as X-Auth-Token; nothing is
// stored here.
type Login struct {
	// IdentityURL is the identity endpoint ([keystone_authtoken]
	// www_authenticate_uri, else auth_url), with or without "/v3".
	IdentityURL string
	// Client reaches it, with the section's TLS settings.
	Client *http.Client
	// Timeout bounds one login; zero means ten seconds.
	Timeout time.Duration
	// Log records identity endpoints that fail (never the credentials).
	Log *slog.Logger
}

// loginRequest is what the form sends. A scope is a project (by name
// in a domain) or the system; with neither the token is unscoped, which
// the API refuses as it would from any client.
type loginRequest struct {
	Username      string `json:"username"`
	Password      string `json:"password"`
	UserDomain    string `json:"user_domain"`
	Project       string `json:"project"`
	ProjectDomain string `json:"project_domain"`
	System        bool   `json:"system"`
}

// loginResponse is what the page keeps.
type loginResponse struct {
	Token     string `json:"token"`
	ExpiresAt string `json:"expires_at"`
}

// errLoginRefused is Keystone's 401: wrong name, password or scope.
var errLoginRefused = errors.New("identity service refused the credentials")

func (l *Login) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		errs.WriteFault(w, r, errs.Abort(http.StatusMethodNotAllowed), errs.FaultOptions{Routing: true})
		return
	}
	// A JSON body cannot be sent cross-origin without a preflight that
	// this endpoint never grants, so another site cannot log a visitor
	// in under its own account.
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		errs.WriteFault(w, r, errs.Abort(http.StatusUnsupportedMediaType), errs.FaultOptions{Routing: true})
		return
	}
	var req loginRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxLoginBody))
	if err := dec.Decode(&req); err != nil || req.Username == "" || req.Password == "" {
		errs.WriteFault(w, r, errs.InvalidParameterValue("a user name and a password are required"), errs.FaultOptions{})
		return
	}
	resp, err := l.token(r.Context(), req)
	switch {
	case errors.Is(err, errLoginRefused):
		// Without WWW-Authenticate: the page reports it, no browser prompt.
		errs.WriteFault(w, r, errs.HTTPStatus(http.StatusUnauthorized, "The identity service refused the user name, password or scope."),
			errs.FaultOptions{Routing: true})
	case err != nil:
		if l.Log != nil {
			l.Log.ErrorContext(r.Context(), "console login", "identity", l.IdentityURL, "error", err)
		}
		errs.WriteFault(w, r, errs.Unavailable(err), errs.FaultOptions{})
	default:
		writeJSON(w, http.StatusOK, resp)
	}
}

// token is a password authentication (POST /v3/auth/tokens).
func (l *Login) token(ctx context.Context, req loginRequest) (*loginResponse, error) {
	timeout := l.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	domain := func(name string) map[string]string {
		if name == "" {
			name = "Default"
		}
		return map[string]string{"name": name}
	}
	body := map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{
			"user": map[string]any{"name": req.Username, "password": req.Password, "domain": domain(req.UserDomain)}}},
	}}
	auth := body["auth"].(map[string]any)
	switch {
	case req.System:
		auth["scope"] = map[string]any{"system": map[string]bool{"all": true}}
	case req.Project != "":
		auth["scope"] = map[string]any{"project": map[string]any{"name": req.Project, "domain": domain(req.ProjectDomain)}}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode token request: %w", err)
	}
	u := strings.TrimSuffix(l.IdentityURL, "/")
	if !strings.HasSuffix(u, "/v3") {
		u += "/v3"
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u+"/auth/tokens", bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("token request: %w", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	client := l.Client
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("token request: %w", err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("token response: %w", err)
	}
	switch {
	case res.StatusCode == http.StatusUnauthorized:
		return nil, errLoginRefused
	case res.StatusCode != http.StatusCreated:
		return nil, fmt.Errorf("token request: identity service answered %s", res.Status)
	}
	var out struct {
		Token struct {
			ExpiresAt string `json:"expires_at"`
		} `json:"token"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("token response: %w", err)
	}
	tok := res.Header.Get("X-Subject-Token")
	if tok == "" {
		return nil, errors.New("token response: no X-Subject-Token")
	}
	return &loginResponse{Token: tok, ExpiresAt: out.Token.ExpiresAt}, nil
}
