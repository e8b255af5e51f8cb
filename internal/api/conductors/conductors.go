// Package conductors serves /v1/conductors (1.49+) as upstream's
// ironic/api/controllers/v1/conductor.py: the registered conductors,
// alive when online with a heartbeat newer than
// [conductor]heartbeat_timeout.
package conductors

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/apiutil/respond"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/config"
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
	timeout := time.Duration(rc.Config.IntOf(config.ConductorHeartbeatTimeout)) * time.Second
	d.Set("alive", c.Online && h.Now().Sub(last) <= timeout)
	if err := apiutil.CheckFields(d, fields); err != nil {
		return nil, err
	}
	if sanitize {
		d.KeepOnly(fields)
	}
	return d, nil
}

func (h *handlers) get(ctx context.Context, hostname string) (*model.Conductor, error) {
	return apiutil.Found(ctx, hostname, h.getConductor, conductorNotFound, "conductor")
}

// getConductor is the conductor named hostname, whatever its group.
func (h *handlers) getConductor(ctx context.Context, hostname string) (*model.Conductor, error) {
	return h.Store.GetConductor(ctx, hostname, nil)
}

func conductorNotFound(hostname string) error {
	return errs.New(errs.ClassConductorNotFound, map[string]any{"conductor": hostname})
}

func (h *handlers) list(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	l := apiutil.Listing[*model.Conductor]{
		ListSpec: apiutil.ListSpec{
			CheckMarker: func(marker *string) error { return hostPort("marker", marker) },
			Schema:      indexQuery,
			Check: func(_ apiutil.Query, fields []string, v microversion.Version) error {
				return collection.CheckAllowSpecifyFields(fields, v)
			},
			DefaultFields:   defaultFields,
			InvalidSortKeys: invalidSortKeys,
		},
		Key: "conductors", Resource: "conductors",
		What: "conductor", Get: h.getConductor, NotFound: conductorNotFound,
		List:     h.Store.ListConductors,
		MarkerOf: func(c *model.Conductor) string { return c.Hostname },
	}
	return respond.JSON(w, http.StatusOK)(l.Page(r, rc.Version, rc.Config.IntOf(config.APIMaxLimit), rc.PublicURL,
		func(c *model.Conductor, fields []string) (*apiutil.Dict, error) {
			return h.convert(rc, c, fields, true)
		}))
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
	if err := showQuery.Validate(rc.KeywordArgs(apiutil.FieldsArgs(rawFields, fields))); err != nil {
		return err
	}
	v := rc.Version
	if err := collection.CheckAllowSpecifyFields(fields, v); err != nil {
		return err
	}
	if err := collection.CheckAllowedFields(fields, v); err != nil {
		return err
	}
	c, err := h.get(r.Context(), hostname)
	if err != nil {
		return err
	}
	return respond.JSON(w, http.StatusOK)(h.convert(rc, c, fields, true))
}
