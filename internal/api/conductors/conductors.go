// Package conductors serves /v1/conductors (1.49+) as upstream's
// ironic/api/controllers/v1/conductor.py: the registered conductors,
// alive when online with a heartbeat newer than
// [conductor]heartbeat_timeout.
package conductors

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
)

// Deps is what the conductor handlers need.
type Deps struct {
	Store store.Store
	// Now is the clock deciding "alive"; nil is time.Now.
	Now func() time.Time
}

type handlers struct {
	Deps
}

// Register adds the conductor handlers to m.
func Register(m map[string]api.HandlerFunc, d Deps) {
	if d.Now == nil {
		d.Now = time.Now
	}
	h := &handlers{Deps: d}
	m["GET /v1/conductors"] = h.list
	m["GET /v1/conductors/{hostname}"] = h.show
}

var (
	indexQuery = apiutil.MustRequestSchema("conductor_index_request_query")
	showQuery  = apiutil.MustRequestSchema("conductor_show_request_query")
)

// defaultFields are what a list returns without ?fields or ?detail.
var defaultFields = []string{"hostname", "conductor_group", "alive"}

// invalidSortKeys are the computed fields.
var invalidSortKeys = []string{"alive", "drivers"}

// hostPort is args.host_port (oslo netutils.parse_host_port): a host with
// an optional integer port, IPv6 in brackets.
func hostPort(name string, value *string) error {
	if value == nil {
		return nil
	}
	v := *value
	host, port, hasPort := v, "", false
	switch {
	case strings.HasPrefix(v, "["):
		h, rest, ok := strings.Cut(v[1:], "]")
		if !ok {
			return errs.InvalidParameterValue(name + ": not enough values to unpack (expected 2, got 1)")
		}
		host = h
		if strings.Contains(rest, ":") {
			port, hasPort = strings.Split(rest, ":")[1], true
		}
	case strings.Count(v, ":") == 1:
		host, port, hasPort = strings.Split(v, ":")[0], strings.Split(v, ":")[1], true
	}
	if hasPort {
		if _, err := strconv.Atoi(strings.TrimSpace(port)); err != nil {
			return errs.InvalidParameterValue(fmt.Sprintf("%s: invalid literal for int() with base 10: %s", name, apiutil.PyRepr(port)))
		}
	}
	if host == "" {
		return errs.InvalidParameterValue("Missing host in " + name)
	}
	return nil
}

// convert is convert_with_links.
func (h *handlers) convert(rc *api.RequestContext, c *model.Conductor, fields []string, sanitize bool) (*apiutil.Dict, error) {
	d := apiutil.NewDict()
	d.Set("created_at", apiutil.ISOTime(c.CreatedAt))
	d.Set("updated_at", apiutil.OptISOTime(c.UpdatedAt))
	d.Set("hostname", c.Hostname)
	d.Set("conductor_group", c.ConductorGroup)
	d.Set("drivers", apiutil.EmptyList(c.Drivers))
	d.Set("links", collection.SelfAndBookmark(rc.PublicURL, "conductors", c.Hostname))
	last := c.CreatedAt
	if c.UpdatedAt != nil {
		last = *c.UpdatedAt
	}
	timeout := time.Duration(rc.Config.Int("conductor", "heartbeat_timeout")) * time.Second
	d.Set("alive", c.Online && h.Now().Sub(last) <= timeout)
	if fields != nil {
		if err := collection.CheckInvalidFields(fields, d.Keys()); err != nil {
			return nil, err
		}
	}
	if sanitize {
		d.KeepOnly(fields)
	}
	return d, nil
}

func (h *handlers) get(r *http.Request, hostname string) (*model.Conductor, error) {
	c, err := h.Store.GetConductor(r.Context(), hostname, nil)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errs.New("ConductorNotFound", map[string]any{"conductor": hostname})
	}
	if err != nil {
		return nil, fmt.Errorf("get conductor %s: %w", hostname, err)
	}
	return c, nil
}

func (h *handlers) list(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	q, err := apiutil.ParseQuery(r, "marker", "limit", "sort_key", "sort_dir", "fields", "detail")
	if err != nil {
		return err
	}
	marker := q.Get("marker")
	if err := hostPort("marker", marker); err != nil {
		return err
	}
	limit, err := collection.Integer("limit", q.Get("limit"))
	if err != nil {
		return err
	}
	rawFields := q.Get("fields")
	fields := collection.StringList(rawFields)
	rawDetail := q.Get("detail")
	detail, err := collection.Boolean("detail", rawDetail)
	if err != nil {
		return err
	}
	kwargs := map[string]any{}
	for _, k := range []string{"marker", "sort_key", "sort_dir"} {
		if v := q.Get(k); v != nil {
			kwargs[k] = *v
		}
	}
	if limit != nil {
		kwargs["limit"] = *limit
	}
	if rawFields != nil {
		kwargs["fields"] = anyList(fields)
	}
	if detail != nil {
		kwargs["detail"] = *detail
	}
	if err := indexQuery.Validate(kwargs); err != nil {
		return err
	}
	v := rc.Version
	if err := collection.CheckAllowSpecifyFields(fields, v); err != nil {
		return err
	}
	sortKey := "id"
	if k := q.Get("sort_key"); k != nil {
		sortKey = *k
	}
	if err := collection.CheckAllowedFields(fields, v); err != nil {
		return err
	}
	if err := collection.CheckAllowedFields([]string{sortKey}, v); err != nil {
		return err
	}
	fields, err = collection.ReturnFields(fields, rawFields, detail, rawDetail, defaultFields, collection.DetailAllowed(v), nil)
	if err != nil {
		return err
	}
	lim, err := collection.ValidateLimit(limit, rc.Config.Int("api", "max_limit"))
	if err != nil {
		return err
	}
	sortDir, err := collection.ValidateSortDir(q.Get("sort_dir"))
	if err != nil {
		return err
	}
	if err := collection.ValidateSortKey(sortKey, invalidSortKeys); err != nil {
		return err
	}
	opts := store.ListOptions{Limit: lim, SortKey: sortKey, SortDir: sortDir}
	if marker != nil {
		if _, err := h.get(r, *marker); err != nil {
			return err
		}
		opts.Marker = *marker
	}
	list, err := h.Store.ListConductors(r.Context(), opts)
	switch {
	case errors.Is(err, store.ErrMarkerNotFound):
		return errs.New("ConductorNotFound", map[string]any{"conductor": opts.Marker})
	case errors.Is(err, store.ErrInvalidParameter):
		return errs.InvalidParameterValue(err.Error())
	case err != nil:
		return fmt.Errorf("list conductors: %w", err)
	}
	items := make([]*apiutil.Dict, 0, len(list))
	for _, c := range list {
		d, err := h.convert(rc, c, fields, true)
		if err != nil {
			return err
		}
		items = append(items, d)
	}
	out := apiutil.NewDict()
	out.Set("conductors", items)
	last := ""
	if len(list) > 0 {
		last = list[len(list)-1].Hostname
	}
	params := []collection.Param{{Key: "sort_key", Value: sortKey}, {Key: "sort_dir", Value: sortDir}}
	if detail != nil {
		params = append(params, collection.Param{Key: "detail", Value: *detail})
	}
	if next := collection.Next(rc.PublicURL, "conductors", len(list), lim, last, fields, params...); next != "" {
		out.Set("next", next)
	}
	return api.WriteJSON(w, http.StatusOK, out)
}

func (h *handlers) show(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	q, err := apiutil.ParseQuery(r, "fields")
	if err != nil {
		return err
	}
	hostname := rc.Param("hostname")
	if err := hostPort("hostname", &hostname); err != nil {
		return err
	}
	rawFields := q.Get("fields")
	fields := collection.StringList(rawFields)
	kwargs := map[string]any{}
	if rawFields != nil {
		kwargs["fields"] = anyList(fields)
	}
	if err := showQuery.Validate(kwargs); err != nil {
		return err
	}
	v := rc.Version
	if err := collection.CheckAllowSpecifyFields(fields, v); err != nil {
		return err
	}
	if err := collection.CheckAllowedFields(fields, v); err != nil {
		return err
	}
	c, err := h.get(r, hostname)
	if err != nil {
		return err
	}
	d, err := h.convert(rc, c, fields, true)
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, d)
}

func anyList(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}
