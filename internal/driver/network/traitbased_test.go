package network

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/tbn"
)

// collidingStore refuses the first names of new portgroups as taken.
type collidingStore struct {
	store.Store
	collisions int
	names      []string
}

func (s *collidingStore) CreatePortgroup(ctx context.Context, pg *model.Portgroup) (*model.Portgroup, error) {
	s.names = append(s.names, model.Deref(pg.Name))
	if s.collisions > 0 {
		s.collisions--
		return nil, &store.DuplicateError{Kind: store.KindPortgroup, Field: "name", Value: model.Deref(pg.Name)}
	}
	return s.Store.CreatePortgroup(ctx, pg)
}

func traitBased(t *testing.T, traits string) *TraitBased {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tbn.yaml")
	if err := os.WriteFile(path, []byte(traits), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := tbn.Start(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &TraitBased{Traits: l, RaiseWhenNoMatch: true}
}

const bondTraits = "CUSTOM_BOND:\n  actions:\n    - action: group_and_attach_ports\n      filter: port.is_port\n      min_count: 2\n"

func bondFixture(t *testing.T) *fixture {
	t.Helper()
	fx := newFixture(t)
	fx.task.Node.InstanceInfo = map[string]any{"traits": []any{"CUSTOM_BOND"}}
	for _, p := range fx.ports {
		p.AvailableForDynamicPortgroup = true
		if _, err := fx.st.UpdatePort(context.Background(), p, "available_for_dynamic_portgroup"); err != nil {
			t.Fatal(err)
		}
	}
	return fx
}

// Upstream retries a dynamic portgroup's random name three times.
func TestDynamicPortgroupNameCollisions(t *testing.T) {
	ctx := context.Background()
	t.Run("third name free", func(t *testing.T) {
		fx := bondFixture(t)
		st := &collidingStore{Store: fx.st, collisions: 2}
		fl := &Flat{Ports: st, TBN: traitBased(t, bondTraits)}
		if err := fl.VifAttach(ctx, fx.task, map[string]any{"id": "vif-1"}); err != nil {
			t.Fatal(err)
		}
		if len(st.names) != 3 || st.names[0] == st.names[1] {
			t.Fatalf("names tried %q", st.names)
		}
		if pg := fx.port(t, 0).PortgroupID; pg == nil || fx.port(t, 1).PortgroupID == nil || *fx.port(t, 1).PortgroupID != *pg {
			t.Fatalf("ports not grouped")
		}
	})
	t.Run("all taken", func(t *testing.T) {
		fx := bondFixture(t)
		fl := &Flat{Ports: &collidingStore{Store: fx.st, collisions: 3}, TBN: traitBased(t, bondTraits)}
		err := fl.VifAttach(ctx, fx.task, map[string]any{"id": "vif-1"})
		if !errs.Is(err, errs.ClassNetworkError) || err.Error() != "Could not create dynamic portgroup due to duplicate name collisions despite several retries." {
			t.Fatalf("error %v", err)
		}
		if fx.port(t, 0).PortgroupID != nil {
			t.Fatal("port grouped without a portgroup")
		}
	})
}

// Standalone flat: a planned portgroup gets the VIF; detaching it keeps a
// portgroup that is not dynamic; bond_ports plans nothing it can carry
// out, so the attach succeeds attaching nothing, as upstream.
func TestTraitBasedStandaloneFlat(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t)
	pg, err := fx.st.CreatePortgroup(ctx, &model.Portgroup{UUID: "11111111-2222-4333-8444-555555555555", NodeID: &fx.task.Node.ID})
	if err != nil {
		t.Fatal(err)
	}
	fl := &Flat{Ports: fx.st, TBN: traitBased(t, "CUSTOM_PG:\n  actions:\n    - action: attach_portgroup\n      filter: port.is_portgroup\n"+
		"CUSTOM_BOND_PORTS:\n  actions:\n    - action: bond_ports\n      filter: port.is_port\n")}
	fx.task.Node.InstanceInfo = map[string]any{"traits": []any{"CUSTOM_PG"}}
	if err := fl.VifAttach(ctx, fx.task, map[string]any{"id": "vif-1"}); err != nil {
		t.Fatal(err)
	}
	got, err := fx.st.GetPortgroupByID(ctx, pg.ID)
	if err != nil || got.InternalInfo[TenantVIFKey] != "vif-1" {
		t.Fatalf("portgroup %+v, %v", got, err)
	}
	if err := fl.VifDetach(ctx, fx.task, "vif-1"); err != nil {
		t.Fatal(err)
	}
	if got, err := fx.st.GetPortgroupByID(ctx, pg.ID); err != nil || got.InternalInfo[TenantVIFKey] != nil {
		t.Fatalf("portgroup after detach %+v, %v", got, err)
	}
	fx.task.Node.InstanceInfo = map[string]any{"traits": []any{"CUSTOM_BOND_PORTS"}}
	if err := fl.VifAttach(ctx, fx.task, map[string]any{"id": "vif-2"}); err != nil {
		t.Fatal(err)
	}
	for i := range fx.ports {
		if v := fx.port(t, i).InternalInfo[TenantVIFKey]; v != nil {
			t.Fatalf("port %d took %v", i, v)
		}
	}
}
