package driver

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"hash"
	"strings"
)

// cryptAlphabet is crypt(3)'s base-64 alphabet.
const cryptAlphabet = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// HashRescuePassword is upstream hash_password: crypt(3) SHA-256 ($5$) or
// SHA-512 ($6$) with a random 16-character salt, which IPA writes into
// the rescue user's shadow entry as is.
func HashRescuePassword(password, algorithm string) (string, error) {
	buf := make([]byte, 16)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("rescue password salt: %w", err)
	}
	salt := make([]byte, len(buf))
	for i, b := range buf {
		salt[i] = cryptAlphabet[int(b)%len(cryptAlphabet)]
	}
	return shaCrypt(password, string(salt), algorithm)
}

// shaCrypt is Drepper's SHA-crypt with the default 5000 rounds.
func shaCrypt(password, salt, algorithm string) (string, error) {
	var newHash func() hash.Hash
	var prefix string
	var order []int
	switch algorithm {
	case "sha256":
		newHash, prefix = sha256.New, "$5$"
		order = []int{0, 10, 20, 21, 1, 11, 12, 22, 2, 3, 13, 23, 24, 4, 14, 15, 25, 5, 6, 16, 26, 27, 7, 17, 18, 28, 8, 9, 19, 29, -1, 31, 30}
	case "sha512":
		newHash, prefix = sha512.New, "$6$"
		order = []int{0, 21, 42, 22, 43, 1, 44, 2, 23, 3, 24, 45, 25, 46, 4, 47, 5, 26, 6, 27, 48, 28, 49, 7, 50, 8, 29, 9, 30, 51, 31, 52, 10,
			53, 11, 32, 12, 33, 54, 34, 55, 13, 56, 14, 35, 15, 36, 57, 37, 58, 16, 59, 17, 38, 18, 39, 60, 40, 61, 19, 62, 20, 41, -1, -1, 63}
	default:
		return "", fmt.Errorf("unsupported rescue password hash algorithm %q", algorithm)
	}
	if len(salt) > 16 {
		salt = salt[:16]
	}
	p, s := []byte(password), []byte(salt)

	b := newHash()
	b.Write(p)
	b.Write(s)
	b.Write(p)
	sumB := b.Sum(nil)
	size := len(sumB)

	a := newHash()
	a.Write(p)
	a.Write(s)
	for n := len(p); n > 0; n -= size {
		a.Write(sumB[:min(n, size)])
	}
	for n := len(p); n > 0; n >>= 1 {
		if n&1 != 0 {
			a.Write(sumB)
		} else {
			a.Write(p)
		}
	}
	sumA := a.Sum(nil)

	dp := newHash()
	for range p {
		dp.Write(p)
	}
	sumDP := dp.Sum(nil)
	seqP := make([]byte, 0, len(p))
	for n := len(p); n > 0; n -= size {
		seqP = append(seqP, sumDP[:min(n, size)]...)
	}

	ds := newHash()
	for i := 0; i < 16+int(sumA[0]); i++ {
		ds.Write(s)
	}
	sumDS := ds.Sum(nil)
	seqS := make([]byte, 0, len(s))
	for n := len(s); n > 0; n -= size {
		seqS = append(seqS, sumDS[:min(n, size)]...)
	}

	cur := sumA
	for i := 0; i < 5000; i++ {
		c := newHash()
		if i&1 != 0 {
			c.Write(seqP)
		} else {
			c.Write(cur)
		}
		if i%3 != 0 {
			c.Write(seqS)
		}
		if i%7 != 0 {
			c.Write(seqP)
		}
		if i&1 != 0 {
			c.Write(cur)
		} else {
			c.Write(seqP)
		}
		cur = c.Sum(nil)
	}

	var out strings.Builder
	out.WriteString(prefix + salt + "$")
	// Bytes go out three at a time in the algorithm's order; -1 pads.
	for i := 0; i+2 < len(order); i += 3 {
		var v uint32
		n := 4
		for j, idx := range order[i : i+3] {
			if idx >= 0 {
				v |= uint32(cur[idx]) << (8 * (2 - j))
			}
		}
		switch {
		case order[i] == -1 && order[i+1] == -1:
			n = 2
		case order[i] == -1:
			n = 3
		}
		for k := 0; k < n; k++ {
			out.WriteByte(cryptAlphabet[v&0x3f])
			v >>= 6
		}
	}
	return out.String(), nil
}
