package rpc

import (
	"context"
	"encoding/json"
	"testing"
)

type recordingConductor struct {
	ConductorAPI
	inventory map[string]any
	steps     []map[string]any
}

func (r *recordingConductor) ContinueInspection(_ context.Context, _, _ string, inventory, _ map[string]any) error {
	r.inventory = inventory
	return nil
}

func (r *recordingConductor) DoNodeClean(_ context.Context, _, _ string, steps []map[string]any, _ bool) error {
	r.steps = steps
	return nil
}

// The in-process transport hands the conductor what a JSON-RPC server
// would decode: numbers the API kept as json.Number arrive as float64.
func TestLocalPassesArgumentsAsTheWire(t *testing.T) {
	rec := &recordingConductor{}
	l := NewLocal(rec, nil)
	inv := map[string]any{"cpu": map[string]any{"count": json.Number("4")}, "memory": map[string]any{"physical_mb": json.Number("16384")}}
	if err := l.ContinueInspection(context.Background(), "", "n", inv, nil); err != nil {
		t.Fatal(err)
	}
	if got, ok := rec.inventory["cpu"].(map[string]any)["count"].(float64); !ok || got != 4 {
		t.Errorf("cpu count arrived as %#v", rec.inventory["cpu"])
	}
	if _, ok := inv["cpu"].(map[string]any)["count"].(json.Number); !ok {
		t.Error("the caller's map was changed")
	}
	steps := []map[string]any{{"interface": "bios", "step": "apply_configuration", "args": map[string]any{"settings": []any{map[string]any{"name": "x", "value": json.Number("1")}}}}}
	if err := l.DoNodeClean(context.Background(), "", "n", steps, false); err != nil {
		t.Fatal(err)
	}
	v := rec.steps[0]["args"].(map[string]any)["settings"].([]any)[0].(map[string]any)["value"]
	if _, ok := v.(float64); !ok {
		t.Errorf("step argument arrived as %#v", v)
	}
}
