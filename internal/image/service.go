package image

import (
	"context"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/errs"
)

// Info is what an image service knows about an image (upstream's show()
// dict). Fields a service does not know stay zero.
type Info struct {
	ID              string
	Name            string
	Size            int64
	UpdatedAt       time.Time
	NoCache         bool
	Status          string
	Visibility      string
	Owner           string
	Checksum        string
	OSHashAlgo      string
	OSHashValue     string
	DiskFormat      string
	ContainerFormat string
	Tags            []string
	// Properties are the image's other attributes (Glance's custom
	// properties such as kernel_id, ramdisk_id, img_type).
	Properties map[string]any
}

// Service is one image source (upstream's BaseImageService).
type Service interface {
	// Show returns the image's metadata; it also validates the reference.
	Show(ctx context.Context, href string) (*Info, error)
	// Download writes the image's content to dst.
	Download(ctx context.Context, href string, dst io.Writer) error
}

// Sources picks the service for an image reference as upstream's
// get_image_service does: http(s)://, file://, glance:// and bare UUIDs
// (Glance), oci:// (a container registry). Glance is nil when no Glance endpoint is configured.
type Sources struct {
	HTTP   *HTTPService
	File   *FileService
	Glance *GlanceService
	OCI    *OCIService
}

// NewSources builds the HTTP and file services from opts; glance may be
// nil.
func NewSources(opts Options, glance *GlanceService) (*Sources, error) {
	h, err := NewHTTPService(opts)
	if err != nil {
		return nil, err
	}
	oci, err := NewOCIService(opts)
	if err != nil {
		return nil, err
	}
	return &Sources{HTTP: h, File: &FileService{AllowedPaths: opts.FileURLAllowedPaths}, Glance: glance, OCI: oci}, nil
}

// For returns the service that handles href.
func (s *Sources) For(href string) (Service, error) {
	scheme := ""
	if u, err := url.Parse(href); err == nil {
		scheme = strings.ToLower(u.Scheme)
	}
	var svc Service
	switch scheme {
	case "":
		if !isUUIDLike(href) {
			return nil, refValidationFailed(href, "Scheme-less image href is not a UUID.")
		}
		svc = s.glance()
	case "http", "https":
		svc = s.HTTP
	case "file":
		svc = s.File
	case "glance":
		svc = s.glance()
	case "oci":
		if s.OCI != nil {
			svc = s.OCI
		}
	default:
		return nil, refValidationFailed(href, "Image download protocol "+scheme+" is not supported.")
	}
	if svc == nil {
		return nil, refValidationFailed(href, "Image download protocol "+scheme+" is not supported.")
	}
	return svc, nil
}

func (s *Sources) glance() Service {
	if s.Glance == nil {
		return nil
	}
	return s.Glance
}

// Show is Show of the service for href.
func (s *Sources) Show(ctx context.Context, href string) (*Info, error) {
	svc, err := s.For(href)
	if err != nil {
		return nil, err
	}
	return svc.Show(ctx, href)
}

// Download is Download of the service for href.
func (s *Sources) Download(ctx context.Context, href string, dst io.Writer) error {
	svc, err := s.For(href)
	if err != nil {
		return err
	}
	return svc.Download(ctx, href, dst)
}

// IsGlanceImage is upstream's is_glance_image.
func IsGlanceImage(href string) bool {
	return strings.HasPrefix(href, "glance://") || isUUIDLike(href)
}

// ParseImageID is upstream's parse_image_id: a UUID, or the last path
// element of a glance:// reference.
func ParseImageID(href string) (string, error) {
	if isUUIDLike(href) {
		return href, nil
	}
	if strings.HasPrefix(href, "glance://") {
		parts := strings.Split(href, "/")
		if id := parts[len(parts)-1]; isUUIDLike(id) {
			return id, nil
		}
	}
	return "", errs.New(errs.ClassInvalidImageRef, map[string]any{"image_href": href})
}

// isUUIDLike is oslo's uuidutils.is_uuid_like: anything Python's
// uuid.UUID accepts (with or without dashes, braces, urn:uuid:).
func isUUIDLike(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil
}

func refValidationFailed(href, reason string) *errs.Error {
	return errs.New(errs.ClassImageRefValidationFailed, map[string]any{"image_href": href, "reason": reason})
}

func downloadFailed(href, reason string) *errs.Error {
	return errs.New(errs.ClassImageDownloadFailed, map[string]any{"image_href": href, "reason": reason})
}
