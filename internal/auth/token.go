package auth

import (
	"container/list"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// tokenData is a Keystone v3 token document ({"token": {…}}) as
// GET/POST /v3/auth/tokens return it.
type tokenData struct {
	Token struct {
		ExpiresAt string   `json:"expires_at"`
		Methods   []string `json:"methods"`
		User      struct {
			ID     string  `json:"id"`
			Name   string  `json:"name"`
			Domain nameRef `json:"domain"`
		} `json:"user"`
		Project *struct {
			ID     string  `json:"id"`
			Name   string  `json:"name"`
			Domain nameRef `json:"domain"`
		} `json:"project"`
		Domain *nameRef `json:"domain"`
		System *struct {
			All bool `json:"all"`
		} `json:"system"`
		Roles                 []nameRef        `json:"roles"`
		IsAdminProject        *bool            `json:"is_admin_project"`
		Catalog               []CatalogService `json:"catalog"`
		ApplicationCredential *appCredential   `json:"application_credential"`
	} `json:"token"`

	raw       json.RawMessage
	expiresAt time.Time
}

type nameRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func parseTokenData(body []byte) (*tokenData, error) {
	d := &tokenData{}
	if err := json.Unmarshal(body, d); err != nil {
		return nil, fmt.Errorf("decode token: %w", err)
	}
	if d.Token.ExpiresAt == "" {
		return nil, errors.New("token has no expires_at")
	}
	t, err := time.Parse(time.RFC3339Nano, d.Token.ExpiresAt)
	if err != nil {
		return nil, fmt.Errorf("token expires_at %q: %w", d.Token.ExpiresAt, err)
	}
	if ac := d.Token.ApplicationCredential; ac != nil && (len(ac.AccessRules) == 0 || string(ac.AccessRules) == "null") {
		// Only access rules matter; a credential without them is no
		// restriction.
		d.Token.ApplicationCredential = nil
	}
	d.expiresAt = t
	d.raw = append(json.RawMessage(nil), body...)
	return d, nil
}

// appCredential is the part of an application credential token that
// restricts it.
type appCredential struct {
	AccessRules json.RawMessage `json:"access_rules"`
}

// expired is keystoneauth's will_expire_soon(stale_duration=0).
func (d *tokenData) expired(now time.Time) bool { return d.expiresAt.Before(now) }

func (d *tokenData) roleNames() []string {
	out := make([]string, 0, len(d.Token.Roles))
	for _, r := range d.Token.Roles {
		out = append(out, r.Name)
	}
	return out
}

// context maps the token onto the headers auth_token sets and that
// from_environ reads back.
func (d *tokenData) context() *Context {
	t := &d.Token
	c := &Context{
		UserID:         t.User.ID,
		UserName:       t.User.Name,
		UserDomainID:   t.User.Domain.ID,
		UserDomainName: t.User.Domain.Name,
		Roles:          d.roleNames(),
		IsAdminProject: t.IsAdminProject == nil || *t.IsAdminProject,
		ServiceCatalog: t.Catalog,
		TokenInfo:      d.raw,
		ExpiresAt:      d.expiresAt,
	}
	if t.Project != nil {
		c.ProjectID, c.ProjectName = t.Project.ID, t.Project.Name
		c.ProjectDomainID, c.ProjectDomainName = t.Project.Domain.ID, t.Project.Domain.Name
	}
	if t.Domain != nil {
		c.DomainID, c.DomainName = t.Domain.ID, t.Domain.Name
	}
	if t.System != nil && t.System.All {
		c.SystemScope = "all"
	}
	return c
}

// tokenCache holds validated tokens for token_cache_time, keyed by the
// SHA-256 of the token (as auth_token's cache keys), evicting the least
// recently used beyond its size.
type tokenCache struct {
	mu    sync.Mutex
	max   int
	order *list.List
	items map[[32]byte]*list.Element
}

type cacheEntry struct {
	key   [32]byte
	data  *tokenData
	until time.Time
}

func newTokenCache(max int) *tokenCache {
	return &tokenCache{max: max, order: list.New(), items: map[[32]byte]*list.Element{}}
}

func (c *tokenCache) get(k [32]byte, now time.Time) (*tokenData, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		return nil, false
	}
	ce := e.Value.(*cacheEntry)
	if !now.Before(ce.until) {
		c.order.Remove(e)
		delete(c.items, k)
		return nil, false
	}
	c.order.MoveToFront(e)
	return ce.data, true
}

func (c *tokenCache) put(k [32]byte, d *tokenData, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		ce := e.Value.(*cacheEntry)
		ce.data, ce.until = d, until
		c.order.MoveToFront(e)
		return
	}
	c.items[k] = c.order.PushFront(&cacheEntry{key: k, data: d, until: until})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*cacheEntry).key)
	}
}

func (c *tokenCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}
