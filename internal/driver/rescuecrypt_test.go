package driver

import (
	"strings"
	"testing"
)

// The vectors are Drepper's SHA-crypt reference ones, also what
// `openssl passwd -5/-6 -salt` prints.
func TestShaCrypt(t *testing.T) {
	cases := []struct{ alg, salt, password, want string }{
		{"sha256", "saltstring", "Hello world!", "$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5"},
		{"sha512", "saltstring", "Hello world!", "$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1"},
		{"sha256", "abcdefghijklmnop", "x", "$5$abcdefghijklmnop$fiUnwzJyCDn7Dx53oezcP81DtfKy73q.P999JrS8fsB"},
		{"sha256", "abcdefghijklmnopqrst", "x", "$5$abcdefghijklmnop$fiUnwzJyCDn7Dx53oezcP81DtfKy73q.P999JrS8fsB"},
	}
	for _, c := range cases {
		got, err := shaCrypt(c.password, c.salt, c.alg)
		if err != nil || got != c.want {
			t.Errorf("%s %q: got %q, %v; want %q", c.alg, c.password, got, err, c.want)
		}
	}
	if _, err := shaCrypt("x", "s", "md5"); err == nil {
		t.Error("md5 accepted")
	}
	h1, err := HashRescuePassword("pw", "sha512")
	if err != nil {
		t.Fatal(err)
	}
	h2, _ := HashRescuePassword("pw", "sha512")
	parts := strings.Split(h1, "$")
	if len(parts) != 4 || parts[1] != "6" || len(parts[2]) != 16 || h1 == h2 {
		t.Fatalf("hashes %q %q", h1, h2)
	}
	if again, _ := shaCrypt("pw", parts[2], "sha512"); again != h1 {
		t.Errorf("rehash with the same salt = %q, want %q", again, h1)
	}
}
