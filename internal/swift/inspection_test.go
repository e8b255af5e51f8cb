package swift

import (
	"context"
	"log/slog"
	"net/http"
	"reflect"
	"testing"
)

func TestInspectionData(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	const uuid = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
	_, _, err := e.c.InspectionData(ctx, "insp", uuid, log)
	wantClass(t, err, "NodeInventoryNotFound", "Node inventory record for node "+uuid+" could not be found.")

	inv := map[string]any{"cpu": map[string]any{"count": 8.0}}
	plug := map[string]any{"root_disk": map[string]any{"name": "/dev/sda"}}
	if err := e.c.StoreInspectionData(ctx, "insp", uuid, inv, plug); err != nil {
		t.Fatal(err)
	}
	if got := e.sw.Objects(e.account, "insp"); !reflect.DeepEqual(got, []string{"inspector_data-" + uuid + "-inventory", "inspector_data-" + uuid + "-plugin"}) {
		t.Fatalf("objects %v", got)
	}
	gotInv, gotPlug, err := e.c.InspectionData(ctx, "insp", uuid, log)
	if err != nil || !reflect.DeepEqual(gotInv, inv) || !reflect.DeepEqual(gotPlug, plug) {
		t.Fatalf("read back %v %v %v", gotInv, gotPlug, err)
	}

	// A missing object is no failure to clean up.
	if err := e.c.DeleteObject(ctx, "insp", "inspector_data-"+uuid+"-plugin"); err != nil {
		t.Fatal(err)
	}
	if err := e.c.CleanUpInspectionData(ctx, "insp", uuid, log); err != nil {
		t.Fatal(err)
	}
	if got := e.sw.Objects(e.account, "insp"); len(got) != 0 {
		t.Fatalf("objects left %v", got)
	}
	e.sw.PutObject(e.account, "insp", "inspector_data-"+uuid+"-inventory", []byte("{}"))
	e.sw.Fail(http.StatusInternalServerError)
	err = e.c.CleanUpInspectionData(ctx, "insp", uuid, log)
	wantClass(t, err, "SwiftObjectStillExists", "Clean up failed for swift object inspector_data-"+uuid+"-inventory during deletion of node "+uuid+".")
	_, _, err = e.c.InspectionData(ctx, "insp", uuid, log)
	wantClass(t, err, "NodeInventoryNotFound", "")
}
