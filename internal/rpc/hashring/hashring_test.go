package hashring

import (
	"crypto"
	_ "crypto/md5"
	_ "crypto/sha1"
	_ "crypto/sha256"
	_ "crypto/sha3"
	_ "crypto/sha512"
	"encoding/hex"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	_ "golang.org/x/crypto/blake2b"
	_ "golang.org/x/crypto/blake2s"

	"github.com/openkeel/ironic/internal/spectest"
)

const vectorsSpec = "ironic/core/hash-ring-vectors.json"

type ringVectors struct {
	Counts struct {
		Rings    int `json:"rings"`
		Primary  int `json:"primary_vectors"`
		Replicas int `json:"replica_and_ignore_vectors"`
	} `json:"counts"`
	NodeUUIDs []string `json:"node_uuids"`
	Rings     []struct {
		Setting      string         `json:"setting"`
		Exponent     int            `json:"hash_partition_exponent"`
		PerHost      int            `json:"partitions_per_host"`
		Algorithm    string         `json:"hash_ring_algorithm"`
		Hosts        []string       `json:"hosts"`
		RingSize     int            `json:"ring_size"`
		Points       [][2]string    `json:"ring_points_sorted"`
		Distribution map[string]int `json:"distribution"`
		Vectors      []struct {
			NodeUUID  string `json:"node_uuid"`
			Conductor string `json:"conductor"`
			KeyHash   string `json:"key_hash"`
			RingIndex int    `json:"ring_index"`
		} `json:"vectors"`
		Replicas []struct {
			NodeUUID    string   `json:"node_uuid"`
			Replicas    int      `json:"replicas"`
			IgnoreNodes []string `json:"ignore_nodes"`
			NodesSorted []string `json:"nodes_sorted"`
		} `json:"replica_and_ignore_vectors"`
	} `json:"rings"`
}

// reference hashes data with the standard library's registry, independent of
// the ring's own dispatch, as hashlib.new(name, data) would.
var reference = map[string]crypto.Hash{
	"md5": crypto.MD5, "sha1": crypto.SHA1, "sha224": crypto.SHA224,
	"sha256": crypto.SHA256, "sha384": crypto.SHA384, "sha512": crypto.SHA512,
	"sha512_224": crypto.SHA512_224, "sha512_256": crypto.SHA512_256,
	"sha3_224": crypto.SHA3_224, "sha3_256": crypto.SHA3_256,
	"sha3_384": crypto.SHA3_384, "sha3_512": crypto.SHA3_512,
	"blake2b": crypto.BLAKE2b_512, "blake2s": crypto.BLAKE2s_256,
}

func refHash(t *testing.T, alg string, data []byte) []byte {
	t.Helper()
	c, ok := reference[alg]
	if !ok || !c.Available() {
		t.Fatalf("no reference hash for %q", alg)
	}
	h := c.New()
	h.Write(data)
	return h.Sum(nil)
}

// pyHex prints a digest as Python's hex(int(hexdigest, 16)) without "0x":
// lowercase, no leading zeros.
func pyHex(b []byte) string {
	return new(big.Int).SetBytes(b).Text(16)
}

func loadVectors(t *testing.T) ringVectors {
	t.Helper()
	var v ringVectors
	spectest.LoadJSON(t, vectorsSpec, &v)
	if len(v.Rings) != v.Counts.Rings {
		t.Fatalf("%d rings, counts say %d", len(v.Rings), v.Counts.Rings)
	}
	return v
}

func TestRingPointsMatchSpec(t *testing.T) {
	v := loadVectors(t)
	for _, spec := range v.Rings {
		t.Run(fmt.Sprintf("%s/%d", spec.Setting, len(spec.Hosts)), func(t *testing.T) {
			if spec.PerHost != 1<<spec.Exponent {
				t.Fatalf("spec: %d points per host for exponent %d", spec.PerHost, spec.Exponent)
			}
			r, err := New(spec.Hosts, spec.Exponent, spec.Algorithm)
			if err != nil {
				t.Fatal(err)
			}
			if r.Len() != spec.RingSize || len(spec.Points) != spec.RingSize {
				t.Fatalf("ring size %d, spec %d (%d points listed)", r.Len(), spec.RingSize, len(spec.Points))
			}
			for i, want := range spec.Points {
				pos, host := r.Point(i)
				if got := pyHex(pos); got != want[0] || host != want[1] {
					t.Errorf("point %d = (%s, %s), want (%s, %s)", i, got, host, want[0], want[1])
				}
			}
			if !slices.Equal(r.Hosts(), slices.Sorted(slices.Values(spec.Hosts))) {
				t.Errorf("hosts %q, spec %q", r.Hosts(), spec.Hosts)
			}
		})
	}
}

func TestRingPrimaryMatchesSpec(t *testing.T) {
	v := loadVectors(t)
	total := 0
	for _, spec := range v.Rings {
		t.Run(fmt.Sprintf("%s/%d", spec.Setting, len(spec.Hosts)), func(t *testing.T) {
			r, err := New(spec.Hosts, spec.Exponent, spec.Algorithm)
			if err != nil {
				t.Fatal(err)
			}
			if len(spec.Vectors) != len(v.NodeUUIDs) {
				t.Errorf("%d vectors for %d node UUIDs", len(spec.Vectors), len(v.NodeUUIDs))
			}
			dist := map[string]int{}
			for i, vec := range spec.Vectors {
				total++
				if vec.NodeUUID != v.NodeUUIDs[i] {
					t.Errorf("vector %d is for %s, node_uuids has %s", i, vec.NodeUUID, v.NodeUUIDs[i])
				}
				if got := pyHex(refHash(t, spec.Algorithm, []byte(vec.NodeUUID))); got != vec.KeyHash {
					t.Errorf("%s: key hash %s, spec %s", vec.NodeUUID, got, vec.KeyHash)
				}
				if got := r.Partition(vec.NodeUUID); got != vec.RingIndex {
					t.Errorf("%s: partition %d, spec %d", vec.NodeUUID, got, vec.RingIndex)
				}
				host, ok := r.Primary(vec.NodeUUID)
				if !ok || host != vec.Conductor {
					t.Errorf("%s: primary %q (%v), spec %q", vec.NodeUUID, host, ok, vec.Conductor)
				}
				if got := r.GetNodes(vec.NodeUUID, nil, 1); !slices.Equal(got, []string{vec.Conductor}) {
					t.Errorf("%s: GetNodes(replicas=1) = %q, spec %q", vec.NodeUUID, got, vec.Conductor)
				}
				dist[host]++
			}
			if len(dist) != len(spec.Distribution) {
				t.Errorf("distribution %v, spec %v", dist, spec.Distribution)
			}
			for h, n := range spec.Distribution {
				if dist[h] != n {
					t.Errorf("%s owns %d nodes, spec %d", h, dist[h], n)
				}
			}
		})
	}
	if total != v.Counts.Primary {
		t.Errorf("replayed %d primary vectors, counts say %d", total, v.Counts.Primary)
	}
}

func TestRingReplicasAndIgnoreMatchSpec(t *testing.T) {
	v := loadVectors(t)
	total := 0
	for _, spec := range v.Rings {
		r, err := New(spec.Hosts, spec.Exponent, spec.Algorithm)
		if err != nil {
			t.Fatal(err)
		}
		for i, vec := range spec.Replicas {
			total++
			name := fmt.Sprintf("%s/%d/%d", spec.Setting, len(spec.Hosts), i)
			got := r.GetNodes(vec.NodeUUID, vec.IgnoreNodes, vec.Replicas)
			sorted := slices.Sorted(slices.Values(got))
			if !slices.Equal(sorted, vec.NodesSorted) {
				t.Errorf("%s: GetNodes(%s, ignore=%q, replicas=%d) = %q, spec %q",
					name, vec.NodeUUID, vec.IgnoreNodes, vec.Replicas, sorted, vec.NodesSorted)
			}
			if len(slices.Compact(sorted)) != len(got) {
				t.Errorf("%s: duplicate hosts in %q", name, got)
			}
			// Walk order: the primary comes first unless it is ignored.
			primary, _ := r.Primary(vec.NodeUUID)
			if len(got) > 0 && !slices.Contains(vec.IgnoreNodes, primary) && got[0] != primary {
				t.Errorf("%s: first host %q, primary %q", name, got[0], primary)
			}
		}
	}
	if total != v.Counts.Replicas {
		t.Errorf("replayed %d replica/ignore vectors, counts say %d", total, v.Counts.Replicas)
	}
}

// Algorithms without vectors are checked against a one-shot computation of
// tooz's definition: the r-th point of host k is H(k repeated r+2 times).
func TestRingAllAlgorithmsFollowToozDefinition(t *testing.T) {
	hosts := []string{"conductor-b", "conductor-a", "conductor-c", "conductor-a"}
	keys := []string{"93c9da93-7ffb-498e-afc1-2798ea05112e", "", strings.Repeat("x", 100)}
	for _, alg := range Algorithms() {
		t.Run(alg, func(t *testing.T) {
			r, err := New(hosts, 3, alg)
			if err != nil {
				t.Fatal(err)
			}
			type pt struct{ pos, host string }
			var want []pt
			for _, h := range []string{"conductor-a", "conductor-b", "conductor-c"} {
				for i := range 8 {
					d := refHash(t, alg, []byte(strings.Repeat(h, i+2)))
					want = append(want, pt{hex.EncodeToString(d), h})
				}
			}
			slices.SortFunc(want, func(a, b pt) int { return strings.Compare(a.pos, b.pos) })
			if r.Len() != len(want) {
				t.Fatalf("ring has %d points, want %d", r.Len(), len(want))
			}
			for i, w := range want {
				pos, host := r.Point(i)
				if hex.EncodeToString(pos) != w.pos || host != w.host {
					t.Errorf("point %d = (%x, %s), want (%s, %s)", i, pos, host, w.pos, w.host)
				}
			}
			for _, k := range keys {
				d := hex.EncodeToString(refHash(t, alg, []byte(k)))
				i := slices.IndexFunc(want, func(p pt) bool { return p.pos > d })
				if i < 0 {
					i = 0
				}
				if got := r.Partition(k); got != i {
					t.Errorf("Partition(%.20q) = %d, want %d", k, got, i)
				}
				if got, _ := r.Primary(k); got != want[i].host {
					t.Errorf("Primary(%.20q) = %q, want %q", k, got, want[i].host)
				}
			}
		})
	}
	if got, want := len(Algorithms()), len(reference); got != want {
		t.Errorf("%d algorithms, %d reference hashes", got, want)
	}
}

func TestNewRejectsBadArguments(t *testing.T) {
	for _, c := range []struct {
		alg string
		exp int
	}{
		{"shake_128", 5}, {"MD5", 5}, {"crc32", 5}, {"", 5},
		{"md5", -1}, {"md5", maxPartitionExponent + 1},
	} {
		if _, err := New([]string{"a"}, c.exp, c.alg); err == nil {
			t.Errorf("New(exponent %d, %q) accepted", c.exp, c.alg)
		}
	}
	r, err := New([]string{"a"}, 0, "md5")
	if err != nil || r.Len() != 1 {
		t.Errorf("exponent 0: %v, %d points", err, r.Len())
	}
}

func TestEmptyRingAndDegenerateRequests(t *testing.T) {
	empty, err := New(nil, 5, "md5")
	if err != nil {
		t.Fatal(err)
	}
	if h, ok := empty.Primary("x"); ok || h != "" {
		t.Errorf("empty ring Primary = %q, %v", h, ok)
	}
	if got := empty.GetNodes("x", nil, 3); len(got) != 0 {
		t.Errorf("empty ring GetNodes = %q", got)
	}
	if empty.Partition("x") != 0 {
		t.Errorf("empty ring partition should be 0")
	}

	r, err := New([]string{"a", "b", "c"}, 5, "md5")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.GetNodes("k", []string{"a", "b", "c"}, 1); len(got) != 0 {
		t.Errorf("all ignored: %q", got)
	}
	if got := r.GetNodes("k", nil, 0); len(got) != 0 {
		t.Errorf("zero replicas: %q", got)
	}
	if got := r.GetNodes("k", []string{"not-a-member"}, 5); len(got) != 3 {
		t.Errorf("unknown ignored host must not reduce the hosts: %q", got)
	}
}

func BenchmarkPrimary(b *testing.B) {
	hosts := make([]string, 10)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("ironic-conductor-%d.ironic-conductor:8089", i)
	}
	r, err := New(hosts, 5, "md5")
	if err != nil {
		b.Fatal(err)
	}
	const node = "93c9da93-7ffb-498e-afc1-2798ea05112e"
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := r.Primary(node); !ok {
			b.Fatal("no primary")
		}
	}
}
