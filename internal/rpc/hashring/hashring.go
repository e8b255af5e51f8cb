// Package hashring is a consistent hash ring that places keys exactly as
// tooz.hashring.HashRing does with the arguments Ironic passes it, so a Go
// API or conductor and a Python one agree on which conductor owns a node.
//
// Each host gets 2**partitionExponent points on the ring. The points of a
// host k are H(k·k), H(k·k·k), … (a running hash of k, updated with k once
// more before each digest). A key maps to the first point strictly greater
// than H(key), wrapping to the first point. Digests are compared as
// big-endian unsigned integers, which for digests of one length is plain
// byte order, so lookups need no big integers.
package hashring

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"fmt"
	"hash"
	"slices"
	"sort"
	"strings"

	"golang.org/x/crypto/blake2b"
	"golang.org/x/crypto/blake2s"
)

// maxPartitionExponent bounds the ring's memory: upstream accepts any
// exponent, but 2**20 points per host is already far past any useful
// spread and a typo such as 50 would exhaust memory.
const maxPartitionExponent = 20

// maxDigest is the longest digest of a supported algorithm (sha512, blake2b).
const maxDigest = 64

type algorithm int

const (
	algMD5 algorithm = iota
	algSHA1
	algSHA224
	algSHA256
	algSHA384
	algSHA512
	algSHA512_224
	algSHA512_256
	algSHA3_224
	algSHA3_256
	algSHA3_384
	algSHA3_512
	algBLAKE2b
	algBLAKE2s
)

// algorithms maps hashlib's names to ours. shake_128 and shake_256 are in
// hashlib too, but tooz reads digests with hexdigest(), which they cannot
// answer without a length, so no tooz ring can use them.
var algorithms = map[string]struct {
	alg  algorithm
	size int
}{
	"md5":        {algMD5, md5.Size},
	"sha1":       {algSHA1, sha1.Size},
	"sha224":     {algSHA224, sha256.Size224},
	"sha256":     {algSHA256, sha256.Size},
	"sha384":     {algSHA384, sha512.Size384},
	"sha512":     {algSHA512, sha512.Size},
	"sha512_224": {algSHA512_224, sha512.Size224},
	"sha512_256": {algSHA512_256, sha512.Size256},
	"sha3_224":   {algSHA3_224, 28},
	"sha3_256":   {algSHA3_256, 32},
	"sha3_384":   {algSHA3_384, 48},
	"sha3_512":   {algSHA3_512, 64},
	"blake2b":    {algBLAKE2b, blake2b.Size},
	"blake2s":    {algBLAKE2s, blake2s.Size},
}

// Algorithms lists the accepted hash_ring_algorithm names, sorted.
func Algorithms() []string {
	out := make([]string, 0, len(algorithms))
	for name := range algorithms {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

func (a algorithm) new() hash.Hash {
	switch a {
	case algMD5:
		return md5.New()
	case algSHA1:
		return sha1.New()
	case algSHA224:
		return sha256.New224()
	case algSHA256:
		return sha256.New()
	case algSHA384:
		return sha512.New384()
	case algSHA512:
		return sha512.New()
	case algSHA512_224:
		return sha512.New512_224()
	case algSHA512_256:
		return sha512.New512_256()
	case algSHA3_224:
		return sha3.New224()
	case algSHA3_256:
		return sha3.New256()
	case algSHA3_384:
		return sha3.New384()
	case algSHA3_512:
		return sha3.New512()
	case algBLAKE2b:
		h, _ := blake2b.New512(nil) // fails only for a key over 64 bytes
		return h
	case algBLAKE2s:
		h, _ := blake2s.New256(nil) // fails only for a key over 32 bytes
		return h
	}
	panic(fmt.Sprintf("hashring: algorithm %d has no constructor", a))
}

// sum hashes data into out through the one-shot functions, which keep the
// state on the stack: a lookup then allocates nothing.
func (a algorithm) sum(data []byte, out *[maxDigest]byte) {
	switch a {
	case algMD5:
		s := md5.Sum(data)
		copy(out[:], s[:])
	case algSHA1:
		s := sha1.Sum(data)
		copy(out[:], s[:])
	case algSHA224:
		s := sha256.Sum224(data)
		copy(out[:], s[:])
	case algSHA256:
		s := sha256.Sum256(data)
		copy(out[:], s[:])
	case algSHA384:
		s := sha512.Sum384(data)
		copy(out[:], s[:])
	case algSHA512:
		s := sha512.Sum512(data)
		copy(out[:], s[:])
	case algSHA512_224:
		s := sha512.Sum512_224(data)
		copy(out[:], s[:])
	case algSHA512_256:
		s := sha512.Sum512_256(data)
		copy(out[:], s[:])
	case algSHA3_224:
		s := sha3.Sum224(data)
		copy(out[:], s[:])
	case algSHA3_256:
		s := sha3.Sum256(data)
		copy(out[:], s[:])
	case algSHA3_384:
		s := sha3.Sum384(data)
		copy(out[:], s[:])
	case algSHA3_512:
		s := sha3.Sum512(data)
		copy(out[:], s[:])
	case algBLAKE2b:
		s := blake2b.Sum512(data)
		copy(out[:], s[:])
	case algBLAKE2s:
		s := blake2s.Sum256(data)
		copy(out[:], s[:])
	default:
		panic(fmt.Sprintf("hashring: algorithm %d has no sum", a))
	}
}

// Ring maps keys to hosts. It is immutable once built and safe for
// concurrent use; membership changes build a new ring, as Ironic does.
type Ring struct {
	alg  algorithm
	size int // digest length in bytes
	// points holds the sorted ring positions back to back, size bytes each.
	points []byte
	// owners[i] indexes hosts for the i-th point.
	owners []int32
	hosts  []string
}

// New builds the ring of hosts with 2**partitionExponent points each,
// hashed with algorithm (a hashlib name such as "md5", Ironic's default).
// Duplicate hosts count once.
func New(hosts []string, partitionExponent int, algorithm string) (*Ring, error) {
	a, ok := algorithms[algorithm]
	if !ok {
		return nil, fmt.Errorf("hash ring: hash function %q is not supported, supported are %s",
			algorithm, strings.Join(Algorithms(), ", "))
	}
	if partitionExponent < 0 || partitionExponent > maxPartitionExponent {
		return nil, fmt.Errorf("hash ring: partition exponent %d is outside 0..%d",
			partitionExponent, maxPartitionExponent)
	}
	perHost := 1 << partitionExponent
	r := &Ring{alg: a.alg, size: a.size}
	// Python iterates a set, whose order is arbitrary; the order matters only
	// when two points collide, which a cryptographic digest makes
	// practically impossible. Sorting makes our choice reproducible.
	r.hosts = slices.Compact(slices.Sorted(slices.Values(hosts)))

	type point struct {
		pos   []byte
		owner int32
	}
	pts := make([]point, 0, len(r.hosts)*perHost)
	flat := make([]byte, 0, len(r.hosts)*perHost*a.size)
	for hi, host := range r.hosts {
		k := []byte(host)
		h := a.alg.new()
		h.Write(k)
		for range perHost {
			h.Write(k)
			start := len(flat)
			flat = h.Sum(flat)
			pts = append(pts, point{pos: flat[start:len(flat):len(flat)], owner: int32(hi)})
		}
	}
	// Stable, so among equal points the one added last comes last and wins,
	// as a later dict assignment wins in tooz.
	sort.SliceStable(pts, func(i, j int) bool { return bytes.Compare(pts[i].pos, pts[j].pos) < 0 })
	r.points = make([]byte, 0, len(flat))
	r.owners = make([]int32, 0, len(pts))
	for i, p := range pts {
		if i+1 < len(pts) && bytes.Equal(p.pos, pts[i+1].pos) {
			continue
		}
		r.points = append(r.points, p.pos...)
		r.owners = append(r.owners, p.owner)
	}
	return r, nil
}

// Hosts returns the distinct hosts of the ring, sorted.
func (r *Ring) Hosts() []string { return slices.Clone(r.hosts) }

// Len is the number of points on the ring (hosts × points per host).
func (r *Ring) Len() int { return len(r.owners) }

// Point returns the i-th point in ascending order: its position (the digest,
// big-endian) and the host it belongs to.
func (r *Ring) Point(i int) (position []byte, host string) {
	return slices.Clone(r.point(i)), r.hosts[r.owners[i]]
}

func (r *Ring) point(i int) []byte { return r.points[i*r.size : (i+1)*r.size] }

// Partition returns the index of the point where the lookup of key starts:
// the first point strictly greater than the key's digest, or 0 past the
// last point (and on an empty ring).
func (r *Ring) Partition(key string) int {
	var buf [64]byte
	var data []byte
	if len(key) <= len(buf) {
		data = append(buf[:0], key...)
	} else {
		data = []byte(key)
	}
	var d [maxDigest]byte
	r.alg.sum(data, &d)
	digest := d[:r.size]

	lo, hi := 0, len(r.owners)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if bytes.Compare(r.point(mid), digest) > 0 {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo == len(r.owners) {
		return 0
	}
	return lo
}

// Primary returns the host owning key (what Ironic's get_conductor_for
// pops from get_nodes), or false on an empty ring.
func (r *Ring) Primary(key string) (string, bool) {
	if len(r.owners) == 0 {
		return "", false
	}
	return r.hosts[r.owners[r.Partition(key)]], true
}

// GetNodes returns up to replicas distinct hosts for key, skipping those in
// ignore, as tooz's get_nodes: it wants min(replicas, hosts not ignored)
// hosts and walks the ring from the key's partition, wrapping around, until
// it has them. tooz returns a set; the hosts here come in walk order, so
// the first is the primary when it is not ignored.
func (r *Ring) GetNodes(key string, ignore []string, replicas int) []string {
	candidates := 0
	for _, h := range r.hosts {
		if !slices.Contains(ignore, h) {
			candidates++
		}
	}
	want := min(replicas, candidates)
	if want <= 0 {
		return nil
	}
	out := make([]string, 0, want)
	n := len(r.owners)
	// One lap visits every point; tooz would loop for ever if a host lost
	// all its points to collisions, we stop with what we found.
	for i, p := 0, r.Partition(key); i < n && len(out) < want; i, p = i+1, (p+1)%n {
		h := r.hosts[r.owners[p]]
		if !slices.Contains(ignore, h) && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}
