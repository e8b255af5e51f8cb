package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/migrations"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// upstreamNode is a node row as an upstream Ironic writes it: JSON columns
// as json.dumps text, secrets in driver_info, timestamps without zone.
const upstreamNode = `INSERT INTO nodes (created_at, updated_at, uuid, name, driver, driver_info,
 properties, extra, instance_info, driver_internal_info, provision_state, power_state,
 maintenance, conductor_group, resource_class, owner, protected, version)
VALUES ('2026-03-01 10:00:00', '2026-03-02 11:30:00', '1be26c0b-03f2-4d2e-ae87-c02d7f33c123',
 'rack1-node7', 'ipmi',
 '{"ipmi_address": "10.1.2.7", "ipmi_username": "admin", "ipmi_password": "s3cret"}',
 '{"cpus": 64, "memory_mb": 524288, "local_gb": 900, "capabilities": "boot_mode:uefi"}',
 '{"rack": "r1", "slot": 7}', '{}', '{"agent_url": "https://10.1.3.7:9999"}',
 'active', 'power on', 0, 'zone-a', 'baremetal.gold', 'proj-1', 0, '1.41')`

const upstreamPort = `INSERT INTO ports (created_at, uuid, address, node_id, extra,
 local_link_connection, pxe_enabled, internal_info, physical_network, is_smartnic, version,
 available_for_dynamic_portgroup)
VALUES ('2026-03-01 10:00:05', '6d85703a-565d-469a-96ce-30b6de53079d', '52:54:00:ab:cd:07',
 (SELECT id FROM nodes WHERE uuid = '1be26c0b-03f2-4d2e-ae87-c02d7f33c123'), '{}',
 '{"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": "Eth1/7"}', 1,
 '{"tenant_vif_port_id": "f5a2c7a0-8d7e-4a5b-9d5e-3c1f4c6f2b11"}', 'physnet1', 0, '1.12', 1)`

// An upstream database at Alembic head is taken over by `ironic-dbsync
// upgrade`, and its rows read back through our store as upstream wrote them.
func TestDBSyncTakesOverUpstreamDatabase(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.EmptyBackends(t) {
		t.Run(b.Name, func(t *testing.T) {
			storetest.LoadUpstreamSchema(t, b.DB)
			storetest.Exec(t, b.DB,
				"INSERT INTO alembic_version (version_num) VALUES ('"+migrations.AlembicHead+"')",
				upstreamNode, upstreamPort)
			dir := t.TempDir()
			conf := writeConf(t, dir, fmt.Sprintf("[database]\nconnection = %s\n", b.URL))
			if out, code := runIronic(t, dir, "ironic-dbsync", "--config-file", conf, "upgrade"); code != 0 {
				t.Fatalf("dbsync upgrade: exit %d\n%s", code, out)
			}
			if out, _ := runIronic(t, dir, "ironic-dbsync", "--config-file", conf, "version"); !strings.Contains(out, ourSchemaLine(t)) {
				t.Fatalf("dbsync version after take-over:\n%s", out)
			}

			st := store.New(b.DB)
			n, err := st.GetNodeByUUID(ctx, "1be26c0b-03f2-4d2e-ae87-c02d7f33c123")
			if err != nil {
				t.Fatal(err)
			}
			checks := []struct {
				field     string
				got, want any
			}{
				{"name", *n.Name, "rack1-node7"},
				{"driver", n.Driver, "ipmi"},
				{"provision_state", n.ProvisionState, "active"},
				{"power_state", n.PowerState, "power on"},
				{"conductor_group", n.ConductorGroup, "zone-a"},
				{"resource_class", *n.ResourceClass, "baremetal.gold"},
				{"owner", *n.Owner, "proj-1"},
				{"driver_info.ipmi_password", n.DriverInfo["ipmi_password"], "s3cret"},
				{"properties.memory_mb", n.Properties["memory_mb"], float64(524288)},
				{"properties.capabilities", n.Properties["capabilities"], "boot_mode:uefi"},
				{"extra.slot", n.Extra["slot"], float64(7)},
				{"driver_internal_info.agent_url", n.DriverInternalInfo["agent_url"], "https://10.1.3.7:9999"},
				{"created_at", n.CreatedAt.UTC().Format("2006-01-02 15:04:05"), "2026-03-01 10:00:00"},
				{"updated_at", n.UpdatedAt.UTC().Format("2006-01-02 15:04:05"), "2026-03-02 11:30:00"},
				{"maintenance", n.Maintenance, false},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("node %s = %#v, want %#v", c.field, c.got, c.want)
				}
			}
			ports, err := st.ListPorts(ctx, store.PortFilter{NodeID: &n.ID}, store.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(ports) != 1 || ports[0].Address == nil || *ports[0].Address != "52:54:00:ab:cd:07" ||
				ports[0].LocalLinkConnection["port_id"] != "Eth1/7" || ports[0].PhysicalNetwork == nil || *ports[0].PhysicalNetwork != "physnet1" {
				t.Fatalf("ports after take-over: %+v", ports)
			}
		})
	}
}

func TestDBSyncRefusesOtherRevision(t *testing.T) {
	for _, b := range storetest.EmptyBackends(t) {
		t.Run(b.Name, func(t *testing.T) {
			storetest.LoadUpstreamSchema(t, b.DB)
			storetest.Exec(t, b.DB, "INSERT INTO alembic_version (version_num) VALUES ('c0455649680c')", upstreamNode)
			dir := t.TempDir()
			conf := writeConf(t, dir, fmt.Sprintf("[database]\nconnection = %s\n", b.URL))
			out, code := runIronic(t, dir, "ironic-dbsync", "--config-file", conf, "upgrade")
			if code != 1 || !strings.Contains(out, "c0455649680c") || !strings.Contains(out, migrations.AlembicHead) {
				t.Fatalf("dbsync upgrade of a database at another revision: exit %d\n%s", code, out)
			}
			var n int
			if err := b.DB.QueryRow("SELECT COUNT(*) FROM nodes").Scan(&n); err != nil || n != 1 {
				t.Fatalf("rows changed by a refused upgrade: %d %v", n, err)
			}
		})
	}
}

// ourSchemaLine is what `dbsync version` prints for a database at our
// newest schema on top of upstream's Alembic head.
func ourSchemaLine(t *testing.T) string {
	t.Helper()
	n, err := migrations.Latest(sqldb.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("openkeel-ironic schema %d (Ironic alembic %s)", n, migrations.AlembicHead)
}
