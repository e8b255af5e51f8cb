package image

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/errs"
)

// GlanceAuth returns the token and the image endpoint (e.g.
// "http://glance:9292") to use for a call; internal/keystoneauth's
// session provides them from [glance].
type GlanceAuth func(ctx context.Context) (token, endpoint string, err error)

// GlanceCaller describes who asks, for upstream's image availability
// rules: whether the request carries a user token, and whether the user
// is an admin.
type GlanceCaller func(ctx context.Context) (userToken, admin bool)

// GlanceService reads images through the Glance v2 API.
type GlanceService struct {
	Auth   GlanceAuth
	Caller GlanceCaller
	// Client makes the calls; the session's client renews the token
	// when Glance answers 401.
	Client *http.Client
	Opts   Options
	// ProjectID, when set, is the conductor's project (upstream's
	// get_conductor_project_id: the project of the [glance] token);
	// Opts.ConductorProjectID otherwise.
	ProjectID func(ctx context.Context) (string, error)
}

// glanceAttributes are the top-level image fields; everything else in the
// v2 document is a custom property.
var glanceAttributes = []string{
	"size", "disk_format", "owner", "container_format", "checksum", "id",
	"name", "created_at", "updated_at", "deleted_at", "deleted", "status",
	"min_disk", "min_ram", "tags", "visibility", "protected", "file",
	"schema", "os_hash_algo", "os_hash_value",
}

// Show is upstream's GlanceImageService.show: the image must be active
// and available to the conductor.
func (g *GlanceService) Show(ctx context.Context, href string) (*Info, error) {
	id, err := ParseImageID(href)
	if err != nil {
		return nil, err
	}
	doc, err := g.getImage(ctx, id)
	if err != nil {
		return nil, err
	}
	info := translateFromGlance(doc)
	if info.Status != "active" {
		return nil, errs.New(errs.ClassImageUnacceptable, map[string]any{"image_id": id, "reason": "The image is required to be in an active state."})
	}
	ok, err := g.available(ctx, info)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errs.New(errs.ClassImageNotFound, map[string]any{"image_id": id})
	}
	return info, nil
}

// Download streams GET /v2/images/{id}/file into dst; an image without
// data is an error as upstream.
func (g *GlanceService) Download(ctx context.Context, href string, dst io.Writer) error {
	id, err := ParseImageID(href)
	if err != nil {
		return err
	}
	if slices.Contains(g.Opts.GlanceAllowedDirectURLSchemes, "file") {
		done, err := g.downloadDirect(ctx, id, dst)
		if done || err != nil {
			return err
		}
	}
	resp, err := g.call(ctx, id, "download_image", "/v2/images/"+id+"/file")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	n, err := io.Copy(dst, resp.Body)
	if err != nil {
		return downloadFailed(href, err.Error())
	}
	if n == 0 {
		return downloadFailed(href, "image contains no data.")
	}
	return nil
}

// downloadDirect is the file:// branch of upstream's download with
// [glance]/allowed_direct_url_schemes: an available image whose direct_url
// is a file (Glance's store shared with the conductor) is copied from
// there instead of through the API. It reports false for any other
// location.
func (g *GlanceService) downloadDirect(ctx context.Context, id string, dst io.Writer) (bool, error) {
	doc, err := g.getImage(ctx, id)
	if err != nil {
		return false, err
	}
	ok, err := g.available(ctx, translateFromGlance(doc))
	if err != nil {
		return false, err
	}
	if !ok {
		return false, errs.New(errs.ClassImageNotFound, map[string]any{"image_id": id})
	}
	loc, _ := doc["direct_url"].(string)
	u, err := url.Parse(loc)
	if loc == "" || err != nil || u.Scheme != "file" {
		return false, nil //nolint:nilerr // not a file location: the API serves it
	}
	f, err := os.Open(u.Path)
	if err != nil {
		return false, downloadFailed(id, err.Error())
	}
	defer f.Close()
	if _, err := io.Copy(dst, f); err != nil {
		return false, downloadFailed(id, err.Error())
	}
	return true, nil
}

func (g *GlanceService) getImage(ctx context.Context, id string) (map[string]any, error) {
	resp, err := g.call(ctx, id, "get_image", "/v2/images/"+id)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&doc); err != nil {
		return nil, errs.New(errs.ClassGlanceConnectionFailed, map[string]any{"endpoint": resp.Request.URL.Host, "reason": err.Error()})
	}
	return doc, nil
}

func (g *GlanceService) members(ctx context.Context, id string) ([]string, error) {
	resp, err := g.call(ctx, id, "members", "/v2/images/"+id+"/members")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var doc struct {
		Members []struct {
			MemberID string `json:"member_id"`
			Status   string `json:"status"`
		} `json:"members"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&doc); err != nil {
		return nil, errs.New(errs.ClassGlanceConnectionFailed, map[string]any{"endpoint": resp.Request.URL.Host, "reason": err.Error()})
	}
	out := make([]string, 0, len(doc.Members))
	for _, m := range doc.Members {
		out = append(out, m.MemberID)
	}
	return out, nil
}

// call performs one GET, retrying connection failures [glance]/num_retries
// times, and maps Glance's answers to upstream's errors.
func (g *GlanceService) call(ctx context.Context, id, method, path string) (*http.Response, error) {
	client := g.Client
	if client == nil {
		client = http.DefaultClient
	}
	var last error
	for attempt := 0; attempt <= g.Opts.GlanceNumRetries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("glance %s: %w", method, ctx.Err())
			case <-time.After(g.Opts.GlanceRetryDelay):
			}
		}
		token, endpoint, err := g.Auth(ctx)
		if err != nil {
			return nil, fmt.Errorf("glance credentials: %w", err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(endpoint, "/")+path, nil)
		if err != nil {
			return nil, errs.New(errs.ClassGlanceConnectionFailed, map[string]any{"endpoint": endpoint, "reason": err.Error()})
		}
		if token != "" {
			req.Header.Set("X-Auth-Token", token)
		}
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("glance %s: %w", method, ctx.Err())
			}
			last = errs.New(errs.ClassGlanceConnectionFailed, map[string]any{"endpoint": endpoint, "reason": err.Error()})
			continue
		}
		switch {
		case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusNoContent:
			return resp, nil
		case resp.StatusCode == http.StatusForbidden:
			resp.Body.Close()
			return nil, errs.New(errs.ClassImageNotAuthorized, map[string]any{"image_id": id})
		case resp.StatusCode == http.StatusNotFound:
			resp.Body.Close()
			return nil, errs.New(errs.ClassImageNotFound, map[string]any{"image_id": id})
		case resp.StatusCode == http.StatusBadRequest:
			msg := readErrorBody(resp)
			return nil, errs.NewMessage(errs.ClassInvalid, msg)
		default:
			msg := readErrorBody(resp)
			return nil, downloadFailed(id, fmt.Sprintf("Glance answered %d to %s: %s", resp.StatusCode, method, msg))
		}
	}
	return nil, last
}

func readErrorBody(resp *http.Response) string {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return strings.TrimSpace(string(b))
}

// available is upstream's is_image_available.
func (g *GlanceService) available(ctx context.Context, info *Info) (bool, error) {
	userToken, admin := false, false
	if g.Caller != nil {
		userToken, admin = g.Caller(ctx)
	}
	if g.Opts.AllowImageAccessViaAuthToken && userToken {
		return true, nil
	}
	switch info.Visibility {
	case "public", "community":
		return true, nil
	}
	if admin && g.Opts.IgnoreProjectCheckForAdmin {
		return true, nil
	}
	project := g.Opts.ConductorProjectID
	if g.ProjectID != nil {
		p, err := g.ProjectID(ctx)
		if err != nil {
			return false, err
		}
		project = p
	}
	if info.Visibility == "private" && info.Owner == project {
		return true, nil
	}
	if info.Visibility == "shared" {
		members, err := g.members(ctx, info.ID)
		if err != nil {
			if errs.Is(err, errs.ClassImageNotFound) || errs.Is(err, errs.ClassImageNotAuthorized) {
				return false, nil
			}
			return false, err
		}
		return slices.Contains(members, project), nil
	}
	return false, nil
}

func translateFromGlance(doc map[string]any) *Info {
	str := func(k string) string { s, _ := doc[k].(string); return s }
	info := &Info{
		ID:              str("id"),
		Name:            str("name"),
		Status:          str("status"),
		Visibility:      str("visibility"),
		Owner:           str("owner"),
		Checksum:        str("checksum"),
		OSHashAlgo:      str("os_hash_algo"),
		OSHashValue:     str("os_hash_value"),
		DiskFormat:      str("disk_format"),
		ContainerFormat: str("container_format"),
		Properties:      map[string]any{},
	}
	if n, ok := doc["size"].(float64); ok {
		info.Size = int64(n)
	}
	if tags, ok := doc["tags"].([]any); ok {
		for _, t := range tags {
			if s, ok := t.(string); ok {
				info.Tags = append(info.Tags, s)
			}
		}
	}
	if t, err := time.Parse(time.RFC3339, str("updated_at")); err == nil {
		info.UpdatedAt = t.UTC()
	}
	for k, v := range doc {
		if slices.Contains(glanceAttributes, k) || isEmptyValue(v) {
			continue
		}
		// Nova stores these two as JSON text; upstream decodes them.
		if s, ok := v.(string); ok && (k == "block_device_mapping" || k == "mappings") {
			var decoded any
			if json.Unmarshal([]byte(s), &decoded) == nil {
				v = decoded
			}
		}
		info.Properties[k] = v
	}
	return info
}

// isEmptyValue is Python truthiness: upstream copies only set properties.
func isEmptyValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case float64:
		return x == 0
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}
