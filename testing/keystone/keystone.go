// Package keystone is a small Keystone for tests: it speaks the real
// identity v3 token API (password and token authentication with POST
// /v3/auth/tokens, validation with GET /v3/auth/tokens) on 127.0.0.1,
// with a builder for users, projects and role grants, tokens issued
// directly, an injectable clock for expiry, fault injection (down,
// failing status) and call counters. Every request is logged to the test.
//
//	ks := keystone.New(t).
//		Project("service").Project("demo").
//		User("ironic", "secret").Grant("ironic", "service", "service", "admin").
//		User("alice", "pw").Grant("alice", "demo", "member")
//	tok := ks.Token("alice", "demo")
package keystone

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// DefaultDomainID and DefaultDomainName are Keystone's default domain.
const (
	DefaultDomainID   = "default"
	DefaultDomainName = "Default"
)

// Fixture is a running fake Keystone.
type Fixture struct {
	t    testing.TB
	addr string

	mu       sync.Mutex
	srv      *http.Server
	ln       net.Listener
	now      time.Time
	ttl      time.Duration
	users    map[string]*user    // by name
	projects map[string]*project // by name
	domains  map[string]string   // id -> name
	tokens   map[string]*token
	catalog  []Service
	fail     int
	// counters
	validations, authentications int
}

type user struct {
	id, name, password, domainID string
	grants                       map[string][]string // project name -> roles
	systemRoles                  []string
	domainRoles                  map[string][]string // domain id -> roles
}

type project struct{ id, name, domainID string }

type token struct {
	id        string
	user      *user
	project   *project
	domainID  string
	system    bool
	roles     []string
	expiresAt time.Time
	issuedAt  time.Time
	isAdmin   *bool
	revoked   bool
	// accessRules, when set, make the token an application credential's
	// restricted to these requests.
	accessRules []AccessRule
}

// AccessRule is one access rule of an application credential: the
// requests (method, path template, service type) the token may make.
type AccessRule struct {
	ID      string `json:"id"`
	Method  string `json:"method"`
	Path    string `json:"path"`
	Service string `json:"service"`
}

// Service is a catalog entry.
type Service struct {
	ID        string     `json:"id"`
	Type      string     `json:"type"`
	Name      string     `json:"name"`
	Endpoints []Endpoint `json:"endpoints"`
}

// Endpoint is one endpoint of a catalog entry.
type Endpoint struct {
	ID        string `json:"id"`
	Interface string `json:"interface"`
	Region    string `json:"region"`
	RegionID  string `json:"region_id"`
	URL       string `json:"url"`
}

// New starts a Keystone on 127.0.0.1 and stops it when the test ends. Its
// clock starts at the current time and moves only with Advance; tokens
// last one hour by default. The catalog lists this Keystone as the
// identity service (public, internal and admin, region RegionOne).
func New(t testing.TB) *Fixture {
	t.Helper()
	f := &Fixture{
		t:        t,
		now:      time.Now().UTC().Truncate(time.Second),
		ttl:      time.Hour,
		users:    map[string]*user{},
		projects: map[string]*project{},
		domains:  map[string]string{DefaultDomainID: DefaultDomainName},
		tokens:   map[string]*token{},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("keystone fixture: listen: %v", err)
	}
	f.addr = ln.Addr().String()
	f.serve(ln)
	var eps []Endpoint
	for _, iface := range []string{"public", "internal", "admin"} {
		eps = append(eps, Endpoint{ID: newID(), Interface: iface, Region: "RegionOne", RegionID: "RegionOne", URL: f.URL() + "/v3"})
	}
	f.catalog = []Service{{ID: newID(), Type: "identity", Name: "keystone", Endpoints: eps}}
	t.Cleanup(f.stop)
	return f
}

func (f *Fixture) serve(ln net.Listener) {
	f.ln = ln
	f.srv = &http.Server{Handler: http.HandlerFunc(f.handle), ReadHeaderTimeout: 10 * time.Second}
	srv := f.srv
	go func() { _ = srv.Serve(ln) }()
}

// URL is the unversioned identity endpoint (http://127.0.0.1:port); the
// token API is under /v3.
func (f *Fixture) URL() string { return "http://" + f.addr }

// Now is the fixture's clock, to share with the code under test.
func (f *Fixture) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the clock forward.
func (f *Fixture) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

// TokenTTL sets the lifetime of tokens issued from now on.
func (f *Fixture) TokenTTL(d time.Duration) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ttl = d
	return f
}

// Domain adds a domain.
func (f *Fixture) Domain(id, name string) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.domains[id] = name
	return f
}

// Project adds a project in the default domain.
func (f *Fixture) Project(name string) *Fixture {
	return f.ProjectIn(name, DefaultDomainID)
}

// ProjectIn adds a project in domain domainID.
func (f *Fixture) ProjectIn(name, domainID string) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.projects[name] = &project{id: newID(), name: name, domainID: domainID}
	return f
}

// User adds a user in the default domain.
func (f *Fixture) User(name, password string) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.users[name] = &user{id: newID(), name: name, password: password, domainID: DefaultDomainID,
		grants: map[string][]string{}, domainRoles: map[string][]string{}}
	return f
}

// Grant gives user roles on project.
func (f *Fixture) Grant(userName, projectName string, roles ...string) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	u := f.mustUser(userName)
	f.mustProject(projectName)
	u.grants[projectName] = append(u.grants[projectName], roles...)
	return f
}

// GrantSystem gives user roles on the system (system-scoped tokens).
func (f *Fixture) GrantSystem(userName string, roles ...string) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	u := f.mustUser(userName)
	u.systemRoles = append(u.systemRoles, roles...)
	return f
}

// GrantDomain gives user roles on a domain (domain-scoped tokens).
func (f *Fixture) GrantDomain(userName, domainID string, roles ...string) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	u := f.mustUser(userName)
	u.domainRoles[domainID] = append(u.domainRoles[domainID], roles...)
	return f
}

// AddService adds a catalog entry with one endpoint per interface.
func (f *Fixture) AddService(typ, name, region, url string, interfaces ...string) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := Service{ID: newID(), Type: typ, Name: name}
	for _, i := range interfaces {
		s.Endpoints = append(s.Endpoints, Endpoint{ID: newID(), Interface: i, Region: region, RegionID: region, URL: url})
	}
	f.catalog = append(f.catalog, s)
	return f
}

// UserID is the id of the named user.
func (f *Fixture) UserID(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mustUser(name).id
}

// ProjectID is the id of the named project.
func (f *Fixture) ProjectID(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mustProject(name).id
}

func (f *Fixture) mustUser(name string) *user {
	u, ok := f.users[name]
	if !ok {
		f.t.Fatalf("keystone fixture: no user %q", name)
	}
	return u
}

func (f *Fixture) mustProject(name string) *project {
	p, ok := f.projects[name]
	if !ok {
		f.t.Fatalf("keystone fixture: no project %q", name)
	}
	return p
}

// Token issues a project-scoped token for user with their roles on
// project, as if they had authenticated.
func (f *Fixture) Token(userName, projectName string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, p := f.mustUser(userName), f.mustProject(projectName)
	return f.issue(&token{user: u, project: p, roles: u.grants[projectName]}).id
}

// SystemToken issues a system-scoped token ("system": {"all": true}).
func (f *Fixture) SystemToken(userName string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	u := f.mustUser(userName)
	return f.issue(&token{user: u, system: true, roles: u.systemRoles}).id
}

// DomainToken issues a domain-scoped token.
func (f *Fixture) DomainToken(userName, domainID string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	u := f.mustUser(userName)
	return f.issue(&token{user: u, domainID: domainID, roles: u.domainRoles[domainID]}).id
}

// AppCredentialToken issues a project-scoped token of an application
// credential of user restricted by rules. Validating it without the
// OpenStack-Identity-Access-Rules header answers 404, as Keystone hides
// such tokens from validators that cannot enforce their rules.
func (f *Fixture) AppCredentialToken(userName, projectName string, rules ...AccessRule) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, p := f.mustUser(userName), f.mustProject(projectName)
	for i := range rules {
		if rules[i].ID == "" {
			rules[i].ID = newID()
		}
	}
	return f.issue(&token{user: u, project: p, roles: u.grants[projectName], accessRules: rules}).id
}

// SetAdminProject sets is_admin_project in token's body (absent by
// default, which clients read as true).
func (f *Fixture) SetAdminProject(tokenID string, v bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if tk, ok := f.tokens[tokenID]; ok {
		tk.isAdmin = &v
	}
}

// Revoke makes a token unknown to validation (404), as a revocation does.
func (f *Fixture) Revoke(tokenID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if tk, ok := f.tokens[tokenID]; ok {
		tk.revoked = true
	}
}

// RevokeUserTokens revokes every token of user (e.g. the service's own,
// to make the next validation answer 401).
func (f *Fixture) RevokeUserTokens(userName string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, tk := range f.tokens {
		if tk.user.name == userName {
			tk.revoked = true
		}
	}
}

func (f *Fixture) issue(tk *token) *token {
	tk.id = "gAAAAA" + newID() + newID()
	tk.issuedAt = f.now
	tk.expiresAt = f.now.Add(f.ttl)
	f.tokens[tk.id] = tk
	return tk
}

// Fail makes every request answer status (e.g. 500) until Heal.
func (f *Fixture) Fail(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = status
}

// Heal stops Fail.
func (f *Fixture) Heal() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = 0
}

// Down stops listening, so connections are refused, keeping the state
// (Up listens again on the same address).
func (f *Fixture) Down() {
	f.mu.Lock()
	srv := f.srv
	f.srv = nil
	f.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// stop waits for requests in flight, so none logs after the test ended.
func (f *Fixture) stop() {
	f.mu.Lock()
	srv := f.srv
	f.srv = nil
	f.mu.Unlock()
	if srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		_ = srv.Close()
	}
}

// Up listens again after Down.
func (f *Fixture) Up() {
	f.t.Helper()
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		f.t.Fatalf("keystone fixture: listen again on %s: %v", f.addr, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.serve(ln)
}

// TokenValid reports whether tok is a token this Keystone issued that is
// neither revoked nor expired by its clock; service fixtures use it as
// their auth_token check.
func (f *Fixture) TokenValid(tok string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.live(tok, false) != nil
}

// Validations counts GET /v3/auth/tokens requests.
func (f *Fixture) Validations() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.validations
}

// Authentications counts POST /v3/auth/tokens requests.
func (f *Fixture) Authentications() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.authentications
}

func (f *Fixture) handle(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	f.route(rec, r)
	f.t.Logf("keystone fixture: %s %s -> %d", r.Method, r.URL.RequestURI(), rec.status)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (f *Fixture) route(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != 0 {
		writeError(w, f.fail, http.StatusText(f.fail), "injected failure")
		return
	}
	switch {
	case r.URL.Path == "/v3/auth/tokens" && r.Method == http.MethodPost:
		f.authentications++
		f.authenticate(w, r)
	case r.URL.Path == "/v3/auth/tokens" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		f.validations++
		f.validate(w, r)
	default:
		writeError(w, http.StatusNotFound, "Not Found", "The resource could not be found.")
	}
}

// authRequest is the part of a v3 authentication body the fixture reads.
type authRequest struct {
	Auth struct {
		Identity struct {
			Methods []string `json:"methods"`
			Token   struct {
				ID string `json:"id"`
			} `json:"token"`
			Password struct {
				User struct {
					ID       string  `json:"id"`
					Name     string  `json:"name"`
					Password string  `json:"password"`
					Domain   *domRef `json:"domain"`
				} `json:"user"`
			} `json:"password"`
		} `json:"identity"`
		Scope *struct {
			Project *struct {
				ID     string  `json:"id"`
				Name   string  `json:"name"`
				Domain *domRef `json:"domain"`
			} `json:"project"`
			Domain *domRef `json:"domain"`
			System *struct {
				All bool `json:"all"`
			} `json:"system"`
		} `json:"scope"`
	} `json:"auth"`
}

type domRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func (f *Fixture) domainMatches(ref *domRef, id string) bool {
	if ref == nil {
		return false
	}
	if ref.ID != "" {
		return ref.ID == id
	}
	return ref.Name == f.domains[id]
}

func (f *Fixture) authenticate(w http.ResponseWriter, r *http.Request) {
	var req authRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "Bad Request", "Malformed request body: "+err.Error())
		return
	}
	id := req.Auth.Identity
	var u *user
	switch {
	case len(id.Methods) == 1 && id.Methods[0] == "password":
		pu := id.Password.User
		for _, cand := range f.users {
			if (pu.ID != "" && cand.id == pu.ID) || (pu.ID == "" && cand.name == pu.Name && f.domainMatches(pu.Domain, cand.domainID)) {
				u = cand
			}
		}
		if u != nil && u.password != pu.Password {
			u = nil
		}
	case len(id.Methods) == 1 && id.Methods[0] == "token":
		// A live token is exchanged for a new one, possibly rescoped.
		if tk := f.live(id.Token.ID, false); tk != nil {
			u = tk.user
		}
	}
	if u == nil {
		writeError(w, http.StatusUnauthorized, "Unauthorized", "The request you have made requires authentication.")
		return
	}
	tk := &token{user: u}
	if s := req.Auth.Scope; s != nil {
		switch {
		case s.Project != nil:
			var p *project
			for _, cand := range f.projects {
				if (s.Project.ID != "" && cand.id == s.Project.ID) ||
					(s.Project.ID == "" && cand.name == s.Project.Name && f.domainMatches(s.Project.Domain, cand.domainID)) {
					p = cand
				}
			}
			if p == nil || len(u.grants[p.name]) == 0 {
				writeError(w, http.StatusUnauthorized, "Unauthorized", "The request you have made requires authentication.")
				return
			}
			tk.project, tk.roles = p, u.grants[p.name]
		case s.System != nil && s.System.All:
			if len(u.systemRoles) == 0 {
				writeError(w, http.StatusUnauthorized, "Unauthorized", "The request you have made requires authentication.")
				return
			}
			tk.system, tk.roles = true, u.systemRoles
		case s.Domain != nil:
			did := s.Domain.ID
			if did == "" {
				for k, n := range f.domains {
					if n == s.Domain.Name {
						did = k
					}
				}
			}
			if len(u.domainRoles[did]) == 0 {
				writeError(w, http.StatusUnauthorized, "Unauthorized", "The request you have made requires authentication.")
				return
			}
			tk.domainID, tk.roles = did, u.domainRoles[did]
		}
	}
	f.issue(tk)
	w.Header().Set("X-Subject-Token", tk.id)
	writeJSON(w, http.StatusCreated, f.body(tk, true))
}

// live returns the token if it exists, is not revoked and has not expired.
func (f *Fixture) live(id string, allowExpired bool) *token {
	tk, ok := f.tokens[id]
	if !ok || tk.revoked || (!allowExpired && !f.now.Before(tk.expiresAt)) {
		return nil
	}
	return tk
}

func (f *Fixture) validate(w http.ResponseWriter, r *http.Request) {
	caller := f.live(r.Header.Get("X-Auth-Token"), false)
	if caller == nil {
		writeError(w, http.StatusUnauthorized, "Unauthorized", "The request you have made requires authentication.")
		return
	}
	subject := r.Header.Get("X-Subject-Token")
	q := r.URL.Query()
	tk := f.live(subject, q.Get("allow_expired") == "1" || strings.EqualFold(q.Get("allow_expired"), "true"))
	if tk != nil && tk.accessRules != nil && r.Header.Get("OpenStack-Identity-Access-Rules") == "" {
		tk = nil
	}
	if tk == nil {
		writeError(w, http.StatusNotFound, "Not Found", fmt.Sprintf("Could not find token: %s.", subject))
		return
	}
	w.Header().Set("X-Subject-Token", tk.id)
	_, noCatalog := q["nocatalog"]
	writeJSON(w, http.StatusOK, f.body(tk, !noCatalog))
}

func (f *Fixture) body(tk *token, withCatalog bool) map[string]any {
	roles := make([]map[string]string, 0, len(tk.roles))
	for _, r := range tk.roles {
		roles = append(roles, map[string]string{"id": roleID(r), "name": r})
	}
	t := map[string]any{
		"methods":    []string{"password"},
		"audit_ids":  []string{newID()[:22]},
		"issued_at":  tk.issuedAt.Format("2006-01-02T15:04:05.000000Z"),
		"expires_at": tk.expiresAt.Format("2006-01-02T15:04:05.000000Z"),
		"user": map[string]any{
			"id": tk.user.id, "name": tk.user.name, "password_expires_at": nil,
			"domain": map[string]string{"id": tk.user.domainID, "name": f.domains[tk.user.domainID]},
		},
		"roles": roles,
	}
	switch {
	case tk.project != nil:
		t["project"] = map[string]any{"id": tk.project.id, "name": tk.project.name,
			"domain": map[string]string{"id": tk.project.domainID, "name": f.domains[tk.project.domainID]}}
		t["is_domain"] = false
	case tk.system:
		t["system"] = map[string]bool{"all": true}
	case tk.domainID != "":
		t["domain"] = map[string]string{"id": tk.domainID, "name": f.domains[tk.domainID]}
	}
	if tk.isAdmin != nil {
		t["is_admin_project"] = *tk.isAdmin
	}
	if tk.accessRules != nil {
		t["methods"] = []string{"application_credential"}
		t["application_credential"] = map[string]any{"id": newID(), "name": "restricted", "restricted": true,
			"access_rules": tk.accessRules}
	}
	if withCatalog && (tk.project != nil || tk.system || tk.domainID != "") {
		t["catalog"] = f.catalog
	}
	return map[string]any{"token": t}
}

func roleID(name string) string {
	var b [16]byte
	copy(b[:], name)
	return hex.EncodeToString(b[:])
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers with Keystone's error document.
func writeError(w http.ResponseWriter, status int, title, message string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "title": title, "message": message}})
}

func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(errors.Join(errors.New("keystone fixture: random id"), err))
	}
	return hex.EncodeToString(b[:])
}
