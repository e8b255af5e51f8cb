package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/model"
)

func nodeHistoryFields(h *model.NodeHistory) []field {
	return rowFields(&h.ID, &h.UUID, &h.CreatedAt, &h.UpdatedAt, &h.Version, []field{
		{name: "conductor", ptr: &h.Conductor},
		{name: "event_type", ptr: &h.EventType},
		{name: "severity", ptr: &h.Severity},
		{name: "event", ptr: &h.Event},
		{name: "user", ptr: &h.User},
		{name: "project", ptr: &h.Project},
		{name: "node_id", ptr: &h.NodeID},
		{name: "state", ptr: &h.State},
		{name: "target_provision_state", ptr: &h.TargetProvisionState},
		{name: "duration_seconds", ptr: &h.DurationSeconds},
	})
}

func nodeInventoryFields(i *model.NodeInventory) []field {
	return rowFields(&i.ID, nil, &i.CreatedAt, &i.UpdatedAt, &i.Version, []field{
		{name: "inventory_data", ptr: &i.InventoryData},
		{name: "plugin_data", ptr: &i.PluginData},
		{name: "node_id", ptr: &i.NodeID},
	})
}

func biosSettingFields(b *model.BIOSSetting) []field {
	return rowFields(nil, nil, &b.CreatedAt, &b.UpdatedAt, &b.Version, []field{
		{name: "node_id", ptr: &b.NodeID},
		{name: "name", ptr: &b.Name},
		{name: "value", ptr: &b.Value},
		{name: "attribute_type", ptr: &b.AttributeType},
		{name: "allowable_values", ptr: &b.AllowableValues},
		{name: "lower_bound", ptr: &b.LowerBound},
		{name: "max_length", ptr: &b.MaxLength},
		{name: "min_length", ptr: &b.MinLength},
		{name: "read_only", ptr: &b.ReadOnly},
		{name: "reset_required", ptr: &b.ResetRequired},
		{name: "unique", ptr: &b.Unique},
		{name: "upper_bound", ptr: &b.UpperBound},
	})
}

func firmwareFields(f *model.FirmwareComponent) []field {
	return rowFields(&f.ID, nil, &f.CreatedAt, &f.UpdatedAt, &f.Version, []field{
		{name: "node_id", ptr: &f.NodeID},
		{name: "component", ptr: &f.Component},
		{name: "initial_version", ptr: &f.InitialVersion},
		{name: "current_version", ptr: &f.CurrentVersion},
		{name: "last_version_flashed", ptr: &f.LastVersionFlashed},
		{name: "vendor", ptr: &f.Vendor},
		{name: "model", ptr: &f.Model},
		{name: "serial_number", ptr: &f.SerialNumber},
	})
}

func inspectionRuleFields(r *model.InspectionRule) []field {
	return rowFields(&r.ID, &r.UUID, &r.CreatedAt, &r.UpdatedAt, &r.Version, []field{
		{name: "priority", ptr: &r.Priority},
		{name: "description", ptr: &r.Description},
		{name: "scope", ptr: &r.Scope},
		{name: "sensitive", ptr: &r.Sensitive},
		{name: "phase", ptr: &r.Phase},
		{name: "conditions", ptr: &r.Conditions},
		{name: "actions", ptr: &r.Actions},
	})
}

func byUUID[T any](uuidOf func(*T) string) func(*T, string) string {
	return func(v *T, _ string) string { return uuidOf(v) }
}

var (
	nodeHistoryResource = resource[model.NodeHistory]{table: "node_history", kind: KindNodeHistory, fields: nodeHistoryFields,
		dupValue: byUUID(func(h *model.NodeHistory) string { return h.UUID })}
	nodeInventoryResource = resource[model.NodeInventory]{table: "node_inventory", kind: KindNodeInventory, fields: nodeInventoryFields,
		dupValue: func(*model.NodeInventory, string) string { return "" }}
	firmwareResource = resource[model.FirmwareComponent]{table: "firmware_information", kind: KindFirmwareComponent, fields: firmwareFields,
		dupValue: func(f *model.FirmwareComponent, _ string) string { return f.Component }}
	inspectionRuleResource = resource[model.InspectionRule]{table: "inspection_rules", kind: KindInspectionRule, fields: inspectionRuleFields,
		dupValue: byUUID(func(r *model.InspectionRule) string { return r.UUID })}
	biosColumns = biosSettingFields(&model.BIOSSetting{})
	biosSelect  = "SELECT " + columnList(biosColumns) + " FROM bios_settings"
)

// MaxNodeHistoryEvent is the most bytes of event text stored (MySQL's
// TEXT limit); longer events keep their head and tail around
// TruncatedEventMarker, as upstream's TruncatedText column type does.
const MaxNodeHistoryEvent = 65535

// TruncatedEventMarker replaces the middle of a truncated event.
const TruncatedEventMarker = " ... [truncated] ... "

func truncateEvent(ev string) string {
	if len(ev) <= MaxNodeHistoryEvent {
		return ev
	}
	room := MaxNodeHistoryEvent - len(TruncatedEventMarker)
	head, tail := room/2, room-room/2
	// Cutting inside a multi-byte character drops its pieces, as Python's
	// decode(errors="ignore") does.
	return strings.ToValidUTF8(ev[:head], "") + TruncatedEventMarker + strings.ToValidUTF8(ev[len(ev)-tail:], "")
}

// CreateNodeHistory records an event on a node; the uuid is generated
// when empty and an event longer than MaxNodeHistoryEvent truncated.
func (s *sqlStore) CreateNodeHistory(ctx context.Context, h *model.NodeHistory) (*model.NodeHistory, error) {
	return create(ctx, s, nodeHistoryResource, h, func(h *model.NodeHistory) {
		if h.Event != nil {
			h.Event = model.Ptr(truncateEvent(*h.Event))
		}
	})
}

// GetNodeHistoryByID returns the record with that primary key.
func (s *sqlStore) GetNodeHistoryByID(ctx context.Context, id int64) (*model.NodeHistory, error) {
	return getOne(ctx, s, nodeHistoryResource, "id", id, strconv.FormatInt(id, 10))
}

// GetNodeHistoryByUUID returns the record with that UUID.
func (s *sqlStore) GetNodeHistoryByUUID(ctx context.Context, u string) (*model.NodeHistory, error) {
	return getOne(ctx, s, nodeHistoryResource, "uuid", u, u)
}

// ListNodeHistory returns one page of the node's records.
func (s *sqlStore) ListNodeHistory(ctx context.Context, nodeID int64, o ListOptions) ([]*model.NodeHistory, error) {
	w := &where{}
	w.add("node_id = ?", nodeID)
	return list(ctx, s, nodeHistoryResource, w, o)
}

// DeleteNodeHistoryByUUID removes one record.
func (s *sqlStore) DeleteNodeHistoryByUUID(ctx context.Context, u string) error {
	return s.deleteWhere(ctx, "node_history", "uuid = ?", []any{u}, &NotFoundError{Kind: KindNodeHistory, Ident: u})
}

// NodeHistoryForPurge is upstream's query_node_history_records_for_purge:
// for each node whose conductor_affinity is conductorID, the ids of its
// oldest records beyond maxEntries, counting only records older than
// minAge (when positive). Oldest come first.
func (s *sqlStore) NodeHistoryForPurge(ctx context.Context, conductorID int64, minAge time.Duration, maxEntries int) (map[int64][]int64, error) {
	q := "SELECT node_id, id FROM node_history WHERE node_id IN (SELECT id FROM nodes WHERE conductor_affinity = ?)"
	args := []any{conductorID}
	if minAge > 0 {
		q += " AND created_at < ?"
		args = append(args, s.db.Time(s.clock().Add(-minAge)))
	}
	type pair struct{ node, id int64 }
	rows, err := queryAll(ctx, s.db, func(p *pair) []field {
		return []field{{name: "node_id", ptr: &p.node}, {name: "id", ptr: &p.id}}
	}, q+" ORDER BY created_at ASC, id ASC", args...)
	if err != nil {
		return nil, fmt.Errorf("find node history to purge: %w", err)
	}
	byNode := map[int64][]int64{}
	for _, r := range rows {
		byNode[r.node] = append(byNode[r.node], r.id)
	}
	out := make(map[int64][]int64, len(byNode))
	for node, ids := range byNode {
		out[node] = []int64{}
		if len(ids) > maxEntries {
			out[node] = ids[:len(ids)-maxEntries]
		}
	}
	return out, nil
}

// DeleteNodeHistoryRecords removes the records with these ids (upstream's
// bulk_delete_node_history_records); unknown ids are ignored.
func (s *sqlStore) DeleteNodeHistoryRecords(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	marks, args := inList(ids)
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "DELETE FROM node_history WHERE id IN "+marks, args...)
		return err
	})
	return wrapUnlessTyped(err, "delete node history records")
}

// CreateNodeInventory stores the node's inventory, replacing any earlier
// one, as upstream's create_node_inventory.
func (s *sqlStore) CreateNodeInventory(ctx context.Context, inv *model.NodeInventory) (*model.NodeInventory, error) {
	if inv.NodeID == nil {
		return nil, &InvalidParameterError{Msg: "node inventory needs a node"}
	}
	v := *inv
	fs := nodeInventoryFields(&v)
	stampNew(fs, s.clock())
	var id int64
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		if err := nodeExists(ctx, tx, *v.NodeID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM node_inventory WHERE node_id = ?", *v.NodeID); err != nil {
			return err
		}
		var err error
		id, err = s.insert(ctx, tx, "node_inventory", fs)
		return err
	})
	if err != nil {
		return nil, wrapUnlessTyped(err, "create inventory of node "+strconv.FormatInt(*v.NodeID, 10))
	}
	return getOne(ctx, s, nodeInventoryResource, "id", id, strconv.FormatInt(id, 10))
}

// GetNodeInventory returns the node's most recent inventory; none is a
// NotFoundError of KindNodeInventory naming the node id.
func (s *sqlStore) GetNodeInventory(ctx context.Context, nodeID int64) (*model.NodeInventory, error) {
	ident := strconv.FormatInt(nodeID, 10)
	rows, err := query(ctx, s.db, nodeInventoryResource, " WHERE node_id = ? ORDER BY created_at DESC, id DESC LIMIT 1", nodeID)
	if err != nil {
		return nil, fmt.Errorf("get inventory of node %s: %w", ident, err)
	}
	if len(rows) == 0 {
		return nil, &NotFoundError{Kind: KindNodeInventory, Ident: ident}
	}
	return rows[0], nil
}

// DeleteNodeInventory removes the node's inventory; none is a
// NotFoundError of KindNodeInventory.
func (s *sqlStore) DeleteNodeInventory(ctx context.Context, nodeID int64) error {
	return s.deleteWhere(ctx, "node_inventory", "node_id = ?", []any{nodeID},
		&NotFoundError{Kind: KindNodeInventory, Ident: strconv.FormatInt(nodeID, 10)})
}

// deleteWhere deletes the rows matching cond, returning notFound when
// there were none.
func (s *sqlStore) deleteWhere(ctx context.Context, table, cond string, args []any, notFound error) error {
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		return execOne(ctx, tx, notFound, "DELETE FROM "+table+" WHERE "+cond, args...)
	})
	return wrapUnlessTyped(err, "delete from "+table)
}

// CreateBIOSSettings inserts the node's settings with version; a name
// already present is a DuplicateError on "name" (BIOSSettingAlreadyExists)
// and nothing is written.
func (s *sqlStore) CreateBIOSSettings(ctx context.Context, nodeID int64, settings []model.BIOSSetting, version string) ([]model.BIOSSetting, error) {
	return s.writeBIOSSettings(ctx, nodeID, settings, version, true)
}

// UpdateBIOSSettings rewrites the value and registry fields of existing
// settings; a name not present is a NotFoundError of KindBIOSSetting
// (BIOSSettingNotFound) and nothing is written.
func (s *sqlStore) UpdateBIOSSettings(ctx context.Context, nodeID int64, settings []model.BIOSSetting, version string) ([]model.BIOSSetting, error) {
	return s.writeBIOSSettings(ctx, nodeID, settings, version, false)
}

func (s *sqlStore) writeBIOSSettings(ctx context.Context, nodeID int64, settings []model.BIOSSetting, version string, insert bool) ([]model.BIOSSetting, error) {
	node := strconv.FormatInt(nodeID, 10)
	now := s.clock()
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		if err := nodeExists(ctx, tx, nodeID); err != nil {
			return err
		}
		for _, in := range settings {
			b := in
			b.NodeID, b.Version = nodeID, version
			fs := biosSettingFields(&b)
			if insert {
				stampNew(fs, now)
				if _, err := s.insert(ctx, tx, "bios_settings", fs); err != nil {
					if d := duplicate(err, KindBIOSSetting, func(string) string { return b.Name }); d != nil {
						d.Field, d.Node = "name", node
						return d
					}
					return err
				}
				continue
			}
			var names []string
			for _, f := range fs {
				if f.name != "node_id" && f.name != "name" && f.name != "created_at" {
					names = append(names, f.name)
				}
			}
			set, args, err := s.updateSet(fs, names, now)
			if err != nil {
				return err
			}
			if err := execOne(ctx, tx, &NotFoundError{Kind: KindBIOSSetting, Ident: b.Name, Node: node}, "UPDATE bios_settings SET "+set+" WHERE node_id = ? AND name = ?", append(args, nodeID, b.Name)...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrapUnlessTyped(err, "write BIOS settings of node "+node)
	}
	names := make([]string, len(settings))
	for i, b := range settings {
		names[i] = b.Name
	}
	w := &where{}
	w.add("node_id = ?", nodeID)
	w.in("name", names)
	return s.biosSettings(ctx, w)
}

func (s *sqlStore) biosSettings(ctx context.Context, w *where) ([]model.BIOSSetting, error) {
	rows, err := queryAll(ctx, s.db, biosSettingFields, biosSelect+w.sql()+" ORDER BY name", w.args...)
	if err != nil {
		return nil, fmt.Errorf("read BIOS settings: %w", err)
	}
	return derefAll(rows), nil
}

// DeleteBIOSSettings removes the named settings; names not present are
// reported together in one NotFoundError (BIOSSettingListNotFound), the
// others being deleted, as upstream.
func (s *sqlStore) DeleteBIOSSettings(ctx context.Context, nodeID int64, names []string) error {
	node := strconv.FormatInt(nodeID, 10)
	var missing []string
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		if err := nodeExists(ctx, tx, nodeID); err != nil {
			return err
		}
		for _, name := range names {
			res, err := tx.ExecContext(ctx, "DELETE FROM bios_settings WHERE node_id = ? AND name = ?", nodeID, name)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				missing = append(missing, name)
			}
		}
		return nil
	})
	if err != nil {
		return wrapUnlessTyped(err, "delete BIOS settings of node "+node)
	}
	if len(missing) > 0 {
		return &NotFoundError{Kind: KindBIOSSetting, Ident: strings.Join(missing, ","), Node: node}
	}
	return nil
}

// GetBIOSSetting returns one setting of the node.
func (s *sqlStore) GetBIOSSetting(ctx context.Context, nodeID int64, name string) (*model.BIOSSetting, error) {
	if err := nodeExists(ctx, s.db, nodeID); err != nil {
		return nil, err
	}
	w := &where{}
	w.add("node_id = ? AND name = ?", nodeID, name)
	rows, err := s.biosSettings(ctx, w)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, &NotFoundError{Kind: KindBIOSSetting, Ident: name, Node: strconv.FormatInt(nodeID, 10)}
	}
	return &rows[0], nil
}

// ListBIOSSettings returns the node's settings sorted by name.
func (s *sqlStore) ListBIOSSettings(ctx context.Context, nodeID int64) ([]model.BIOSSetting, error) {
	if err := nodeExists(ctx, s.db, nodeID); err != nil {
		return nil, err
	}
	w := &where{}
	w.add("node_id = ?", nodeID)
	return s.biosSettings(ctx, w)
}

// CreateFirmwareComponent inserts a component of a node; one already
// recorded is a DuplicateError on "component"
// (FirmwareComponentAlreadyExists).
func (s *sqlStore) CreateFirmwareComponent(ctx context.Context, f *model.FirmwareComponent) (*model.FirmwareComponent, error) {
	got, err := create(ctx, s, firmwareResource, f, func(*model.FirmwareComponent) {})
	if d, ok := err.(*DuplicateError); ok {
		d.Field, d.Node = "component", strconv.FormatInt(f.NodeID, 10)
	}
	return got, err
}

// UpdateFirmwareComponent writes the named columns of the component
// identified by f.NodeID and f.Component; a missing one is a
// NotFoundError of KindFirmwareComponent.
func (s *sqlStore) UpdateFirmwareComponent(ctx context.Context, f *model.FirmwareComponent, fields ...string) (*model.FirmwareComponent, error) {
	cur, err := s.GetFirmwareComponent(ctx, f.NodeID, f.Component)
	if err != nil {
		return nil, err
	}
	return update(ctx, s, firmwareResource, f, cur.ID, fields)
}

// GetFirmwareComponent returns the node's component of that name.
func (s *sqlStore) GetFirmwareComponent(ctx context.Context, nodeID int64, component string) (*model.FirmwareComponent, error) {
	if err := nodeExists(ctx, s.db, nodeID); err != nil {
		return nil, err
	}
	rows, err := query(ctx, s.db, firmwareResource, " WHERE node_id = ? AND component = ?", nodeID, component)
	if err != nil {
		return nil, fmt.Errorf("get firmware component %s: %w", component, err)
	}
	if len(rows) == 0 {
		return nil, &NotFoundError{Kind: KindFirmwareComponent, Ident: component, Node: strconv.FormatInt(nodeID, 10)}
	}
	return rows[0], nil
}

// ListFirmwareComponents returns the node's components in id order.
func (s *sqlStore) ListFirmwareComponents(ctx context.Context, nodeID int64) ([]*model.FirmwareComponent, error) {
	if err := nodeExists(ctx, s.db, nodeID); err != nil {
		return nil, err
	}
	rows, err := query(ctx, s.db, firmwareResource, " WHERE node_id = ? ORDER BY id", nodeID)
	if err != nil {
		return nil, fmt.Errorf("list firmware components of node %d: %w", nodeID, err)
	}
	return rows, nil
}

// DefaultInspectionRulePhase is the phase a rule runs in when none is set.
const DefaultInspectionRulePhase = "main"

// CreateInspectionRule inserts a rule; the phase defaults to main.
func (s *sqlStore) CreateInspectionRule(ctx context.Context, r *model.InspectionRule) (*model.InspectionRule, error) {
	return create(ctx, s, inspectionRuleResource, r, func(r *model.InspectionRule) {
		if r.Phase == nil {
			r.Phase = model.Ptr(DefaultInspectionRulePhase)
		}
	})
}

// GetInspectionRuleByID returns the rule with that primary key.
func (s *sqlStore) GetInspectionRuleByID(ctx context.Context, id int64) (*model.InspectionRule, error) {
	return getOne(ctx, s, inspectionRuleResource, "id", id, strconv.FormatInt(id, 10))
}

// GetInspectionRuleByUUID returns the rule with that UUID.
func (s *sqlStore) GetInspectionRuleByUUID(ctx context.Context, u string) (*model.InspectionRule, error) {
	return getOne(ctx, s, inspectionRuleResource, "uuid", u, u)
}

// InspectionRuleFilter selects rules by phase and scope; nil does not
// filter.
type InspectionRuleFilter struct {
	Phase *string
	Scope *string
}

// ListInspectionRules returns one page of rules matching f.
func (s *sqlStore) ListInspectionRules(ctx context.Context, f InspectionRuleFilter, o ListOptions) ([]*model.InspectionRule, error) {
	w := &where{}
	if f.Phase != nil {
		w.add("phase = ?", *f.Phase)
	}
	if f.Scope != nil {
		w.add("scope = ?", *f.Scope)
	}
	return list(ctx, s, inspectionRuleResource, w, o)
}

// UpdateInspectionRule writes the named columns of r (all when none are
// named).
func (s *sqlStore) UpdateInspectionRule(ctx context.Context, r *model.InspectionRule, fields ...string) (*model.InspectionRule, error) {
	return update(ctx, s, inspectionRuleResource, r, r.ID, fields)
}

// DeleteInspectionRule removes the rule.
func (s *sqlStore) DeleteInspectionRule(ctx context.Context, id int64) error {
	return s.deleteByID(ctx, "inspection_rules", KindInspectionRule, id, "")
}
