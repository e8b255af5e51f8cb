package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// A list page (GET /v1/nodes, its detail and field forms) is written
// straight from the scanned rows into one buffer, in the bytes convert
// and api.WriteJSON give one node at a time (the single-node answers
// still go that way, and the tests hold the two to the same bytes). What
// convert and sanitize decide from the request alone (which keys, in which
// order, what the version hides or renames, which secrets are masked, the
// links' prefix) is decided once per page in a pagePlan; per node remain
// the values, the policy rules that look at the node, and the lookups of
// conductor, allocation and chassis.

// pageBuffer is the reusable state of one page being written.
type pageBuffer struct {
	b  []byte
	cw apiutil.ColumnWriter
}

// maxPooledPage is the largest buffer kept for reuse: a page far above the
// usual size is let go rather than held by the pool.
const maxPooledPage = 8 << 20

// getPage returns a buffer for a page of nodes. The pool loses its
// buffers at garbage collections; a new buffer is then sized from the
// bytes per node of the last page written, rather than grown by doubling
// through copies of itself.
func (h *handlers) getPage(plan *pagePlan, nodes int) *pageBuffer {
	p, ok := h.pages.Get().(*pageBuffer)
	if !ok {
		p = &pageBuffer{}
	}
	if want := nodes*int(h.pageNodeBytes[plan.sizeClass()].Load()) + 1024; cap(p.b) < want {
		p.b = make([]byte, 0, min(want, maxPooledPage))
	}
	return p
}

// putPage returns p to the pool and records the page's bytes per node.
func (h *handlers) putPage(plan *pagePlan, p *pageBuffer, nodes int) {
	if nodes > 0 {
		h.pageNodeBytes[plan.sizeClass()].Store(int64(len(p.b)/nodes + 1))
	}
	if cap(p.b) > maxPooledPage {
		return
	}
	p.b = p.b[:0]
	h.pages.Put(p)
}

// pageSizeClasses is how many sizes of node getPage tells apart: pages
// are told apart by their number of fields (a list, Nova's fields, a
// detail page), the last class holding every larger count.
const pageSizeClasses = 80

func (p *pagePlan) sizeClass() int { return min(len(p.fields), pageSizeClasses-1) }

// fieldKind is how a page field's value is found.
type fieldKind int

const (
	kindScalar fieldKind = iota
	kindJSON
	kindLinks
	kindConductor
	kindAllocation
	kindChassis
	kindSubLinks
)

// pageField is one key of every node of a page.
type pageField struct {
	name string
	// key is the key as written, with its separators: `"name": `.
	key  []byte
	kind fieldKind
	// scalar writes the value of a kindScalar field.
	scalar func(b []byte, n *model.Node) []byte
	// column reads the stored text of a kindJSON field; mask is how it is
	// masked.
	column func(j *store.NodeJSON) string
	mask   apiutil.Masking
	// redactRule, when set, is the rule without which the value is
	// replaced by redacted (written in full).
	redactRule string
	redacted   []byte
	// sub is the path below the node of a kindSubLinks field.
	sub string
}

// pagePlan is what a page writes for every node.
type pagePlan struct {
	fields []pageField
	// queryErr and invalidErr are convert's answers to the field list,
	// given (in this order, around the lookups) when there is a node.
	queryErr, invalidErr error
	allowed              func(rule string, n *model.Node) bool
	// self and bookmark are the escaped link prefixes, up to the node's
	// UUID.
	self, bookmark []byte
}

// planKey is what a plan without a field list depends on besides the
// links' prefix and the policy hook: there are a few hundred at most.
type planKey struct {
	v                      microversion.Version
	driverSecrets, secrets bool
	filtered               bool
}

// planPage decides, as convert and sanitize would for any node, which
// keys a node of the page has and how each is written. Without a field
// list (detail pages, a one-node GET) the plan is made once per version and
// view and kept: making it was a third of a one-node GET's allocations
// (issue 29). A field list, the caller's choice, is planned each time.
func (h *handlers) planPage(rc *api.RequestContext, vw view, fields []string) (*pagePlan, error) {
	var p *pagePlan
	if fields == nil {
		key := planKey{rc.Version, vw.showDriverSecrets, vw.showInstanceSecrets, vw.allowed != nil}
		kept, ok := h.plans.Load(key)
		if !ok {
			made, err := planFields(rc.Version, vw, nil)
			if err != nil {
				return nil, err
			}
			kept, _ = h.plans.LoadOrStore(key, made)
		}
		c := *kept.(*pagePlan)
		p = &c
	} else {
		var err error
		if p, err = planFields(rc.Version, vw, fields); err != nil {
			return nil, err
		}
	}
	p.allowed = vw.allowed
	p.self = linkPrefix(rc.PublicURL + "/v1/nodes/")
	p.bookmark = linkPrefix(rc.PublicURL + "/nodes/")
	return p, nil
}

// planFields is the part of a plan that the version, the view's masking
// and the field list decide.
func planFields(v microversion.Version, vw view, fields []string) (*pagePlan, error) {
	p := &pagePlan{}
	qf, err := queryFields(fields)
	if err != nil {
		p.queryErr = err
		return p, nil
	}
	keys := []string{"uuid", "created_at", "updated_at"}
	add := func(k string) {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, f := range qf {
		add(f)
	}
	add("links")
	wanted := func(f string) bool { return fields == nil || slices.Contains(fields, f) }
	if microversion.AllowExposeConductors.Allows(v) && wanted("conductor") {
		add("conductor")
	}
	if microversion.AllowAllocations.Allows(v) && wanted("allocation_uuid") {
		add("allocation_uuid")
	}
	if wanted("chassis_uuid") {
		add("chassis_uuid")
	}
	if fields != nil {
		p.invalidErr = collection.CheckInvalidFields(fields, keys)
	}
	subs := map[string]bool{}
	if fields == nil {
		for _, sub := range []string{"ports", "states", "portgroups", "volume"} {
			add(sub)
			subs[sub] = true
		}
	}
	hidden := microversion.DisallowedFields(v)
	if !microversion.AllowVolume.Allows(v) {
		hidden = append(hidden, "volume")
	}
	if !microversion.AllowPortgroupsSubcontrollers.Allows(v) {
		hidden = append(hidden, "portgroups")
	}
	if !microversion.AllowLinksNodeStatesAndDriverProperties.Allows(v) {
		hidden = append(hidden, "states")
	}
	var cw apiutil.ColumnWriter
	for _, k := range keys {
		if k != "links" && fields != nil && !slices.Contains(fields, k) || slices.Contains(hidden, k) {
			continue
		}
		f := pageField{name: k, key: append(pyfmt.AppendJSONString(nil, k), ": "...)}
		if len(p.fields) > 0 {
			f.key = append([]byte(", "), f.key...)
		}
		switch {
		case k == "links":
			f.kind = kindLinks
		case k == "conductor":
			f.kind = kindConductor
		case k == "allocation_uuid":
			f.kind = kindAllocation
		case k == "chassis_uuid":
			f.kind = kindChassis
		case subs[k]:
			f.kind, f.sub = kindSubLinks, "/"+k
		case isJSONColumn(k):
			f.kind, f.column = kindJSON, jsonColumn(k)
			f.mask = columnMasking(k, vw)
		case k == "provision_state":
			f.scalar = provisionStateWriter(v)
		default:
			f.scalar = scalarWriters[k]
			if f.scalar == nil {
				return nil, fmt.Errorf("node field %q has no writer", k)
			}
		}
		if vw.allowed != nil {
			for _, red := range redactions {
				if red.field != k {
					continue
				}
				f.redactRule = red.rule
				if f.redacted, err = redactedValue(&cw, red.text, red.dict, f.mask); err != nil {
					return nil, err
				}
			}
		}
		p.fields = append(p.fields, f)
	}
	return p, nil
}

// linkPrefix is the start of a link object up to the node's UUID.
func linkPrefix(base string) []byte {
	return pyfmt.AppendJSONStringContent([]byte(`{"href": "`), base)
}

// columnMasking is sanitize's masking of a JSON field for the caller.
func columnMasking(field string, vw view) apiutil.Masking {
	switch {
	case field == "driver_info" && !vw.showDriverSecrets:
		return apiutil.Masking{Dict: true, Truthy: []string{"snmp_auth_key", "snmp_priv_key"}}
	case field == "instance_info" && !vw.showInstanceSecrets:
		return apiutil.Masking{Dict: true, Truthy: []string{"configdrive", "image_url"}}
	case field == "driver_internal_info" && !vw.showDriverSecrets:
		return apiutil.Masking{Dict: true}
	}
	return apiutil.Masking{}
}

// redactedValue is a redaction's value as written, masked as its field.
func redactedValue(cw *apiutil.ColumnWriter, text string, dict bool, m apiutil.Masking) ([]byte, error) {
	if !dict {
		return pyfmt.AppendJSONString(nil, text), nil
	}
	raw, err := json.Marshal(map[string]any{"content": text})
	if err != nil {
		return nil, fmt.Errorf("redaction: %w", err)
	}
	return cw.AppendObject(nil, string(raw), m)
}

// provisionStateWriter writes provision_state under sanitize's renames
// for version v.
func provisionStateWriter(v microversion.Version) func([]byte, *model.Node) []byte {
	nullAvailable := v.Minor < microversion.Minor2AvailableState
	oldInspect := !microversion.AllowInspectWaitState.Allows(v)
	return func(b []byte, n *model.Node) []byte {
		switch ps := n.ProvisionState; {
		case nullAvailable && ps == states.Available:
			return append(b, "null"...)
		case oldInspect && ps == states.InspectWait:
			return pyfmt.AppendJSONString(b, states.Inspecting)
		}
		return appendNullString(b, n.ProvisionState)
	}
}

// writePage answers a page of rows: {"nodes": [...], "next": ...}. It
// consumes rows: each is dropped once written, so that the collector can
// take a row's text while the rest of the page is rendered, instead of
// the whole page's rows living beside its answer (issue 29: 8 concurrent
// detail pages were the process's peak memory).
func (h *handlers) writePage(ctx context.Context, w http.ResponseWriter, rc *api.RequestContext, vw view,
	rows []store.NodeRow, fields []string, next string) error {
	plan, err := h.planPage(rc, vw, fields)
	if err != nil {
		return err
	}
	pb := h.getPage(plan, len(rows))
	defer func() { h.putPage(plan, pb, len(rows)) }()
	b := append(pb.b[:0], `{"nodes": [`...)
	for i := range rows {
		if i > 0 {
			b = append(b, ", "...)
		}
		if b, err = h.appendNode(ctx, b, &pb.cw, plan, &rows[i]); err != nil {
			pb.b = b
			return err
		}
		rows[i] = store.NodeRow{}
	}
	b = append(b, ']')
	if next != "" {
		b = append(b, `, "next": `...)
		b = pyfmt.AppendJSONString(b, next)
	}
	b = append(b, '}')
	pb.b = b
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(b); err != nil && !errors.Is(err, http.ErrBodyNotAllowed) {
		return fmt.Errorf("write answer: %w", err)
	}
	return nil
}

// appendNode writes one node of the page.
func (h *handlers) appendNode(ctx context.Context, b []byte, cw *apiutil.ColumnWriter, p *pagePlan, row *store.NodeRow) ([]byte, error) {
	if p.queryErr != nil {
		return b, p.queryErr
	}
	n := &row.Node
	var conductor, allocation string
	var hasConductor, hasAllocation bool
	var chassis any
	for i := range p.fields {
		var err error
		switch p.fields[i].kind {
		case kindConductor:
			conductor, hasConductor, err = h.conductorOf(ctx, n)
		case kindAllocation:
			allocation, hasAllocation, err = h.allocationUUID(ctx, n)
		case kindChassis:
			chassis, err = h.chassisUUID(ctx, n)
		}
		if err != nil {
			return b, err
		}
	}
	if p.invalidErr != nil {
		return b, p.invalidErr
	}
	b = append(b, '{')
	for i := range p.fields {
		f := &p.fields[i]
		b = append(b, f.key...)
		if f.redactRule != "" && !p.allowed(f.redactRule, n) {
			b = append(b, f.redacted...)
			continue
		}
		var err error
		switch f.kind {
		case kindScalar:
			b = f.scalar(b, n)
		case kindJSON:
			b, err = cw.AppendObject(b, f.column(&row.JSON), f.mask)
		case kindLinks:
			b = appendLinks(b, p, n.UUID, "")
		case kindSubLinks:
			b = appendLinks(b, p, n.UUID, f.sub)
		case kindConductor:
			b = appendOptString(b, optional(conductor, hasConductor))
		case kindAllocation:
			b = appendOptString(b, optional(allocation, hasAllocation))
		case kindChassis:
			if s, ok := chassis.(string); ok {
				b = pyfmt.AppendJSONString(b, s)
			} else {
				b = append(b, "null"...)
			}
		}
		if err != nil {
			return b, fmt.Errorf("node %s field %s: %w", n.UUID, f.name, err)
		}
	}
	return append(b, '}'), nil
}

// conductorOf is convert's conductor: the host, none (ok false) when no
// conductor can take the node now.
func (h *handlers) conductorOf(ctx context.Context, n *model.Node) (host string, ok bool, err error) {
	host, err = h.Topics.GetConductorFor(ctx, n)
	if err != nil {
		if !errs.Is(err, errs.ClassNoValidHost) && !errs.Is(err, errs.ClassTemporaryFailure) {
			return "", false, err
		}
		return "", false, nil
	}
	return host, true, nil
}

// allocationUUID is convert's allocation_uuid: none (ok false) without
// an allocation or when it is gone.
func (h *handlers) allocationUUID(ctx context.Context, n *model.Node) (uuid string, ok bool, err error) {
	if n.AllocationID == nil {
		return "", false, nil
	}
	a, err := h.Store.GetAllocationByID(ctx, *n.AllocationID)
	switch {
	case err == nil:
		return a.UUID, true, nil
	case errors.Is(err, store.ErrNotFound):
		return "", false, nil
	}
	return "", false, fmt.Errorf("allocation of node %s: %w", n.UUID, err)
}

// optional is s when ok, else nil.
func optional(s string, ok bool) *string {
	if !ok {
		return nil
	}
	return &s
}

// appendLinks writes the self and bookmark links of the node (sub "") or
// of one of its sub-resources.
func appendLinks(b []byte, p *pagePlan, uuid, sub string) []byte {
	b = append(b, '[')
	b = append(b, p.self...)
	b = pyfmt.AppendJSONStringContent(b, uuid)
	b = pyfmt.AppendJSONStringContent(b, sub)
	b = append(b, `", "rel": "self"}, `...)
	b = append(b, p.bookmark...)
	b = pyfmt.AppendJSONStringContent(b, uuid)
	b = pyfmt.AppendJSONStringContent(b, sub)
	return append(b, `", "rel": "bookmark"}]`...)
}

func appendNullString(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return pyfmt.AppendJSONString(b, s)
}

func appendOptString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return pyfmt.AppendJSONString(b, *s)
}

func appendBool(b []byte, v bool) []byte { return strconv.AppendBool(b, v) }

func appendOptBool(b []byte, v *bool) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return strconv.AppendBool(b, *v)
}

func appendOptTime(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	b = append(b, '"')
	return append(apiutil.AppendISOTime(b, *t), '"')
}

// Writers of the scalar fields, by kind: what fieldValue gives, written.
func plainString(get func(*model.Node) string) func([]byte, *model.Node) []byte {
	return func(b []byte, n *model.Node) []byte { return pyfmt.AppendJSONString(b, get(n)) }
}

func nullString(get func(*model.Node) string) func([]byte, *model.Node) []byte {
	return func(b []byte, n *model.Node) []byte { return appendNullString(b, get(n)) }
}

func optString(get func(*model.Node) *string) func([]byte, *model.Node) []byte {
	return func(b []byte, n *model.Node) []byte { return appendOptString(b, get(n)) }
}

func flag(get func(*model.Node) bool) func([]byte, *model.Node) []byte {
	return func(b []byte, n *model.Node) []byte { return appendBool(b, get(n)) }
}

func optFlag(get func(*model.Node) *bool) func([]byte, *model.Node) []byte {
	return func(b []byte, n *model.Node) []byte { return appendOptBool(b, get(n)) }
}

func optTime(get func(*model.Node) *time.Time) func([]byte, *model.Node) []byte {
	return func(b []byte, n *model.Node) []byte { return appendOptTime(b, get(n)) }
}

// scalarWriters write the node fields that are not JSON columns
// (provision_state aside: its writer depends on the version).
var scalarWriters = map[string]func([]byte, *model.Node) []byte{
	"uuid": plainString(func(n *model.Node) string { return n.UUID }),
	"created_at": func(b []byte, n *model.Node) []byte {
		return appendOptTime(b, &n.CreatedAt)
	},
	"updated_at":             optTime(func(n *model.Node) *time.Time { return n.UpdatedAt }),
	"automated_clean":        optFlag(func(n *model.Node) *bool { return n.AutomatedClean }),
	"bios_interface":         nullString(func(n *model.Node) string { return n.BIOSInterface }),
	"boot_interface":         nullString(func(n *model.Node) string { return n.BootInterface }),
	"boot_mode":              optString(func(n *model.Node) *string { return n.BootMode }),
	"conductor_group":        plainString(func(n *model.Node) string { return n.ConductorGroup }),
	"console_enabled":        flag(func(n *model.Node) bool { return n.ConsoleEnabled }),
	"console_interface":      nullString(func(n *model.Node) string { return n.ConsoleInterface }),
	"disable_power_off":      flag(func(n *model.Node) bool { return n.DisablePowerOff }),
	"deploy_interface":       nullString(func(n *model.Node) string { return n.DeployInterface }),
	"description":            optString(func(n *model.Node) *string { return n.Description }),
	"driver":                 plainString(func(n *model.Node) string { return n.Driver }),
	"fault":                  optString(func(n *model.Node) *string { return n.Fault }),
	"firmware_interface":     nullString(func(n *model.Node) string { return n.FirmwareInterface }),
	"health":                 optString(func(n *model.Node) *string { return n.Health }),
	"inspection_finished_at": optTime(func(n *model.Node) *time.Time { return n.InspectionFinishedAt }),
	"inspection_started_at":  optTime(func(n *model.Node) *time.Time { return n.InspectionStartedAt }),
	"inspect_interface":      nullString(func(n *model.Node) string { return n.InspectInterface }),
	"instance_name":          optString(func(n *model.Node) *string { return n.InstanceName }),
	"instance_uuid":          optString(func(n *model.Node) *string { return n.InstanceUUID }),
	"last_error":             optString(func(n *model.Node) *string { return n.LastError }),
	"lessee":                 optString(func(n *model.Node) *string { return n.Lessee }),
	"maintenance":            flag(func(n *model.Node) bool { return n.Maintenance }),
	"maintenance_reason":     optString(func(n *model.Node) *string { return n.MaintenanceReason }),
	"management_interface":   nullString(func(n *model.Node) string { return n.ManagementInterface }),
	"name":                   optString(func(n *model.Node) *string { return n.Name }),
	"network_interface":      nullString(func(n *model.Node) string { return n.NetworkInterface }),
	"owner":                  optString(func(n *model.Node) *string { return n.Owner }),
	"parent_node":            optString(func(n *model.Node) *string { return n.ParentNode }),
	"power_interface":        nullString(func(n *model.Node) string { return n.PowerInterface }),
	"power_state":            nullString(func(n *model.Node) string { return n.PowerState }),
	"protected":              flag(func(n *model.Node) bool { return n.Protected }),
	"protected_reason":       optString(func(n *model.Node) *string { return n.ProtectedReason }),
	"provision_updated_at":   optTime(func(n *model.Node) *time.Time { return n.ProvisionUpdatedAt }),
	"raid_interface":         nullString(func(n *model.Node) string { return n.RAIDInterface }),
	"rescue_interface":       nullString(func(n *model.Node) string { return n.RescueInterface }),
	"reservation":            optString(func(n *model.Node) *string { return n.Reservation }),
	"resource_class":         optString(func(n *model.Node) *string { return n.ResourceClass }),
	"retired":                flag(func(n *model.Node) bool { return n.Retired }),
	"retired_reason":         optString(func(n *model.Node) *string { return n.RetiredReason }),
	"secure_boot":            optFlag(func(n *model.Node) *bool { return n.SecureBoot }),
	"shard":                  optString(func(n *model.Node) *string { return n.Shard }),
	"storage_interface":      nullString(func(n *model.Node) string { return n.StorageInterface }),
	"target_power_state":     nullString(func(n *model.Node) string { return n.TargetPowerState }),
	"target_provision_state": nullString(func(n *model.Node) string { return n.TargetProvisionState }),
	"traits": func(b []byte, n *model.Node) []byte {
		b = append(b, '[')
		for i, t := range n.Traits {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = pyfmt.AppendJSONString(b, t)
		}
		return append(b, ']')
	},
	"vendor_interface": nullString(func(n *model.Node) string { return n.VendorInterface }),
}

// isJSONColumn reports whether node field k is held as a JSON object.
func isJSONColumn(k string) bool {
	_, ok := (&store.NodeJSON{}).Text(k)
	return ok
}

// jsonColumn reads the stored text of JSON node field k.
func jsonColumn(k string) func(*store.NodeJSON) string {
	return func(j *store.NodeJSON) string {
		text, _ := j.Text(k)
		return text
	}
}
