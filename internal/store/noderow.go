package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/model"
)

// NodeRow is a node read for a list page: the scalar columns in Node and
// the JSON columns as the text stored for them, undecoded (Node's maps stay
// nil). A renderer copies that text to its answer when it needs no key
// picked or masked, so a page of 1,000 nodes does not decode and re-encode
// 11 JSON columns per node.
type NodeRow struct {
	model.Node
	JSON NodeJSON
}

// NodeJSON holds the stored text of a node's JSON columns; "" when the
// column is NULL or was not read.
type NodeJSON struct {
	InstanceInfo, Properties, DriverInfo, DriverInternalInfo, CleanStep, DeployStep string
	ServiceStep, RAIDConfig, TargetRAIDConfig, Extra, NetworkData                   string
}

// Text is the stored text of JSON column name; ok is false for a column
// that is not a JSON one.
func (j *NodeJSON) Text(name string) (text string, ok bool) {
	p := j.column(name)
	if p == nil {
		return "", false
	}
	return *p, true
}

// column is the field holding the text of JSON column name, nil for a
// column that is not a JSON one.
func (j *NodeJSON) column(name string) *string {
	switch name {
	case "instance_info":
		return &j.InstanceInfo
	case "properties":
		return &j.Properties
	case "driver_info":
		return &j.DriverInfo
	case "driver_internal_info":
		return &j.DriverInternalInfo
	case "clean_step":
		return &j.CleanStep
	case "deploy_step":
		return &j.DeployStep
	case "service_step":
		return &j.ServiceStep
	case "raid_config":
		return &j.RAIDConfig
	case "target_raid_config":
		return &j.TargetRAIDConfig
	case "extra":
		return &j.Extra
	case "network_data":
		return &j.NetworkData
	}
	return nil
}

// nodeRowFields are the fields of the columns a row of ListNodeRows reads
// into r: every column when columns is nil, else id and those named.
// labels tells whether traits are to be loaded.
func nodeRowFields(r *NodeRow, columns []string) (fs []field, labels bool, err error) {
	all := nodeFields(&r.Node)
	for i := range all {
		if p := r.JSON.column(all[i].name); p != nil {
			all[i].ptr = p
		}
	}
	if columns == nil {
		return all, true, nil
	}
	want := map[string]bool{"id": true}
	for _, c := range columns {
		switch _, ok := nodeColumnNames[c]; {
		case c == "traits" || c == "tags":
			labels = true
		case !ok:
			return nil, false, &InvalidParameterError{Msg: fmt.Sprintf("unknown node field %q", c)}
		}
		want[c] = true
	}
	// A sealed value opens only with its node's UUID.
	want["uuid"] = want["uuid"] || holdsSecrets(columns)
	fs = all[:0]
	for _, f := range all {
		if want[f.name] {
			fs = append(fs, f)
		}
	}
	return fs, labels, nil
}

// ListNodeRows is ListNodeColumns for a renderer: the rows of one page
// with their JSON columns as stored text (columns nil reads every column
// and the traits; tags, which no page shows, are not read). The column mapping and the scanners
// are made once per query, and the values of nullable columns share a few
// arrays, so a row costs its strings and little else.
func (s *sqlStore) ListNodeRows(ctx context.Context, f NodeFilter, o ListOptions, columns []string) ([]NodeRow, error) {
	var cur NodeRow
	fs, labels, err := nodeRowFields(&cur, columns)
	if err != nil {
		return nil, err
	}
	w, err := s.nodeWhere(ctx, f)
	if err != nil {
		return nil, err
	}
	var out []NodeRow
	read := func(ctx context.Context, q querier) error {
		tail, err := s.paginate(ctx, q, "nodes", "", nodeColumnNames, "uuid", w, o)
		if err != nil {
			return err
		}
		rows, err := q.QueryContext(ctx, "SELECT "+columnList(fs)+" FROM nodes"+w.sql()+tail, w.args...)
		if err != nil {
			return fmt.Errorf("list nodes: %w", err)
		}
		defer rows.Close()
		sc := scannersWith(fs, &cells{})
		out = make([]NodeRow, 0, min(max(o.Limit, 0), maxRowsPrealloc))
		for rows.Next() {
			if err := rows.Scan(sc...); err != nil {
				return fmt.Errorf("list nodes: %w", err)
			}
			out = append(out, cur)
			if err := s.openRowText(&out[len(out)-1]); err != nil {
				return err
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("list nodes: %w", err)
		}
		if !labels {
			return nil
		}
		ns := make([]*model.Node, len(out))
		for i := range out {
			ns[i] = &out[i].Node
		}
		// No page shows tags: traits only.
		return s.loadLabels(ctx, q, ns, labelTables[:1])
	}
	if !labels {
		// Without traits and tags the rows alone are one moment.
		if err := read(ctx, s.db); err != nil {
			return nil, wrapUnlessTyped(err, "list nodes")
		}
		return out, nil
	}
	// One read transaction, so that traits and tags are of the rows' moment.
	if err := s.db.InReadTx(ctx, func(tx *sql.Tx) error { return read(ctx, tx) }); err != nil {
		return nil, wrapUnlessTyped(err, "list nodes")
	}
	return out, nil
}

// nodeRowQuery reads one node's columns fs by UUID and, when traits, its
// traits joined: a row per trait in order (loadLabels' order), one with a
// NULL trait for none. One statement reads the node and its traits at one
// moment without a transaction around two queries.
func nodeRowQuery(fs []field, traits bool) string {
	cols := make([]string, len(fs))
	for i, f := range fs {
		cols[i] = "nodes." + quote(f.name)
	}
	q := "SELECT " + strings.Join(cols, ", ")
	if !traits {
		return q + " FROM nodes WHERE nodes.uuid = ?"
	}
	return q + ", node_traits.trait FROM nodes LEFT JOIN node_traits ON node_traits.node_id = nodes.id" +
		" WHERE nodes.uuid = ? ORDER BY node_traits.trait"
}

// nodeRowByUUID is nodeRowQuery for every column and the traits.
var nodeRowByUUID = func() string {
	fs, _, _ := nodeRowFields(&NodeRow{}, nil)
	return nodeRowQuery(fs, true)
}()

// GetNodeRow is ListNodeRows for the node with this UUID, whatever its
// parent. Reading every column, its text is prepared once (on SQLite):
// preparing it again, a transaction and a second query for the traits
// were most of the store's part of a one-node GET (issue 29).
func (s *sqlStore) GetNodeRow(ctx context.Context, uuid string, columns []string) (*NodeRow, error) {
	out := &NodeRow{}
	fs, traits, err := nodeRowFields(out, columns)
	if err != nil {
		return nil, err
	}
	var q querier = s.db
	query := nodeRowByUUID
	if columns == nil {
		cached := s.db.Cached()
		if err := cached.Prepare(ctx, query); err != nil {
			return nil, wrapUnlessTyped(err, "get node "+uuid)
		}
		q = cached
	} else {
		// A field list's text runs unprepared: callers choose the
		// columns, which would grow the cache without bound.
		query = nodeRowQuery(fs, traits)
	}
	if err := s.readNodeRow(ctx, q, query, uuid, fs, traits, out); err != nil {
		return nil, wrapUnlessTyped(err, "get node "+uuid)
	}
	return out, nil
}

// readNodeRow runs GetNodeRow's query into out; GetNodeRow says which
// node an error is about.
func (s *sqlStore) readNodeRow(ctx context.Context, q querier, query, uuid string, fs []field, traits bool, out *NodeRow) error {
	rows, err := q.QueryContext(ctx, query, uuid)
	if err != nil {
		return err
	}
	defer rows.Close()
	var trait sql.NullString
	dest := scannersWith(fs, nil)
	if traits {
		dest = append(dest, &trait)
		out.Traits = []string{}
	}
	// The node's columns repeat on each trait's row: they are read
	// from the first only.
	var again []any
	n := 0
	for ; rows.Next(); n++ {
		if n == 1 {
			again = make([]any, len(dest))
			for i := range fs {
				again[i] = new(any)
			}
			again[len(fs)] = &trait
			dest = again
		}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		if trait.Valid {
			out.Traits = append(out.Traits, trait.String)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n == 0 {
		return &NotFoundError{Kind: KindNode, Ident: uuid}
	}
	return s.openRowText(out)
}

// maxRowsPrealloc bounds the rows reserved from a page's limit before any
// is read.
const maxRowsPrealloc = 1000

// cells hands out the pointers that nullable columns scan into from a few
// arrays shared by the rows of one query, rather than one allocation per
// value. A nil *cells allocates each value on its own.
type cells struct {
	strs  []string
	ints  []int64
	bools []bool
	times []time.Time
}

// cellChunk is how many values of a kind one array holds.
const cellChunk = 256

// cell stores v in the next free element of *arr (a new array when it is
// full) and returns its address.
func cell[T any](arr *[]T, v T) *T {
	if len(*arr) == cap(*arr) {
		*arr = make([]T, 0, cellChunk)
	}
	*arr = append(*arr, v)
	return &(*arr)[len(*arr)-1]
}

func (c *cells) str(v string) *string {
	if c == nil {
		return &v
	}
	return cell(&c.strs, v)
}

func (c *cells) int(v int64) *int64 {
	if c == nil {
		return &v
	}
	return cell(&c.ints, v)
}

func (c *cells) bool(v bool) *bool {
	if c == nil {
		return &v
	}
	return cell(&c.bools, v)
}

func (c *cells) time(v time.Time) *time.Time {
	if c == nil {
		return &v
	}
	return cell(&c.times, v)
}
