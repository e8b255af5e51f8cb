// Package swift is a small Swift for tests: it speaks the part of the
// Swift v1 API Ironic uses on 127.0.0.1 — accounts (HEAD, GET, POST of
// X-Account-Meta-* such as the temporary URL keys), containers (PUT,
// HEAD, GET listing, DELETE), objects (PUT with X-Object-Meta-*,
// X-Delete-After and X-Delete-At, GET, HEAD, DELETE) and temporary URLs
// (GET and HEAD checked against the account's keys as the tempurl
// middleware does). Container listings take prefix, marker and limit and
// are cut at a listing limit, as Swift's container_listing_limit. Objects expire by the fixture's clock, which moves
// only with Advance. Token checks, fault injection and a request log
// make the client's behaviour observable.
//
//	sw := swift.New(t).ValidateTokens(ks.TokenValid)
//	sw.Register(ks, ks.ProjectID("service"))
package swift

import (
	"crypto/hmac"
	"crypto/md5"  //nolint:gosec // Swift's ETag is the MD5 of the content
	"crypto/sha1" //nolint:gosec // the tempurl middleware's HMAC-SHA1
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/keystone"
)

// Request is one call the fixture received.
type Request struct {
	Method, Path, Query string
	Token               string
	Header              http.Header
}

// Object is a stored object.
type Object struct {
	Data []byte
	// Header holds the object's X-Object-Meta-* and Content-Type.
	Header http.Header
	// DeleteAt is when the object expires; zero is never.
	DeleteAt time.Time
}

type container struct {
	objects map[string]*Object
}

type account struct {
	meta       http.Header
	containers map[string]*container
}

// Fixture is a running fake Swift.
type Fixture struct {
	t    testing.TB
	addr string
	srv  *http.Server

	mu       sync.Mutex
	now      time.Time
	accounts map[string]*account
	valid    func(token string) bool
	fail     int
	log      []Request
	// listingLimit is the most names one listing answers.
	listingLimit int
}

// defaultListingLimit is Swift's container_listing_limit default.
const defaultListingLimit = 10000

// New starts a Swift on 127.0.0.1 and stops it when the test ends. Any
// account named in a path exists; calls need a token only once
// ValidateTokens is set.
func New(t testing.TB) *Fixture {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("swift fixture: listen: %v", err)
	}
	f := &Fixture{t: t, addr: ln.Addr().String(), now: time.Now(), accounts: map[string]*account{}, listingLimit: defaultListingLimit}
	f.srv = &http.Server{Handler: http.HandlerFunc(f.handle), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = f.srv.Serve(ln) }()
	t.Cleanup(func() { _ = f.srv.Close() })
	return f
}

// URL is the unversioned endpoint (http://127.0.0.1:port).
func (f *Fixture) URL() string { return "http://" + f.addr }

// AccountURL is the storage URL of a project's account, as Keystone's
// catalog lists it: <URL>/v1/AUTH_<project id>.
func (f *Fixture) AccountURL(projectID string) string {
	return f.URL() + "/v1/" + AccountName(projectID)
}

// AccountName is the reseller-prefixed account of a project.
func AccountName(projectID string) string { return "AUTH_" + projectID }

// Register adds this Swift to ks's catalog as the object-store service
// "swift" (public and internal, RegionOne) at the account of projectID,
// the project the tokens are scoped to.
func (f *Fixture) Register(ks *keystone.Fixture, projectID string) *Fixture {
	ks.AddService("object-store", "swift", "RegionOne", f.AccountURL(projectID), "public", "internal")
	return f
}

// ValidateTokens makes every call whose X-Auth-Token valid rejects (or
// that has none) answer 401, temporary URLs excepted.
func (f *Fixture) ValidateTokens(valid func(token string) bool) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.valid = valid
	return f
}

// SetTempURLKey sets the account's X-Account-Meta-Temp-URL-Key (second
// false) or -Key-2 (second true).
func (f *Fixture) SetTempURLKey(accountName, key string, second bool) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := "X-Account-Meta-Temp-Url-Key"
	if second {
		h += "-2"
	}
	f.accountLocked(accountName).meta.Set(h, key)
	return f
}

// ListingLimit sets the most names a container listing answers (Swift's
// container_listing_limit), so that a client has to page with marker.
func (f *Fixture) ListingLimit(n int) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listingLimit = n
	return f
}

// Now is the fixture's clock.
func (f *Fixture) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the clock forward; objects whose expiry passes are gone.
func (f *Fixture) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

// Fail makes every call answer status until Heal.
func (f *Fixture) Fail(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = status
}

// Heal ends Fail.
func (f *Fixture) Heal() { f.Fail(0) }

// Requests is the calls received so far.
func (f *Fixture) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.log...)
}

// Object is a copy of a live object, nil when absent or expired.
func (f *Fixture) Object(accountName, containerName, name string) *Object {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.objectLocked(accountName, containerName, name)
	if o == nil {
		return nil
	}
	return &Object{Data: append([]byte(nil), o.Data...), Header: o.Header.Clone(), DeleteAt: o.DeleteAt}
}

// Objects lists the live objects' names of a container, sorted; nil when
// the container does not exist.
func (f *Fixture) Objects(accountName, containerName string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.accountLocked(accountName).containers[containerName]
	if c == nil {
		return nil
	}
	return f.namesLocked(c)
}

// PutObject stores an object directly, creating its container.
func (f *Fixture) PutObject(accountName, containerName, name string, data []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.accountLocked(accountName)
	c := a.containers[containerName]
	if c == nil {
		c = &container{objects: map[string]*Object{}}
		a.containers[containerName] = c
	}
	c.objects[name] = &Object{Data: append([]byte(nil), data...), Header: http.Header{}}
}

func (f *Fixture) accountLocked(name string) *account {
	a := f.accounts[name]
	if a == nil {
		a = &account{meta: http.Header{}, containers: map[string]*container{}}
		f.accounts[name] = a
	}
	return a
}

func (f *Fixture) objectLocked(accountName, containerName, name string) *Object {
	c := f.accountLocked(accountName).containers[containerName]
	if c == nil {
		return nil
	}
	return f.liveLocked(c, name)
}

func (f *Fixture) namesLocked(c *container) []string {
	names := []string{}
	for n := range c.objects {
		if f.liveLocked(c, n) != nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// liveLocked is the named object unless it has expired, which deletes
// it as Swift's object expirer would.
func (f *Fixture) liveLocked(c *container, name string) *Object {
	o := c.objects[name]
	if o != nil && !o.DeleteAt.IsZero() && !f.now.Before(o.DeleteAt) {
		delete(c.objects, name)
		return nil
	}
	return o
}

func (f *Fixture) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Token: r.Header.Get("X-Auth-Token"), Header: r.Header.Clone()})
	f.t.Logf("swift fixture: %s %s", r.Method, r.URL.RequestURI())
	if f.fail != 0 {
		http.Error(w, "injected failure", f.fail)
		return
	}
	// /v1/<account>[/<container>[/<object>]]
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 4)
	if len(parts) < 2 || parts[0] != "v1" || parts[1] == "" {
		http.Error(w, "Bad URL", http.StatusPreconditionFailed)
		return
	}
	acct := f.accountLocked(parts[1])
	q := r.URL.Query()
	if q.Has("temp_url_sig") {
		if len(parts) != 4 || !f.tempURLValid(acct, r) {
			w.Header().Set("Www-Authenticate", `Swift realm="`+parts[1]+`"`)
			http.Error(w, "Temp URL invalid", http.StatusUnauthorized)
			return
		}
	} else if f.valid != nil && !f.valid(r.Header.Get("X-Auth-Token")) {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	switch {
	case len(parts) == 2 || parts[2] == "":
		f.serveAccount(w, r, acct)
	case len(parts) == 3 || parts[3] == "":
		f.serveContainer(w, r, acct, parts[2], body)
	default:
		f.serveObject(w, r, acct, parts[2], parts[3], body)
	}
}

// tempURLValid is the tempurl middleware's check: an unexpired signature
// of GET (HEAD may use GET's) with one of the account's keys.
func (f *Fixture) tempURLValid(acct *account, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	q := r.URL.Query()
	exp, err := strconv.ParseInt(q.Get("temp_url_expires"), 10, 64)
	if err != nil || f.now.Unix() >= exp {
		return false
	}
	sig := q.Get("temp_url_sig")
	for _, h := range []string{"X-Account-Meta-Temp-Url-Key", "X-Account-Meta-Temp-Url-Key-2"} {
		key := acct.meta.Get(h)
		if key == "" {
			continue
		}
		for _, m := range []string{r.Method, http.MethodGet} {
			mac := hmac.New(sha1.New, []byte(key))
			mac.Write([]byte(m + "\n" + strconv.FormatInt(exp, 10) + "\n" + r.URL.Path))
			if hmac.Equal([]byte(hex.EncodeToString(mac.Sum(nil))), []byte(sig)) {
				return true
			}
		}
	}
	return false
}

func (f *Fixture) serveAccount(w http.ResponseWriter, r *http.Request, acct *account) {
	switch r.Method {
	case http.MethodHead, http.MethodGet:
		for k, v := range acct.meta {
			w.Header()[k] = v
		}
		w.Header().Set("X-Account-Container-Count", strconv.Itoa(len(acct.containers)))
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		names := make([]string, 0, len(acct.containers))
		for n := range acct.containers {
			names = append(names, n)
		}
		sort.Strings(names)
		writeListing(w, r, names)
	case http.MethodPost:
		for k, v := range r.Header {
			if strings.HasPrefix(k, "X-Account-Meta-") {
				if v[0] == "" {
					acct.meta.Del(k)
				} else {
					acct.meta[k] = v
				}
			}
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

func writeListing(w http.ResponseWriter, r *http.Request, names []string) {
	if len(names) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.URL.Query().Get("format") == "json" {
		out := make([]map[string]string, len(names))
		for i, n := range names {
			out[i] = map[string]string{"name": n}
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(out)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, strings.Join(names, "\n")+"\n")
}

func (f *Fixture) serveContainer(w http.ResponseWriter, r *http.Request, acct *account, name string, _ []byte) {
	c := acct.containers[name]
	switch r.Method {
	case http.MethodPut:
		if c != nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		acct.containers[name] = &container{objects: map[string]*Object{}}
		w.WriteHeader(http.StatusCreated)
	case http.MethodHead, http.MethodGet:
		if c == nil {
			http.Error(w, "Not Found", http.StatusNotFound)
			return
		}
		names := f.namesLocked(c)
		w.Header().Set("X-Container-Object-Count", strconv.Itoa(len(names)))
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		page, ok := f.pageLocked(r, names)
		if !ok {
			http.Error(w, "Invalid limit", http.StatusPreconditionFailed)
			return
		}
		writeListing(w, r, page)
	case http.MethodDelete:
		if c == nil {
			http.Error(w, "Not Found", http.StatusNotFound)
			return
		}
		if len(f.namesLocked(c)) > 0 {
			http.Error(w, "There was a conflict when trying to complete your request.", http.StatusConflict)
			return
		}
		delete(acct.containers, name)
		w.WriteHeader(http.StatusNoContent)
	default:
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// pageLocked is the part of a sorted listing a request asks for: names
// with its prefix after its marker, at most limit of them and never more
// than the listing limit. A limit that is no number or over the listing
// limit is refused, as Swift does.
func (f *Fixture) pageLocked(r *http.Request, names []string) ([]string, bool) {
	q := r.URL.Query()
	limit := f.listingLimit
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > f.listingLimit {
			return nil, false
		}
		limit = n
	}
	prefix, marker := q.Get("prefix"), q.Get("marker")
	page := []string{}
	for _, n := range names {
		if len(page) == limit {
			break
		}
		if strings.HasPrefix(n, prefix) && (marker == "" || n > marker) {
			page = append(page, n)
		}
	}
	return page, true
}

func (f *Fixture) serveObject(w http.ResponseWriter, r *http.Request, acct *account, cname, name string, body []byte) {
	c := acct.containers[cname]
	if c == nil {
		http.Error(w, "Not Found", http.StatusNotFound)
		return
	}
	switch r.Method {
	case http.MethodPut:
		o := &Object{Data: body, Header: http.Header{}}
		for k, v := range r.Header {
			if strings.HasPrefix(k, "X-Object-Meta-") || k == "Content-Type" {
				o.Header[k] = v
			}
		}
		if s := r.Header.Get("X-Delete-After"); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 0 {
				http.Error(w, "Non-integer X-Delete-After", http.StatusBadRequest)
				return
			}
			o.DeleteAt = f.now.Add(time.Duration(n) * time.Second)
		} else if s := r.Header.Get("X-Delete-At"); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n <= f.now.Unix() {
				http.Error(w, "X-Delete-At in past", http.StatusBadRequest)
				return
			}
			o.DeleteAt = time.Unix(n, 0)
		}
		c.objects[name] = o
		sum := md5.Sum(body) //nolint:gosec // Swift's ETag
		w.Header().Set("Etag", hex.EncodeToString(sum[:]))
		w.WriteHeader(http.StatusCreated)
	case http.MethodGet, http.MethodHead:
		o := f.liveLocked(c, name)
		if o == nil {
			http.Error(w, "Not Found", http.StatusNotFound)
			return
		}
		for k, v := range o.Header {
			w.Header()[k] = v
		}
		sum := md5.Sum(o.Data) //nolint:gosec // Swift's ETag
		w.Header().Set("Etag", hex.EncodeToString(sum[:]))
		if !o.DeleteAt.IsZero() {
			w.Header().Set("X-Delete-At", strconv.FormatInt(o.DeleteAt.Unix(), 10))
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(o.Data)))
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(o.Data)
		}
	case http.MethodDelete:
		if f.liveLocked(c, name) == nil {
			http.Error(w, "Not Found", http.StatusNotFound)
			return
		}
		delete(c.objects, name)
		w.WriteHeader(http.StatusNoContent)
	default:
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// IronicSection is an Ironic [swift] section that authenticates with ks
// as user in project (both in the default domain) and so finds the
// object store Register added to the catalog.
func IronicSection(ks *keystone.Fixture, user, password, project string) map[string]string {
	return map[string]string{
		"auth_type": "password", "auth_url": ks.URL(), "username": user, "password": password,
		"user_domain_id": "default", "project_name": project, "project_domain_id": "default",
	}
}
