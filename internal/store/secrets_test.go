package store

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/secrets"
	"github.com/openkeel/ironic/internal/store/storetest"
)

func ring(t *testing.T, current string, keys map[string]byte) *secrets.KeyRing {
	t.Helper()
	m := map[string][]byte{}
	for id, b := range keys {
		m[id] = bytes.Repeat([]byte{b}, secrets.KeySize)
	}
	r, err := secrets.NewKeyRing(m, current)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// plainSecrets are the secret values the tests write; none may be found in
// the database once a key ring is configured.
var plainSecrets = []string{"ipmi-pw-Zq81", "redfish-pw-Kx02", "snmp-auth-Lm55", "rescue-pw-Hh73",
	"$6$hashed-rescue-Yy19", "agent-token-Tt64", "https://swift.example/temp?sig=Sg37", "H4sIconfigdrive-Cd91"}

func secretNode(name string) model.Node {
	return model.Node{Name: model.Ptr(name), Driver: "fake-hardware",
		DriverInfo: map[string]any{"ipmi_address": "10.0.0.9", "ipmi_username": "admin", "ipmi_password": plainSecrets[0],
			"redfish": map[string]any{"redfish_password": plainSecrets[1]}, "snmp_auth_key": plainSecrets[2]},
		InstanceInfo: map[string]any{"image_source": "glance-image", "rescue_password": plainSecrets[3],
			"hashed_rescue_password": plainSecrets[4], "image_url": plainSecrets[6], "configdrive": plainSecrets[7]},
	}
}

func TestSecretsSealedAtRest(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		s := New(e.db, WithClock(e.clock.Now), WithKeyRing(ring(t, "k1", map[string]byte{"k1": 1})))
		n, err := s.CreateNode(e.ctx, ptr(secretNode("n1")))
		if err != nil {
			t.Fatal(err)
		}
		if n.DriverInfo["ipmi_password"] != plainSecrets[0] || n.InstanceInfo["configdrive"] != plainSecrets[7] {
			t.Fatalf("created node reads back %v %v", n.DriverInfo, n.InstanceInfo)
		}
		// The conductor's ways of writing: under the lock, saved with the
		// release; a plain update; an allocation's binding.
		locked, err := s.ReserveNode(e.ctx, "c1", n.ID)
		if err != nil {
			t.Fatal(err)
		}
		locked.InternalInfo().SetAgentToken(plainSecrets[5])
		if err := s.SaveAndReleaseNode(e.ctx, "c1", locked, "driver_internal_info"); err != nil {
			t.Fatal(err)
		}
		n, err = s.GetNodeByID(e.ctx, n.ID)
		if err != nil {
			t.Fatal(err)
		}
		n.DriverInfo["deploy_kernel"] = "k"
		if _, err := s.UpdateNode(e.ctx, n); err != nil {
			t.Fatal(err)
		}
		a, err := s.CreateAllocation(e.ctx, &model.Allocation{ResourceClass: model.Ptr("rc"), State: "allocating", Name: model.Ptr("a1")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateAllocation(e.ctx, &model.Allocation{ID: a.ID, NodeID: &n.ID}, "node_id"); err != nil {
			t.Fatal(err)
		}
		all := storetest.AllText(t, e.db)
		for _, p := range plainSecrets {
			if strings.Contains(all, p) {
				t.Errorf("%q is stored in plain text", p)
			}
		}
		if !strings.Contains(all, secrets.Prefix+"k1:") {
			t.Fatal("no sealed value stored")
		}
		// Every way of reading gives the plain values back.
		got, err := s.GetNodeByUUID(e.ctx, n.UUID)
		if err != nil {
			t.Fatal(err)
		}
		if got.DriverInfo["ipmi_password"] != plainSecrets[0] || got.InternalInfo().AgentToken() != plainSecrets[5] ||
			got.InstanceInfo["hashed_rescue_password"] != plainSecrets[4] || got.InstanceInfo["traits"] == nil {
			t.Fatalf("read back: %v %v %v", got.DriverInfo, got.InstanceInfo, got.DriverInternalInfo)
		}
		cols, err := s.ListNodeColumns(e.ctx, NodeFilter{}, ListOptions{}, []string{"driver_info"})
		if err != nil || cols[0].DriverInfo["redfish"].(map[string]any)["redfish_password"] != plainSecrets[1] {
			t.Fatalf("ListNodeColumns: %v %v", cols, err)
		}
		rows, err := s.ListNodeRows(e.ctx, NodeFilter{}, ListOptions{}, []string{"instance_info", "driver_info"})
		if err != nil || !strings.Contains(rows[0].JSON.DriverInfo, plainSecrets[0]) || strings.Contains(rows[0].JSON.InstanceInfo, secrets.Prefix) {
			t.Fatalf("ListNodeRows: %+v %v", rows, err)
		}
		batch, err := s.ReadNodesForPowerSync(e.ctx, []int64{n.ID})
		if err != nil || batch[0].InstanceInfo["rescue_password"] != plainSecrets[3] {
			t.Fatalf("ReadNodesForPowerSync: %v", err)
		}
		if err := CheckKeyRing(e.ctx, e.db, ring(t, "k1", map[string]byte{"k1": 1})); err != nil {
			t.Fatalf("CheckKeyRing with the right key: %v", err)
		}
	})
}

func ptr[T any](v T) *T { return &v }

func TestSecretsWrongKeyRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		s := New(e.db, WithKeyRing(ring(t, "k1", map[string]byte{"k1": 1})))
		n, err := s.CreateNode(e.ctx, ptr(secretNode("n1")))
		if err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name string
			r    *secrets.KeyRing
			want string
		}{
			{"no key ring", nil, "no key ring is configured"},
			{"unknown key id", ring(t, "k2", map[string]byte{"k2": 2}), `key "k1", which the key ring`},
			{"another key under the id", ring(t, "k1", map[string]byte{"k1": 9}), `key "k1" does not open it`},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				err := CheckKeyRing(e.ctx, e.db, c.r)
				if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), n.UUID) {
					t.Fatalf("CheckKeyRing: %v, want an error naming the node and %q", err, c.want)
				}
				// A read gets a 503 fault, never the sealed text.
				wrong := New(e.db, WithKeyRing(c.r))
				got, err := wrong.GetNodeByID(e.ctx, n.ID)
				if got != nil || errs.Status(err) != http.StatusServiceUnavailable {
					t.Fatalf("read with the wrong key: %v, %v", got, err)
				}
				if _, err := wrong.ListNodes(e.ctx, NodeFilter{}, ListOptions{}); errs.Status(err) != http.StatusServiceUnavailable {
					t.Fatalf("list with the wrong key: %v", err)
				}
				if _, err := wrong.ListNodeRows(e.ctx, NodeFilter{}, ListOptions{}, nil); errs.Status(err) != http.StatusServiceUnavailable {
					t.Fatalf("list rows with the wrong key: %v", err)
				}
			})
		}
	})
}

func TestConvertSecrets(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		plain := New(e.db)
		var ids []int64
		for i := range 3 {
			n, err := plain.CreateNode(e.ctx, ptr(secretNode(fmt.Sprintf("n%d", i))))
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, n.ID)
		}
		if _, err := plain.CreateNode(e.ctx, &model.Node{Driver: "fake-hardware"}); err != nil {
			t.Fatal(err)
		}
		sv, err := SurveySecrets(e.ctx, e.db)
		if err != nil || sv.Nodes != 4 || sv.PlainNodes != 3 || sv.Counts.Plain != 21 {
			t.Fatalf("survey of plain rows: %+v %v", sv, err)
		}
		// Without a key, as upstream: CheckKeyRing has nothing to check.
		if err := CheckKeyRing(e.ctx, e.db, nil); err != nil {
			t.Fatal(err)
		}
		r1 := ring(t, "k1", map[string]byte{"k1": 1})
		rep, err := ConvertSecrets(e.ctx, e.db, r1, secrets.Encrypt, ConvertOptions{})
		if err != nil || rep.Rewritten != 3 || rep.Values != 21 {
			t.Fatalf("encrypt: %+v %v", rep, err)
		}
		if rep, err := ConvertSecrets(e.ctx, e.db, r1, secrets.Encrypt, ConvertOptions{}); err != nil || rep.Rewritten != 0 {
			t.Fatalf("encrypt again: %+v %v", rep, err)
		}
		for _, p := range plainSecrets[:5] {
			if strings.Contains(storetest.AllText(t, e.db), p) {
				t.Fatalf("%q still plain after encrypt", p)
			}
		}
		r2 := ring(t, "k2", map[string]byte{"k1": 1, "k2": 2})
		if rep, err := ConvertSecrets(e.ctx, e.db, r2, secrets.Rotate, ConvertOptions{}); err != nil || rep.Values != 21 {
			t.Fatalf("rotate: %+v %v", rep, err)
		}
		sv, _ = SurveySecrets(e.ctx, e.db)
		if sv.Counts.Plain != 0 || sv.Counts.Sealed["k2"] != 21 || len(sv.Counts.Sealed) != 1 {
			t.Fatalf("after rotation: %+v", sv)
		}
		// k1 is no longer needed.
		if err := CheckKeyRing(e.ctx, e.db, ring(t, "k2", map[string]byte{"k2": 2})); err != nil {
			t.Fatal(err)
		}
		if rep, err := ConvertSecrets(e.ctx, e.db, r2, secrets.Decrypt, ConvertOptions{}); err != nil || rep.Values != 21 {
			t.Fatalf("decrypt: %+v %v", rep, err)
		}
		for _, id := range ids {
			n, err := plain.GetNodeByID(e.ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			want := secretNode("")
			if n.DriverInfo["ipmi_password"] != want.DriverInfo["ipmi_password"] || n.InstanceInfo["configdrive"] != want.InstanceInfo["configdrive"] {
				t.Fatalf("after decrypt a plain store reads %v %v", n.DriverInfo, n.InstanceInfo)
			}
		}
		if strings.Contains(storetest.AllText(t, e.db), secrets.Prefix) {
			t.Fatal("a sealed value is left after decrypt")
		}
	})
}

// TestRotateUnderConcurrentWrites rotates while the conductor's way of
// writing (a delta under the node's lock) adds keys to every node: no
// write may be lost, and every value ends under the new key.
func TestRotateUnderConcurrentWrites(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		r1 := ring(t, "k1", map[string]byte{"k1": 1})
		r2 := ring(t, "k2", map[string]byte{"k1": 1, "k2": 2})
		old := New(e.db, WithKeyRing(r1))
		var ids []int64
		for i := range 20 {
			n, err := old.CreateNode(e.ctx, ptr(secretNode(fmt.Sprintf("n%d", i))))
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, n.ID)
		}
		// The service restarted with k2 current writes beside the command.
		s := New(e.db, WithKeyRing(r2))
		const writes = 5
		var wg sync.WaitGroup
		errc := make(chan error, 2*len(ids)+1)
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range writes {
					for _, id := range ids {
						if err := patchUnderLock(e.ctx, s, id, fmt.Sprintf("w%d-%d", w, i)); err != nil {
							errc <- err
							return
						}
					}
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := ConvertSecrets(e.ctx, e.db, r2, secrets.Rotate, ConvertOptions{}); err != nil {
				errc <- err
			}
		}()
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Fatal(err)
		}
		for _, id := range ids {
			n, err := s.GetNodeByID(e.ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			for w := range 2 {
				for i := range writes {
					k := fmt.Sprintf("w%d-%d", w, i)
					if n.DriverInfo[k] != "x" || n.DriverInfo[k+"_password"] != "pw-"+k {
						t.Fatalf("node %d lost write %s: %v", id, k, n.DriverInfo)
					}
				}
			}
			if n.DriverInfo["ipmi_password"] != plainSecrets[0] {
				t.Fatalf("node %d lost its password", id)
			}
		}
		sv, _ := SurveySecrets(e.ctx, e.db)
		if sv.Counts.Plain != 0 || len(sv.Counts.Sealed) != 1 || sv.Counts.Sealed["k2"] == 0 {
			t.Fatalf("after rotation: %+v", sv)
		}
	})
}

// patchUnderLock adds key k and a secret beside it to the node's
// driver_info as a conductor task does: lock, read, change, save and
// release, trying again while another holds the lock.
func patchUnderLock(ctx context.Context, s Store, id int64, k string) error {
	for {
		n, err := s.ReserveNode(ctx, "c-"+k, id)
		if _, locked := err.(*NodeLockedError); locked {
			continue
		}
		if err != nil {
			return err
		}
		n.DriverInfo[k] = "x"
		n.DriverInfo[k+"_password"] = "pw-" + k
		return s.SaveAndReleaseNode(ctx, "c-"+k, n, "driver_info")
	}
}
