package store

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/openkeel/ironic/internal/store/storetest"
)

// ListNodeRows reads what ListNodes reads, the JSON columns as the text
// that decodes to ListNodes' maps; with columns, only those (and id).
func TestListNodeRowsMatchesListNodes(t *testing.T) {
	ctx := context.Background()
	for _, be := range storetest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			s := New(be.DB)
			for i := range 5 {
				n := benchNode(i)
				if i%2 == 0 {
					n.DriverInfo, n.Name = nil, nil
				}
				n, err := s.CreateNode(ctx, n)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.SetNodeTraits(ctx, n.ID, []string{"CUSTOM_A"}, "1.0"); err != nil {
					t.Fatal(err)
				}
			}
			opts := ListOptions{Limit: 4, SortKey: "id", SortDir: "desc"}
			want, err := s.ListNodes(ctx, NodeFilter{}, opts)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := s.ListNodeRows(ctx, NodeFilter{}, opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(want) {
				t.Fatalf("%d rows, want %d", len(rows), len(want))
			}
			for i, row := range rows {
				got := row.Node
				if got.Tags != nil {
					t.Errorf("row %d: tags read: %v", i, got.Tags)
				}
				got.Tags = want[i].Tags
				for _, c := range []struct {
					text string
					dst  *map[string]any
				}{
					{row.JSON.InstanceInfo, &got.InstanceInfo}, {row.JSON.Properties, &got.Properties},
					{row.JSON.DriverInfo, &got.DriverInfo}, {row.JSON.DriverInternalInfo, &got.DriverInternalInfo},
					{row.JSON.CleanStep, &got.CleanStep}, {row.JSON.DeployStep, &got.DeployStep},
					{row.JSON.ServiceStep, &got.ServiceStep}, {row.JSON.RAIDConfig, &got.RAIDConfig},
					{row.JSON.TargetRAIDConfig, &got.TargetRAIDConfig}, {row.JSON.Extra, &got.Extra},
					{row.JSON.NetworkData, &got.NetworkData},
				} {
					if err := decodeJSON(c.text, c.dst); err != nil {
						t.Fatal(err)
					}
				}
				if !reflect.DeepEqual(&got, want[i]) {
					g, _ := json.Marshal(got)
					w, _ := json.Marshal(want[i])
					t.Errorf("row %d:\n got %s\nwant %s", i, g, w)
				}
			}
			rows, err = s.ListNodeRows(ctx, NodeFilter{}, opts, []string{"uuid", "name", "properties"})
			if err != nil {
				t.Fatal(err)
			}
			for i, row := range rows {
				w := want[i]
				if row.ID != w.ID || row.UUID != w.UUID || !reflect.DeepEqual(row.Name, w.Name) ||
					row.JSON.Properties == "" || row.JSON.Extra != "" || row.Driver != "" || row.Traits != nil {
					t.Errorf("row %d with columns: %+v", i, row)
				}
			}
			if _, err := s.ListNodeRows(ctx, NodeFilter{}, opts, []string{"bogus"}); !isInvalidParameter(err) {
				t.Errorf("unknown column: %v", err)
			}
		})
	}
}

func isInvalidParameter(err error) bool {
	var ip *InvalidParameterError
	return errors.As(err, &ip)
}

// GetNodeRow reads the row ListNodeRows reads for the same node, whatever
// its parent, with or without columns and traits (two, none); an unknown
// UUID is ErrNotFound.
func TestGetNodeRowMatchesListNodeRows(t *testing.T) {
	ctx := context.Background()
	for _, be := range storetest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			s := New(be.DB)
			parent, err := s.CreateNode(ctx, benchNode(0))
			if err != nil {
				t.Fatal(err)
			}
			child := benchNode(1)
			child.ParentNode = &parent.UUID
			if child, err = s.CreateNode(ctx, child); err != nil {
				t.Fatal(err)
			}
			if _, err := s.SetNodeTraits(ctx, child.ID, []string{"CUSTOM_A", "CUSTOM_B"}, "1.0"); err != nil {
				t.Fatal(err)
			}
			for _, uuid := range []string{parent.UUID, child.UUID} {
				for _, cols := range [][]string{nil, {"uuid", "driver_info", "traits"}, {"name", "owner"}} {
					want, err := s.ListNodeRows(ctx, NodeFilter{UUID: &uuid, IncludeChildren: true}, ListOptions{}, cols)
					if err != nil || len(want) != 1 {
						t.Fatalf("list %s %v: %d rows, %v", uuid, cols, len(want), err)
					}
					got, err := s.GetNodeRow(ctx, uuid, cols)
					if err != nil {
						t.Fatalf("get %s %v: %v", uuid, cols, err)
					}
					if !reflect.DeepEqual(*got, want[0]) {
						t.Errorf("%s columns %v:\n got %+v\nwant %+v", uuid, cols, *got, want[0])
					}
				}
			}
			if _, err := s.GetNodeRow(ctx, "1be26c0b-03f2-4d2e-ae87-c02d7f33c000", nil); !errors.Is(err, ErrNotFound) {
				t.Errorf("unknown node: %v, want ErrNotFound", err)
			}
			if _, err := s.GetNodeRow(ctx, child.UUID, []string{"bogus"}); !errors.Is(err, ErrInvalidParameter) {
				t.Errorf("unknown column: %v, want ErrInvalidParameter", err)
			}
		})
	}
}
