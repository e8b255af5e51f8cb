package image

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/swift"
)

// SwiftTempURLs signs Swift temporary URLs of Glance images stored in
// Swift, so the agent downloads them without a token (upstream's
// GlanceImageService.swift_temp_url with the [glance] swift_* options).
//
// Upstream can also find the endpoint in the service catalog, the
// account from the [swift] session's project and the key from the
// account's metadata; here they come from configuration only.
type SwiftTempURLs struct {
	EndpointURL                string
	APIVersion                 string
	Account                    string
	AccountPrefix              string
	Container                  string
	MultipleContainersSeed     int
	Key                        string
	Duration                   time.Duration
	ExpectedDownloadStartDelay time.Duration
	CacheEnabled               bool
	// Now is the clock; nil is time.Now.
	Now func() time.Time

	mu    sync.Mutex
	cache map[string]tempURL
}

type tempURL struct {
	url     string
	expires int64
}

// SwiftTempURLsFromConfig reads the [glance] swift_* options.
func SwiftTempURLsFromConfig(c *config.Config) *SwiftTempURLs {
	return &SwiftTempURLs{
		EndpointURL:                c.StringOf(config.GlanceSwiftEndpointURL),
		APIVersion:                 c.StringOf(config.GlanceSwiftAPIVersion),
		Account:                    c.StringOf(config.GlanceSwiftAccount),
		AccountPrefix:              c.StringOf(config.GlanceSwiftAccountPrefix),
		Container:                  c.StringOf(config.GlanceSwiftContainer),
		MultipleContainersSeed:     c.IntOf(config.GlanceSwiftStoreMultipleContainersSeed),
		Key:                        c.StringOf(config.GlanceSwiftTempURLKey),
		Duration:                   time.Duration(c.IntOf(config.GlanceSwiftTempURLDuration)) * time.Second,
		ExpectedDownloadStartDelay: time.Duration(c.IntOf(config.GlanceSwiftTempURLExpectedDownloadStartDelay)) * time.Second,
		CacheEnabled:               c.BoolOf(config.GlanceSwiftTempURLCacheEnabled),
	}
}

func (s *SwiftTempURLs) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// container is upstream's _get_swift_container: with a seed, Glance
// spreads images over containers suffixed with the image id's first
// characters (dashes not counted).
func (s *SwiftTempURLs) container(id string) string {
	if s.MultipleContainersSeed <= 0 {
		return s.Container
	}
	id = strings.ToLower(id)
	n := min(s.MultipleContainersSeed, len(id))
	n = min(n+strings.Count(id[:n], "-"), len(id))
	return s.Container + "_" + id[:n]
}

// TempURL answers a signed GET URL for the Glance image info describes.
func (s *SwiftTempURLs) TempURL(info *Info) (string, error) {
	if s.Duration < s.ExpectedDownloadStartDelay {
		return "", errs.InvalidParameterValue(`"swift_temp_url_duration" must be greater than or equal to "[glance]swift_temp_url_expected_download_start_delay" option, otherwise the Swift temporary URL may expire before the download starts.`)
	}
	if s.MultipleContainersSeed < 0 || s.MultipleContainersSeed > 32 {
		return "", errs.InvalidParameterValue("An integer value between 0 and 32 is required for swift_store_multiple_containers_seed.")
	}
	if info == nil || !isUUIDLike(info.ID) {
		id := ""
		if info != nil {
			id = info.ID
		}
		return "", errs.NewMessage(errs.ClassImageUnacceptable, "The given image info does not have a valid image id: "+id)
	}
	endpoint := s.EndpointURL
	if endpoint == "" {
		return "", errs.MissingParameterValue(`Swift temporary URLs require a Swift endpoint URL, but it was not found in the service catalog. You must provide "swift_endpoint_url" as a config option.`)
	}
	prefix := s.AccountPrefix
	if prefix != "" && !strings.HasSuffix(prefix, "_") {
		prefix += "_"
	}
	endpoint = regexp.MustCompile(`/v1/`+regexp.QuoteMeta(prefix)+`[^/]+/?$`).ReplaceAllString(endpoint, "")
	if s.Account == "" {
		return "", errs.MissingParameterValue(`Swift temporary URLs require a Swift account. You must provide "swift_account" as a config option.`)
	}
	if s.Key == "" {
		return "", errs.MissingParameterValue(`Swift temporary URLs require a shared secret to be created. You must provide "swift_temp_url_key" as a config option or pre-generate the key on the project used to access Swift.`)
	}
	if s.CacheEnabled {
		s.mu.Lock()
		defer s.mu.Unlock()
		limit := s.now().Unix() + int64(s.ExpectedDownloadStartDelay/time.Second)
		for id, u := range s.cache {
			if u.expires < limit {
				delete(s.cache, id)
			}
		}
		if u, ok := s.cache[info.ID]; ok {
			return u.url, nil
		}
	}
	version := s.APIVersion
	if version == "" {
		version = "v1"
	}
	path := fmt.Sprintf("/%s/%s/%s/%s", version, s.Account, s.container(info.ID), info.ID)
	expires := s.now().Unix() + int64(s.Duration/time.Second)
	u := endpoint + swift.SignTempURL(s.Key, "GET", path, expires)
	if s.CacheEnabled {
		if s.cache == nil {
			s.cache = map[string]tempURL{}
		}
		s.cache[info.ID] = tempURL{url: u, expires: expires}
	}
	return u, nil
}
