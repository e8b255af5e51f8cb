package conductor_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/keystone"
	fakeswift "github.com/openkeel/ironic/testing/swift"
)

// swiftEnv is a Keystone and a Swift it lists, and the configuration
// sections that point Ironic's [swift] client at them.
type swiftEnv struct {
	sw      *fakeswift.Fixture
	account string
	section map[string]string
}

func newSwiftEnv(t *testing.T) *swiftEnv {
	t.Helper()
	ks := keystone.New(t).Project("service").User("ironic", "secret").Grant("ironic", "service", "admin")
	sw := fakeswift.New(t).ValidateTokens(ks.TokenValid)
	sw.Register(ks, ks.ProjectID("service"))
	return &swiftEnv{sw: sw, account: fakeswift.AccountName(ks.ProjectID("service")),
		section: fakeswift.IronicSection(ks, "ironic", "secret", "service")}
}

// TestInspectionDataInSwift: with [inventory]/data_backend swift the
// processed inspection data goes to inspector_data-<uuid>-inventory and
// -plugin in swift_data_container (not the database), and deleting the
// node deletes them; objects Swift fails to delete stop the deletion
// unless the node is in maintenance.
func TestInspectionDataInSwift(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		s := newSwiftEnv(t)
		e := newInspectEnv(t, db, map[string]map[string]string{
			"inventory": {"data_backend": "swift", "swift_data_container": "inspection"},
			"swift":     s.section,
		})
		ctx := context.Background()
		n := e.node(states.Manageable, func(n *model.Node) { n.InspectInterface = "agent" })
		e.inspectUntilWait(n)
		inv, pd := ramdiskData(t)
		if err := e.api.ContinueInspection(ctx, "", n.UUID, inv, pd); err != nil {
			t.Fatalf("continue_inspection: %v", err)
		}
		got := e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		if _, err := e.st.GetNodeInventory(ctx, got.ID); err == nil {
			t.Fatal("inventory stored in the database with data_backend swift")
		}
		invObj := s.sw.Object(s.account, "inspection", "inspector_data-"+n.UUID+"-inventory")
		plugObj := s.sw.Object(s.account, "inspection", "inspector_data-"+n.UUID+"-plugin")
		if invObj == nil || plugObj == nil {
			t.Fatalf("objects in Swift: %v", s.sw.Objects(s.account, "inspection"))
		}
		var storedInv, storedPlug map[string]any
		if err := json.Unmarshal(invObj.Data, &storedInv); err != nil || !reflect.DeepEqual(storedInv, inv) {
			t.Fatalf("stored inventory %s (%v)", invObj.Data, err)
		}
		if err := json.Unmarshal(plugObj.Data, &storedPlug); err != nil || storedPlug["root_disk"] == nil {
			t.Fatalf("stored plugin data %s (%v)", plugObj.Data, err)
		}

		// Swift failing to delete keeps the node outside maintenance.
		s.sw.Fail(http.StatusInternalServerError)
		err := e.api.DestroyNode(ctx, "", n.UUID)
		if class(err) != "SwiftObjectStillExists" {
			t.Fatalf("destroy with Swift failing: %v", err)
		}
		if _, err := e.st.GetNodeByUUID(ctx, n.UUID); err != nil {
			t.Fatalf("node deleted although its objects were not: %v", err)
		}
		s.sw.Heal()
		if err := e.api.DestroyNode(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		if left := s.sw.Objects(s.account, "inspection"); len(left) != 0 {
			t.Fatalf("objects left after the node's deletion: %v", left)
		}

		// In maintenance the objects may be orphaned.
		m := e.node(states.Manageable, func(n *model.Node) { n.Maintenance = true })
		s.sw.PutObject(s.account, "inspection", "inspector_data-"+m.UUID+"-inventory", []byte("{}"))
		s.sw.Fail(http.StatusInternalServerError)
		if err := e.api.DestroyNode(ctx, "", m.UUID); err != nil {
			t.Fatalf("destroy in maintenance with Swift failing: %v", err)
		}
	})
}
