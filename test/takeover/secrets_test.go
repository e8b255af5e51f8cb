package takeover

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/secrets"
	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/cluster"
)

// readDriverInfo is upstream's own database layer reading a node's
// driver_info: what its conductor hands its drivers.
const readDriverInfo = `
import json, sys
import ironic.conf
from ironic.common import config
config.parse_args(['ironic', '--config-file', sys.argv[1]])
from ironic.db import api as dbapi
print(json.dumps(dbapi.get_instance().get_node_by_uuid(sys.argv[2]).driver_info, sort_keys=True))
`

// Issue 25, the way back: a database taken over from Ironic 21.4, its BMC
// password sealed by `ironic secrets encrypt`, then opened again by
// `ironic secrets decrypt`, is read by 21.4 itself as it wrote it: its
// database layer (what its conductor hands its drivers) returns the plain
// password.
func TestDecryptedDatabaseReadByIronic214(t *testing.T) {
	requireDebianIronic(t)
	bin := cluster.Binary(t)
	dir := t.TempDir()
	dbURL := "sqlite:///" + filepath.Join(dir, "ironic.sqlite")
	port := freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	conf := writeConf(t, dir, dbURL, port)

	run(t, dir, debianPython, "/usr/bin/ironic-dbsync", "--config-file", conf, "create_schema")
	upstream := startService(t, dir, "ironic-21.4", base, debianPython, "/usr/bin/ironic", "--config-file", conf)
	c := client{t: t, base: base}
	const password = "bmc-Pw-0451"
	node := c.create("/v1/nodes", map[string]any{"driver": "fake-hardware",
		"driver_info": map[string]any{"ipmi_address": "10.1.1.1", "ipmi_username": "admin", "ipmi_password": password}})
	upstream.Stop(t)

	run(t, dir, bin, "--config-file", conf, "dbsync", "upgrade")
	keys := filepath.Join(dir, "keys")
	if err := os.Mkdir(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{5}, secrets.KeySize))
	if err := os.WriteFile(filepath.Join(keys, "k1"), []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "\n[openkeel_secrets]\nkey_files = %s\n", keys)
	f.Close()

	if out := run(t, dir, bin, "--config-file", conf, "secrets", "encrypt"); !strings.Contains(out, "1 rewritten, 1 values encrypted") {
		t.Fatalf("encrypt: %s", out)
	}
	db := open(t, dbURL)
	if all := storetest.AllText(t, db); strings.Contains(all, password) || !strings.Contains(all, secrets.Prefix) {
		t.Fatal("the password is not sealed after encrypt")
	}
	if out := run(t, dir, bin, "--config-file", conf, "secrets", "decrypt"); !strings.Contains(out, "1 rewritten, 1 values decrypted") {
		t.Fatalf("decrypt: %s", out)
	}

	out := run(t, dir, debianPython, "-c", readDriverInfo, conf, node)
	if want := fmt.Sprintf(`"ipmi_password": %q`, password); !strings.Contains(out, want) {
		t.Fatalf("Ironic 21.4's database layer reads driver_info %s, want %s", out, want)
	}
}
