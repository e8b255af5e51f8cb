package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/secrets"
)

// WithKeyRing makes the store seal nodes' secret values with r on every
// write and open them on every read, so that the API, the conductor and
// the drivers only ever see plain values. Without it values are written
// as upstream writes them (plain), and a sealed value read is an error.
// Rows already stored are not rewritten by it: `ironic secrets encrypt`
// does that.
func WithKeyRing(r *secrets.KeyRing) Option {
	return func(s *sqlStore) { s.ring = r }
}

// secretColumns are the node's dicts holding secrets, with their fields.
var secretColumns = []struct {
	name string
	of   func(*model.Node) *map[string]any
}{
	{secrets.DriverInfo, func(n *model.Node) *map[string]any { return &n.DriverInfo }},
	{secrets.InstanceInfo, func(n *model.Node) *map[string]any { return &n.InstanceInfo }},
	{secrets.DriverInternalInfo, func(n *model.Node) *map[string]any { return &n.DriverInternalInfo }},
}

// sealedFields are the fields of n to write, its secret values sealed when
// the store has a key ring: of a copy, so that the caller's node stays
// plain. Only the named columns (all when none is named) are sealed.
func (s *sqlStore) sealedFields(n *model.Node, names []string) ([]field, error) {
	if s.ring == nil {
		return nodeFields(n), nil
	}
	v := *n
	for _, c := range secretColumns {
		if len(names) > 0 && !slices.Contains(names, c.name) {
			continue
		}
		p := c.of(&v)
		sealed, err := s.ring.Seal(v.UUID, c.name, *p)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", v.UUID, err)
		}
		*p = sealed
	}
	return nodeFields(&v), nil
}

// openNodes opens, in place, the sealed secret values of nodes just read.
// A node's secret that does not open is an Unavailable fault (503: the
// key ring needs the operator, and a client may retry once it is fixed)
// caused by a secrets.UndecryptableError: its reader gets the error, never
// the sealed text in the secret's place.
func (s *sqlStore) openNodes(ns []*model.Node) error {
	for _, n := range ns {
		for _, c := range secretColumns {
			p := c.of(n)
			opened, err := secrets.Open(s.ring, n.UUID, c.name, *p)
			if err != nil {
				return errs.Unavailable(err)
			}
			*p = opened
		}
	}
	return nil
}

// openRowText opens the sealed secret values of a row read as stored
// text. Only a text holding a sealed value is decoded and written again;
// the others, every text of a database without sealed values, are looked
// at once and kept as they are.
func (s *sqlStore) openRowText(r *NodeRow) error {
	for _, c := range secretColumns {
		p := r.JSON.column(c.name)
		if !strings.Contains(*p, secrets.Prefix) {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(*p), &m); err != nil {
			return fmt.Errorf("node %s: %s: %w", r.UUID, c.name, err)
		}
		opened, err := secrets.Open(s.ring, r.UUID, c.name, m)
		if err != nil {
			return errs.Unavailable(err)
		}
		text, err := encodeJSON(opened)
		if err != nil {
			return err
		}
		*p = text
	}
	return nil
}

// holdsSecrets reports whether columns names a column holding secrets.
func holdsSecrets(columns []string) bool {
	for _, c := range secretColumns {
		if slices.Contains(columns, c.name) {
			return true
		}
	}
	return false
}
