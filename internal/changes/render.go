package changes

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/openkeel/ironic/internal/store"
)

// Renderer gives the object of a change as the API renders it to the
// caller of r; visible is false when the caller may not see it.
type Renderer interface {
	Render(r *http.Request, c store.Change) (object json.RawMessage, visible bool, err error)
}

// DeletedPolicy says whether the caller of r may see the deletion of c's
// object: the object is gone, so its GET cannot be asked; the change row
// keeps the owner and lessee that policy looks at.
type DeletedPolicy func(r *http.Request, c store.Change) bool

// APIRenderer renders through the API itself: the object of a change is
// the body of the resource's GET at the latest microversion, asked with
// the stream request's own credentials, so that authentication, policy,
// field visibility and the masking of secrets are exactly the resource
// GET's. A 404 or 403 from it means the caller may not see the object.
//
// Renders are shared between the streams of one caller: their key is
// the change's seq and the request headers that may identify the caller.
type APIRenderer struct {
	// API is the /v1 handler (with its authentication and policy).
	API http.Handler
	// Deleted decides deletions; nil shows them to nobody.
	Deleted DeletedPolicy

	mu    sync.Mutex
	cache map[renderKey]*rendered
}

var _ Renderer = (*APIRenderer)(nil)

type renderKey struct {
	seq    int64
	caller [32]byte
}

type rendered struct {
	done    chan struct{}
	object  json.RawMessage
	visible bool
	err     error
}

// renderCacheSize bounds the shared renders kept; past it the cache is
// dropped whole (a stream that falls behind renders again).
const renderCacheSize = 16384

// objectPaths are the GET paths of each resource's objects.
var objectPaths = map[store.ChangeResource]string{
	store.ChangeNode:       "/v1/nodes/",
	store.ChangePort:       "/v1/ports/",
	store.ChangePortgroup:  "/v1/portgroups/",
	store.ChangeAllocation: "/v1/allocations/",
	store.ChangeConductor:  "/v1/conductors/",
}

// Render implements Renderer.
func (a *APIRenderer) Render(r *http.Request, c store.Change) (json.RawMessage, bool, error) {
	if c.Action == store.ChangeDeleted {
		return nil, a.Deleted != nil && a.Deleted(r, c), nil
	}
	key := renderKey{seq: c.Seq, caller: callerKey(r.Header)}
	a.mu.Lock()
	if a.cache == nil || len(a.cache) >= renderCacheSize {
		a.cache = map[renderKey]*rendered{}
	}
	e, ok := a.cache[key]
	if !ok {
		e = &rendered{done: make(chan struct{})}
		a.cache[key] = e
	}
	a.mu.Unlock()
	if ok {
		select {
		case <-e.done:
			return e.object, e.visible, e.err
		case <-r.Context().Done():
			return nil, false, r.Context().Err()
		}
	}
	e.object, e.visible, e.err = a.get(r, c)
	close(e.done)
	return e.object, e.visible, e.err
}

// get asks the API for the object.
func (a *APIRenderer) get(r *http.Request, c store.Change) (json.RawMessage, bool, error) {
	path, ok := objectPaths[c.Resource]
	if !ok {
		return nil, false, fmt.Errorf("change %d: unknown resource %q", c.Seq, c.Resource)
	}
	// The GET is this process's: it must not end with one stream.
	ctx := context.WithoutCancel(r.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, path+url.PathEscape(c.UUID), nil)
	if err != nil {
		return nil, false, fmt.Errorf("change %d: %w", c.Seq, err)
	}
	req.RemoteAddr = r.RemoteAddr
	req.Host = r.Host
	for k, vs := range r.Header {
		if !streamOnly[k] {
			req.Header[k] = vs
		}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-OpenStack-Ironic-API-Version", "latest")
	w := &recorder{header: http.Header{}, status: http.StatusOK}
	a.API.ServeHTTP(w, req)
	switch {
	case w.status == http.StatusOK:
		return json.RawMessage(bytes.Clone(w.body.Bytes())), true, nil
	case w.status == http.StatusNotFound || w.status == http.StatusForbidden:
		return nil, false, nil
	}
	return nil, false, fmt.Errorf("change %d: GET %s answered %d: %s", c.Seq, req.URL.Path, w.status, strings.TrimSpace(w.body.String()))
}

// streamOnly are request headers of the stream that are not the
// caller's identity: not passed to the GET, not part of the render key.
var streamOnly = map[string]bool{
	"Last-Event-Id": true, "Accept": true, "Accept-Encoding": true, "Cache-Control": true,
	"Connection": true, "User-Agent": true, "X-Openstack-Ironic-Api-Version": true,
	"Openstack-Api-Version": true, "X-Openstack-Request-Id": true, "Referer": true,
}

// callerKey digests the headers that may identify the caller.
func callerKey(h http.Header) [32]byte {
	names := make([]string, 0, len(h))
	for k := range h {
		if !streamOnly[k] {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	d := sha256.New()
	for _, k := range names {
		for _, v := range h[k] {
			fmt.Fprintf(d, "%s\x00%s\x00", k, v)
		}
	}
	var out [32]byte
	copy(out[:], d.Sum(nil))
	return out
}

// recorder keeps the API's answer to a render's GET.
type recorder struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if !w.wrote {
		w.status, w.wrote = status, true
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}
