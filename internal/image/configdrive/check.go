package configdrive

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/image"
)

// networkDataPath is the file of the latest metadata version that upstream
// checks and, when it regenerates it, replaces (the 2012-08-10 copy is
// left as submitted, as upstream leaves it).
const networkDataPath = "openstack/latest/network_data.json"

// ErrRegenerationFailed is upstream's ConfigDriveRegenerationFailure: the
// network metadata could not be regenerated, and the submitted config
// drive is kept.
var ErrRegenerationFailed = errors.New("configdrive network metadata could not be regenerated")

// FixOptions are what CheckAndFix needs from the conductor.
type FixOptions struct {
	NodeUUID, InstanceUUID string
	// DisableMTUCheck is [conductor]/disable_metadata_mtu_check: a link
	// without an MTU no longer makes the metadata invalid.
	DisableMTUCheck bool
	// TempDir is [DEFAULT]/tempdir, where the ISO is unpacked and
	// rebuilt; empty is the system's.
	TempDir string
	// Generate is the network interface's network metadata for the
	// instance (upstream generate_instance_network_data).
	Generate func(ctx context.Context) (map[string]any, error)
	Log      *slog.Logger
}

func (o FixOptions) log() *slog.Logger {
	if o.Log != nil {
		return o.Log
	}
	return slog.Default()
}

// IsInvalidNetworkMetadata is upstream is_invalid_network_metadata: the
// metadata is invalid when it is not an object, when it has no links,
// networks or services at all, or (unless disableMTUCheck) when a link
// has no MTU, which harms jumbo-frame and constrained networks.
func IsInvalidNetworkMetadata(nd any, disableMTUCheck bool) bool {
	m, ok := nd.(map[string]any)
	if !ok {
		return true
	}
	if empty(m["links"]) && empty(m["networks"]) && empty(m["services"]) {
		return true
	}
	if !disableMTUCheck {
		links, ok := m["links"].([]any)
		if !ok && !empty(m["links"]) {
			// Upstream iterates whatever links is: its items are no
			// objects, and link.get fails: invalid.
			return true
		}
		for _, l := range links {
			link, ok := l.(map[string]any)
			if !ok {
				// Upstream's link.get fails on a non-object: invalid.
				return true
			}
			if link["mtu"] == nil {
				return true
			}
		}
	}
	return false
}

// empty is Python's falsiness of a missing or empty list (or any other
// empty value upstream's "not" would see).
func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	case string:
		return x == ""
	case bool:
		return !x
	case float64:
		return x == 0
	}
	return false
}

// generateConfigMetadata is upstream generate_config_metadata: generated
// metadata that is itself invalid (no VIF attached, an MTU Neutron did
// not give) is ErrRegenerationFailed, which keeps the submitted drive.
func generateConfigMetadata(ctx context.Context, o FixOptions) (map[string]any, error) {
	md, err := o.Generate(ctx)
	if err != nil {
		return nil, err
	}
	if IsInvalidNetworkMetadata(md, o.DisableMTUCheck) {
		o.log().ErrorContext(ctx, "failed to generate new network metadata for the deployment; no virtual interfaces were generated, possibly missing VIFs", "node", o.NodeUUID)
		return nil, ErrRegenerationFailed
	}
	return md, nil
}

// CheckAndFix is upstream check_and_fix_configdrive: a URL is left alone;
// an object whose network_data is invalid gets the generated metadata in
// its place; an ISO (gzipped and base64-encoded) whose
// openstack/latest/network_data.json is invalid is rebuilt with the
// generated one. When the metadata cannot be regenerated, or the ISO
// cannot be read or rebuilt, the submitted drive is returned as it came;
// only errors reaching Neutron (or undecodable base64) are returned.
func CheckAndFix(ctx context.Context, cd any, o FixOptions) (any, error) {
	var err error
	switch v := cd.(type) {
	case string:
		if strings.HasPrefix(v, "http") {
			return cd, nil
		}
		o.log().DebugContext(ctx, "starting to evaluate the configdrive", "node", o.NodeUUID)
		cd, err = checkAndPatch(ctx, v, o)
	case map[string]any:
		if IsInvalidNetworkMetadata(v["network_data"], o.DisableMTUCheck) {
			var md map[string]any
			if md, err = generateConfigMetadata(ctx, o); err == nil {
				v["network_data"] = md
			}
		}
	}
	if errors.Is(err, ErrRegenerationFailed) {
		o.log().WarnContext(ctx, "Ironic was unable to regenerate the configdrive", "node", o.NodeUUID)
		return cd, nil
	}
	return cd, err
}

// checkAndPatch is upstream check_and_patch_configdrive for the string
// form.
func checkAndPatch(ctx context.Context, cd string, o FixOptions) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(stripSpace(cd))
	if err != nil {
		// Upstream's b64decode raises, which fails the deployment.
		return cd, fmt.Errorf("configdrive of node %s is not base64: %w", o.NodeUUID, err)
	}
	regenFailed := func(err error) (string, error) {
		o.log().ErrorContext(ctx, "failed to regenerate the configuration drive ISO, proceeding with submitted metadata", "node", o.NodeUUID, "error", err)
		return cd, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return regenFailed(err)
	}
	iso, err := io.ReadAll(zr)
	if err != nil {
		return regenFailed(err)
	}
	dir, err := os.MkdirTemp(o.TempDir, "configdrive-check")
	if err != nil {
		return regenFailed(err)
	}
	defer os.RemoveAll(dir)
	isoPath, tree := filepath.Join(dir, "provided.iso"), filepath.Join(dir, "tree")
	if err := os.WriteFile(isoPath, iso, 0o600); err != nil {
		return regenFailed(err)
	}
	// The whole tree is extracted by Rock Ridge names (upstream walks
	// rr_path so dashes are not mangled), to be rebuilt if needed.
	if err := extractISO(ctx, isoPath, tree, o); err != nil {
		if errs.Is(err, errs.ClassInvalidContent) {
			return cd, err
		}
		o.log().ErrorContext(ctx, "failed to process metadata, as the supplied configuration drive ISO lacked the openstack/latest/network_data.json file", "node", o.NodeUUID, "error", err)
		return cd, nil
	}
	ndPath := filepath.Join(tree, filepath.FromSlash(networkDataPath))
	data, err := os.ReadFile(ndPath)
	if err != nil {
		o.log().ErrorContext(ctx, "failed to process metadata, as the supplied configuration drive ISO lacked the openstack/latest/network_data.json file", "node", o.NodeUUID)
		return cd, nil
	}
	var nd any
	if err := json.Unmarshal(data, &nd); err != nil {
		// Upstream lives with unparsable metadata: it is regenerated.
		o.log().DebugContext(ctx, "error while parsing the configuration drive network_data.json", "node", o.NodeUUID, "instance", o.InstanceUUID, "error", err)
	} else if !IsInvalidNetworkMetadata(nd, o.DisableMTUCheck) {
		return cd, nil
	}
	o.log().WarnContext(ctx, "the provided metadata for the deployment appears invalid, and will be regenerated based upon the available metadata", "node", o.NodeUUID)
	md, err := generateConfigMetadata(ctx, o)
	if errors.Is(err, ErrRegenerationFailed) {
		// Logged where it was found; the submitted drive stays.
		return cd, nil
	}
	if err != nil {
		return cd, err
	}
	mdJSON, err := pyJSON(md)
	if err != nil {
		return regenFailed(err)
	}
	o.log().DebugContext(ctx, "patching override configuration drive file", "file", "/"+networkDataPath, "node", o.NodeUUID)
	if err := os.WriteFile(ndPath, mdJSON, 0o644); err != nil {
		return regenFailed(err)
	}
	newISO := filepath.Join(dir, "regenerated.iso")
	if err := image.BuildDataISOFromDir(ctx, newISO, Label, "Ironic", tree); err != nil {
		return regenFailed(err)
	}
	out, err := os.ReadFile(newISO)
	if err != nil {
		return regenFailed(err)
	}
	return Encode(out)
}

// extractISO unpacks the ISO into dir; a tree holding anything but
// folders and files (a link could lead the rewrite outside dir) is
// upstream's InvalidContent of check_iso_path.
func extractISO(ctx context.Context, iso, dir string, o FixOptions) error {
	if err := image.ExtractISO(ctx, iso, dir); err != nil {
		return err
	}
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			o.log().ErrorContext(ctx, "ISO path evaluation identified a transversal attempt", "node", o.NodeUUID, "path", strings.TrimPrefix(p, dir))
			return errs.New(errs.ClassInvalidContent, nil)
		}
		return nil
	})
}

func stripSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' || r == ' ' {
			return -1
		}
		return r
	}, s)
}
