package image

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseChecksumFile(t *testing.T) {
	md5 := strings.Repeat("a", 32)
	s256 := strings.Repeat("b", 64)
	s512 := strings.Repeat("c", 128)
	src := "http://h/images/disk.qcow2"
	cases := []struct {
		name, body, want, err string
	}{
		{"lone", s256 + "\n", s256, ""},
		{"lone invalid", "xyz", "", "Failed to download image U, reason: Invalid checksum file (No valid checksum found)"},
		{"empty", "\n \n", "", "Failed to download image U, reason: Checksum file empty."},
		{"gnu", md5 + "  other.img\n" + s256 + "  disk.qcow2\n", s256, ""},
		{"binary mark", s512 + " *disk.qcow2\n# c\n", s512, ""},
		{"bsd", "SHA256 (disk.qcow2) = " + s256 + "\n" + "x y\n", s256, ""},
		{"missing", s256 + "  other\n" + md5 + "  other2\n", "", "Failed to download image U, reason: Checksum file does not contain name disk.qcow2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseChecksumFile(c.body, "U", src)
			if c.err != "" {
				wantClass(t, err, "ImageDownloadFailed", c.err)
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v", got, err)
			}
		})
	}
}

func TestResolveChecksum(t *testing.T) {
	s256 := strings.Repeat("d", 64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(s256 + "  disk.img\n"))
	}))
	defer srv.Close()
	h, _ := NewHTTPService(DefaultOptions())
	c := &Checksums{Opts: DefaultOptions(), HTTP: h}
	ctx := t.Context()

	sum, algo, err := c.Resolve(ctx, map[string]any{"image_source": "http://x/disk.img", "image_checksum": srv.URL + "/SHA256SUMS"})
	if err != nil || sum != s256 || algo != "sha256" {
		t.Fatalf("url: %q %q %v", sum, algo, err)
	}
	sum, algo, _ = c.Resolve(ctx, map[string]any{"image_os_hash_value": "v", "image_os_hash_algo": "sha512", "image_checksum": "x"})
	if sum != "v" || algo != "sha512" {
		t.Fatalf("os_hash: %q %q", sum, algo)
	}
	md5 := strings.Repeat("e", 32)
	if sum, algo, err = c.Resolve(ctx, map[string]any{"image_source": "http://x/i", "image_checksum": md5}); err != nil || sum != md5 || algo != "" {
		t.Fatalf("md5 allowed: %q %q %v", sum, algo, err)
	}
	c.Opts.AllowMD5 = false
	_, _, err = c.Resolve(ctx, map[string]any{"image_source": "http://x/i", "image_checksum": md5})
	wantClass(t, err, "ImageChecksumAlgorithmFailure", "The requested image checksum algorithm cannot be loaded.")
	c.Opts.DisableChecksumFiles = true
	_, _, err = c.Resolve(ctx, map[string]any{"image_source": "http://x/i", "image_checksum": srv.URL})
	wantClass(t, err, "ImageChecksumURLNotSupported", "Use of remote checksum files is not supported.")

	dir := t.TempDir()
	p := writeFile(t, filepath.Join(dir, "f"), []byte("abc"))
	sum, algo, err = c.Resolve(ctx, map[string]any{"image_source": "file://" + p})
	if err != nil || algo != "sha256" || sum != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("file: %q %q %v", sum, algo, err)
	}
}

func TestValidateChecksum(t *testing.T) {
	p := writeFile(t, filepath.Join(t.TempDir(), "f"), []byte("abc"))
	ok := []struct{ sum, algo string }{
		{"900150983cd24fb0d6963f7d28e17f72", ""},
		{"sha256:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD", ""},
		{"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "SHA256"},
	}
	for _, c := range ok {
		if err := ValidateChecksum(p, c.sum, c.algo); err != nil {
			t.Errorf("%s/%s: %v", c.sum, c.algo, err)
		}
	}
	wantClass(t, ValidateChecksum(p, "sha256:", ""), "ImageChecksumError", "")
	wantClass(t, ValidateChecksum(p, "00", "sha256"), "ImageChecksumError", "")
	wantClass(t, ValidateChecksum(p, "00", "whirlpool"), "ImageChecksumAlgorithmFailure", "")
}
