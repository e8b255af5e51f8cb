package inspection_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// memTarget keeps ports and traits in memory, with MAC uniqueness as the
// store enforces it.
type memTarget struct {
	node   *model.Node
	ports  []*model.Port
	traits map[string]bool
	next   int
	// stored is the inventory of the node's stored inspection data.
	stored      map[string]any
	storedFound bool
}

func newTarget() *memTarget {
	rc := "baremetal"
	return &memTarget{
		node:   &model.Node{ID: 7, UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", Driver: "fake-hardware", ResourceClass: &rc, Properties: map[string]any{}, Extra: map[string]any{}},
		traits: map[string]bool{},
	}
}

func (m *memTarget) Node() *model.Node { return m.node }

func (m *memTarget) Ports(context.Context) ([]*model.Port, error) {
	out := make([]*model.Port, len(m.ports))
	for i, p := range m.ports {
		cp := *p
		raw, _ := json.Marshal(p)
		_ = json.Unmarshal(raw, &cp)
		out[i] = &cp
	}
	return out, nil
}

func (m *memTarget) CreatePort(_ context.Context, p *model.Port) error {
	for _, q := range m.ports {
		if strings.EqualFold(*q.Address, *p.Address) {
			return errs.New(errs.ClassMACAlreadyExists, map[string]any{"mac": *p.Address})
		}
	}
	m.next++
	cp := *p
	cp.UUID = fmt.Sprintf("00000000-0000-0000-0000-%012d", m.next)
	m.ports = append(m.ports, &cp)
	return nil
}

func (m *memTarget) UpdatePort(_ context.Context, p *model.Port) error {
	for i, q := range m.ports {
		if q.UUID == p.UUID {
			cp := *p
			m.ports[i] = &cp
			return nil
		}
	}
	return errs.New(errs.ClassPortNotFound, map[string]any{"port": p.UUID})
}

func (m *memTarget) DeletePort(_ context.Context, p *model.Port) error {
	for i, q := range m.ports {
		if q.UUID == p.UUID {
			m.ports = append(m.ports[:i], m.ports[i+1:]...)
			return nil
		}
	}
	return errs.New(errs.ClassPortNotFound, map[string]any{"port": p.UUID})
}

func (m *memTarget) AddTrait(_ context.Context, name string) error {
	m.traits[name] = true
	return nil
}

func (m *memTarget) RemoveTrait(_ context.Context, name string) error {
	if !m.traits[name] {
		return errs.New(errs.ClassNodeTraitNotFound, map[string]any{"node_id": m.node.UUID, "trait": name})
	}
	delete(m.traits, name)
	return nil
}

func (m *memTarget) StoredInventory(context.Context) (map[string]any, bool, error) {
	return m.stored, m.storedFound, nil
}

func (m *memTarget) addresses() []string {
	var out []string
	for _, p := range m.ports {
		out = append(out, fmt.Sprintf("%s pxe=%v", *p.Address, *p.PXEEnabled))
	}
	sort.Strings(out)
	return out
}

// decode parses a JSON literal as the API would hand it over.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return m
}
