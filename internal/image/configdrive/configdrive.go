// Package configdrive builds and checks the configuration drive handed to
// an instance: an ISO9660 volume labelled config-2 with the OpenStack
// metadata tree, carried gzipped and base64-encoded as upstream does
// (openstacksdk's configdrive.build, used by ironic's build_configdrive).
package configdrive

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// Label is the volume label cloud-init and Glean look for.
const Label = "config-2"

// versions are the metadata versions written, as openstacksdk does.
var versions = []string{"2012-08-10", "latest"}

// dictKeys are the keys the API accepts in a configdrive object.
var dictKeys = map[string]bool{"meta_data": true, "network_data": true, "user_data": true, "vendor_data": true}

// b64Alphabet includes whitespace, common in wrapped base64.
const b64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\n\r\t "

// Validate checks the configdrive value of a provision request as the API
// does (check_allow_configdrive's format part): null, a JSON object with
// the known keys and types, a URL, or base64 text.
func Validate(cd any) error {
	switch v := cd.(type) {
	case nil:
		return nil
	case string:
		if v == "" || strings.Contains(v, "://") {
			return nil
		}
		for _, r := range v {
			if !strings.ContainsRune(b64Alphabet, r) {
				return errs.ClientSideError("Invalid configdrive format: it is neither a JSON, nor a URL, nor a base64 string", 400, "")
			}
		}
		return nil
	case map[string]any:
		for k, x := range v {
			if !dictKeys[k] {
				return invalid(cd)
			}
			switch k {
			case "user_data":
				switch x.(type) {
				case nil, string, map[string]any, []any:
				default:
					return invalid(cd)
				}
			default:
				if _, ok := x.(map[string]any); !ok {
					return invalid(cd)
				}
			}
		}
		return nil
	}
	return invalid(cd)
}

func invalid(cd any) error {
	return errs.ClientSideError("Invalid configdrive format: "+pyfmt.Repr(cd)+" is not valid under any of the given schemas", 400, "")
}

// Files returns the configdrive tree for a dict configdrive: meta_data
// (uuid and name defaulted from the node), network_data, user_data (JSON
// when an object or list) and vendor_data (vendor_data2.json), under each
// metadata version.
func Files(nodeUUID, nodeName string, cd map[string]any) (map[string]image.FileEntry, error) {
	meta, _ := cd["meta_data"].(map[string]any)
	m := make(map[string]any, len(meta)+2)
	for k, v := range meta {
		m[k] = v
	}
	if _, ok := m["uuid"]; !ok {
		m["uuid"] = nodeUUID
	}
	if _, ok := m["name"]; !ok && nodeName != "" {
		m["name"] = nodeName
	}
	metaJSON, err := pyJSON(m)
	if err != nil {
		return nil, fmt.Errorf("configdrive meta_data: %w", err)
	}
	var userData []byte
	switch u := cd["user_data"].(type) {
	case map[string]any, []any:
		if userData, err = pyJSON(u); err != nil {
			return nil, fmt.Errorf("configdrive user_data: %w", err)
		}
	case string:
		userData = []byte(u)
	}
	var networkJSON, vendorJSON []byte
	if nd, ok := cd["network_data"].(map[string]any); ok && len(nd) > 0 {
		if networkJSON, err = pyJSON(nd); err != nil {
			return nil, fmt.Errorf("configdrive network_data: %w", err)
		}
	}
	if vd, ok := cd["vendor_data"].(map[string]any); ok && len(vd) > 0 {
		if vendorJSON, err = pyJSON(vd); err != nil {
			return nil, fmt.Errorf("configdrive vendor_data: %w", err)
		}
	}
	files := map[string]image.FileEntry{}
	for _, v := range versions {
		dir := "openstack/" + v + "/"
		files[dir+"meta_data.json"] = image.FileEntry{Data: metaJSON}
		if networkJSON != nil {
			files[dir+"network_data.json"] = image.FileEntry{Data: networkJSON}
		}
		if vendorJSON != nil {
			files[dir+"vendor_data2.json"] = image.FileEntry{Data: vendorJSON}
		}
		if len(userData) > 0 {
			files[dir+"user_data"] = image.FileEntry{Data: userData}
		}
	}
	return files, nil
}

// pyJSON is json.dumps' default output (", " and ": " separators,
// non-ASCII escaped) with keys sorted, since a decoded map has no order.
func pyJSON(v any) ([]byte, error) {
	var b strings.Builder
	if err := writePyJSON(&b, v); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

func writePyJSON(b *strings.Builder, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		b.Write(pyfmt.AppendJSONString(nil, x))
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e16 {
			b.WriteString(strconv.FormatFloat(x, 'f', -1, 64))
		} else {
			b.WriteString(pyfmt.Float(x))
		}
	case json.Number:
		b.WriteString(x.String())
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := writePyJSON(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.Write(pyfmt.AppendJSONString(nil, k))
			b.WriteString(": ")
			if err := writePyJSON(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("cannot encode %T as JSON", v)
	}
	return nil
}

// Build makes the ISO for a dict configdrive and returns it gzipped and
// base64-encoded (upstream's build_configdrive).
func Build(ctx context.Context, nodeUUID, nodeName string, cd map[string]any) (string, error) {
	files, err := Files(nodeUUID, nodeName, cd)
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "configdrive")
	if err != nil {
		return "", fmt.Errorf("configdrive: %w", err)
	}
	defer os.RemoveAll(dir)
	iso := filepath.Join(dir, "configdrive.iso")
	if err := image.BuildDataISO(ctx, iso, Label, "Ironic", files); err != nil {
		return "", err
	}
	data, err := os.ReadFile(iso)
	if err != nil {
		return "", fmt.Errorf("configdrive: %w", err)
	}
	return Encode(data)
}

// Encode gzips and base64-encodes an ISO.
func Encode(iso []byte) (string, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(iso); err != nil {
		return "", fmt.Errorf("configdrive gzip: %w", err)
	}
	if err := zw.Close(); err != nil {
		return "", fmt.Errorf("configdrive gzip: %w", err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// Decode turns the string form back into the ISO bytes; limit bounds the
// decompressed size (0: no bound).
func Decode(s string, limit int64) ([]byte, error) {
	clean := strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' || r == ' ' {
			return -1
		}
		return r
	}, s)
	raw, err := base64.StdEncoding.DecodeString(clean)
	if err != nil {
		return nil, errs.NewMessage(errs.ClassInstanceDeployFailure, "Failed to deploy instance: Config drive is not base64 encoded: "+err.Error())
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		// Upstream accepts an ISO that is base64 but not gzipped.
		return raw, nil //nolint:nilerr
	}
	defer zr.Close()
	var r io.Reader = zr
	if limit > 0 {
		r = io.LimitReader(zr, limit+1)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return nil, errs.NewMessage(errs.ClassInstanceDeployFailure, "Failed to deploy instance: Config drive could not be decompressed: "+err.Error())
	}
	if limit > 0 && int64(len(out)) > limit {
		return nil, errs.NewMessage(errs.ClassInstanceDeployFailure, fmt.Sprintf("Failed to deploy instance: Config drive is larger than %d bytes", limit))
	}
	return out, nil
}
