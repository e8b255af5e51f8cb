package image

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// blockedFileURLPaths are never readable through file:// whatever the
// allow list says (upstream's BLOCKED_FILE_URL_PATHS).
var blockedFileURLPaths = []string{"/dev", "/sys", "/proc", "/boot", "/etc", "/run"}

// FileService reads images from the conductor's file system, restricted
// to AllowedPaths ([conductor]/file_url_allowed_paths).
type FileService struct {
	AllowedPaths []string
}

// Path validates href (upstream's FileImageService.validate_href) and
// returns the local path.
func (s *FileService) Path(href string) (string, error) {
	u, err := url.Parse(href)
	if err != nil {
		return "", refValidationFailed(href, err.Error())
	}
	p := u.Path
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", refValidationFailed(href, err.Error())
	}
	for _, bad := range blockedFileURLPaths {
		if abs == bad || strings.HasPrefix(abs, bad+"/") {
			return "", refValidationFailed(href, "Security: The path "+bad+" is not permitted in file URLs")
		}
	}
	allowed := false
	for _, a := range s.AllowedPaths {
		if abs == a || strings.HasPrefix(abs, a+"/") {
			allowed = true
			break
		}
	}
	if !allowed {
		return "", refValidationFailed(href, "Security: Path "+p+" is not allowed for image source file URLs")
	}
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		return "", refValidationFailed(href, "Specified image file not found.")
	}
	return p, nil
}

// Show returns the file's size and modification time; file images are
// never cached (upstream: no point caching local files).
func (s *FileService) Show(_ context.Context, href string) (*Info, error) {
	p, err := s.Path(href)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, refValidationFailed(href, err.Error())
	}
	return &Info{Size: st.Size(), UpdatedAt: st.ModTime().UTC(), NoCache: true, Properties: map[string]any{}}, nil
}

// Download copies the file into dst.
func (s *FileService) Download(_ context.Context, href string, dst io.Writer) error {
	p, err := s.Path(href)
	if err != nil {
		return err
	}
	f, err := os.Open(p)
	if err != nil {
		return downloadFailed(href, err.Error())
	}
	defer f.Close()
	if _, err := io.Copy(dst, f); err != nil {
		return downloadFailed(href, err.Error())
	}
	return nil
}

// LinkOrCopy puts the file at dest as upstream's download does: a hard
// link to the real path when the file systems allow, else a copy.
func (s *FileService) LinkOrCopy(href, dest string) error {
	p, err := s.Path(href)
	if err != nil {
		return err
	}
	if err := os.Remove(dest); err != nil && !os.IsNotExist(err) {
		return downloadFailed(href, err.Error())
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return downloadFailed(href, err.Error())
	}
	if err := HardLinkOrCopy(real, dest); err != nil {
		return downloadFailed(href, err.Error())
	}
	return nil
}

// HardLinkOrCopy makes dest a hard link to src, or a copy of it where the
// file systems do not allow one; dest must not exist yet.
func HardLinkOrCopy(src, dest string) error {
	if err := os.Link(src, dest); err == nil {
		return nil
	}
	return copyFile(src, dest)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return out.Close()
}
