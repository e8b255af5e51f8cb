package image

import (
	"context"
	"crypto/md5"  //nolint:gosec // image_checksum is md5 when [agent]/allow_md5_checksum permits
	"crypto/sha1" //nolint:gosec // hashlib offers it; upstream accepts any hashlib name
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"encoding/hex"
	"hash"
	"io"
	"net/url"
	"os"
	"path"
	"regexp"
	"strings"

	"golang.org/x/crypto/blake2b"
	"golang.org/x/crypto/blake2s"

	"github.com/openkeel/ironic/internal/errs"
)

// newHash returns the hashlib algorithm of that name, nil when unknown.
func newHash(algo string) hash.Hash {
	switch strings.ToLower(algo) {
	case "md5":
		return md5.New() //nolint:gosec
	case "sha1":
		return sha1.New() //nolint:gosec
	case "sha224":
		return sha256.New224()
	case "sha256":
		return sha256.New()
	case "sha384":
		return sha512.New384()
	case "sha512":
		return sha512.New()
	case "sha512_224":
		return sha512.New512_224()
	case "sha512_256":
		return sha512.New512_256()
	case "sha3_224":
		return sha3.New224()
	case "sha3_256":
		return sha3.New256()
	case "sha3_384":
		return sha3.New384()
	case "sha3_512":
		return sha3.New512()
	case "blake2b":
		h, _ := blake2b.New512(nil)
		return h
	case "blake2s":
		h, _ := blake2s.New256(nil)
		return h
	}
	return nil
}

var (
	errChecksum          = func() *errs.Error { return errs.New(errs.ClassImageChecksumError, nil) }
	errChecksumAlgorithm = func() *errs.Error { return errs.New(errs.ClassImageChecksumAlgorithmFailure, nil) }
)

// ValidateChecksum is upstream's validate_checksum: checksum may carry
// its algorithm as "algo:value"; a bare value without algo is md5.
func ValidateChecksum(path, checksum, algo string) error {
	value := checksum
	if i := strings.Index(checksum, ":"); i >= 0 {
		parts := strings.Split(checksum, ":")
		value, algo = parts[1], parts[0]
	}
	if value == "" {
		return errChecksum()
	}
	if algo == "" {
		algo = "md5"
	}
	got, err := FileChecksum(path, algo)
	if err != nil {
		return err
	}
	if !strings.EqualFold(got, value) {
		return errChecksum()
	}
	return nil
}

// FileChecksum computes the hex digest of a file.
func FileChecksum(path, algo string) (string, error) {
	h := newHash(algo)
	if h == nil {
		return "", errChecksumAlgorithm()
	}
	f, err := os.Open(path)
	if err != nil {
		return "", errs.New(errs.ClassImageChecksumFileReadFailure, nil)
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return "", errs.New(errs.ClassImageChecksumFileReadFailure, nil)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Checksums resolves the checksum of a deploy image from instance_info,
// as upstream's get_checksum_and_algo does.
type Checksums struct {
	Opts Options
	// HTTP fetches checksum files; nil refuses checksum URLs.
	HTTP *HTTPService
}

// Resolve returns the checksum value and algorithm ("" when it is implied
// by length or unknown) for instance_info: image_os_hash_value wins over
// image_checksum; a checksum URL is read and searched for the image's file
// name; file:// images without a checksum get their sha256 computed.
func (c *Checksums) Resolve(ctx context.Context, instanceInfo map[string]any) (checksum, algo string, err error) {
	str := func(k string) string { s, _ := instanceInfo[k].(string); return s }
	if _, ok := instanceInfo["image_os_hash_value"]; ok {
		return str("image_os_hash_value"), str("image_os_hash_algo"), nil
	}
	checksum = str("image_checksum")
	source := str("image_source")
	_, present := instanceInfo["image_checksum"]
	switch {
	case (!present || instanceInfo["image_checksum"] == nil) && strings.HasPrefix(source, "file:"):
		u, perr := url.Parse(source)
		if perr != nil {
			return "", "", refValidationFailed(source, perr.Error())
		}
		sum, ferr := FileChecksum(u.Path, "sha256")
		if ferr != nil {
			return "", "", ferr
		}
		return sum, "sha256", nil
	case checksum == "":
		return "", "", nil
	}
	isURL, err := c.isChecksumURL(checksum)
	if err != nil {
		return "", "", err
	}
	if isURL {
		if checksum, err = c.fromURL(ctx, checksum, source); err != nil {
			return "", "", err
		}
	}
	switch len(checksum) {
	case 128:
		algo = "sha512"
	case 64:
		algo = "sha256"
	case 32:
		if !c.Opts.AllowMD5 {
			return "", "", errChecksumAlgorithm()
		}
	}
	return checksum, algo, nil
}

func (c *Checksums) isChecksumURL(checksum string) (bool, error) {
	if strings.HasPrefix(checksum, "http://") || strings.HasPrefix(checksum, "https://") {
		if c.Opts.DisableChecksumFiles {
			return false, errs.New(errs.ClassImageChecksumURLNotSupported, nil)
		}
		return true, nil
	}
	return false, nil
}

// Patterns of checksum files, shared with ironic-python-agent.
var (
	checksumMatchers = []*regexp.Regexp{
		regexp.MustCompile(`^([a-fA-F\d]{32})\s`), regexp.MustCompile(`\s([a-fA-F\d]{32})$`),
		regexp.MustCompile(`^([a-fA-F\d]{64})\s`), regexp.MustCompile(`\s([a-fA-F\d]{64})$`),
		regexp.MustCompile(`^([a-fA-F\d]{128})\s`), regexp.MustCompile(`\s([a-fA-F\d]{128})$`),
	}
	checksumOnlyMatchers = []*regexp.Regexp{
		regexp.MustCompile(`^([a-fA-F\d]{32})$`),
		regexp.MustCompile(`^([a-fA-F\d]{64})$`),
		regexp.MustCompile(`^([a-fA-F\d]{128})$`),
	}
)

func (c *Checksums) fromURL(ctx context.Context, checksumURL, source string) (string, error) {
	if c.HTTP == nil {
		return "", errs.New(errs.ClassImageChecksumURLNotSupported, nil)
	}
	body, err := c.HTTP.Get(ctx, checksumURL)
	if err != nil {
		return "", err
	}
	return ParseChecksumFile(body, checksumURL, source)
}

// ParseChecksumFile finds the checksum of source's file name in a
// checksum file (sha256sum/md5sum output, BSD "(name)" style, or a lone
// checksum).
func ParseChecksumFile(body, checksumURL, source string) (string, error) {
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return "", downloadFailed(checksumURL, "Checksum file empty.")
	}
	if len(lines) == 1 && !strings.Contains(lines[0], " ") {
		for _, m := range checksumOnlyMatchers {
			if sm := m.FindStringSubmatch(lines[0]); sm != nil {
				return sm[1], nil
			}
		}
		return "", downloadFailed(checksumURL, "Invalid checksum file (No valid checksum found)")
	}
	name := ""
	if u, err := url.Parse(source); err == nil {
		name = path.Base(u.Path)
		if u.Path == "" || strings.HasSuffix(u.Path, "/") {
			name = ""
		}
	}
	q := regexp.QuoteMeta(name)
	nameMatchers := []*regexp.Regexp{
		regexp.MustCompile(`\s[*]?` + q + `$`),
		regexp.MustCompile(`\s\(` + q + `\)\s`),
	}
	for _, line := range lines {
		if strings.HasPrefix(line, "#") {
			continue
		}
		named := false
		for _, m := range nameMatchers {
			if m.MatchString(line) {
				named = true
				break
			}
		}
		if !named {
			continue
		}
		for _, m := range checksumMatchers {
			if sm := m.FindStringSubmatch(line); sm != nil {
				return sm[1], nil
			}
		}
	}
	return "", downloadFailed(checksumURL, "Checksum file does not contain name "+name)
}

// verifyingWriter hashes what passes through it (upstream's
// TransferHelper).
type verifyingWriter struct {
	w    io.Writer
	h    hash.Hash
	want string
}

func (v *verifyingWriter) Write(p []byte) (int, error) {
	n, err := v.w.Write(p)
	v.h.Write(p[:n])
	return n, err
}

func (v *verifyingWriter) matches() bool {
	return hex.EncodeToString(v.h.Sum(nil)) == v.want
}

// newVerifyingWriter returns nil when the transfer cannot be checked
// while streaming (md5 refused by configuration, unknown algorithm);
// upstream then downloads unchecked and verifies the file afterwards.
func newVerifyingWriter(w io.Writer, checksum, algo string, allowMD5 bool) *verifyingWriter {
	if checksum == "" || algo == "" {
		return nil
	}
	if strings.EqualFold(algo, "md5") && !allowMD5 {
		return nil
	}
	h := newHash(algo)
	if h == nil {
		return nil
	}
	return &verifyingWriter{w: w, h: h, want: checksum}
}
