package anaconda

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/image/configdrive"
	"github.com/openkeel/ironic/internal/model"
)

// configDriveSeed is where cloud-init's NoCloud/ConfigDrive seed is
// read from on the installed system (upstream's config_drive_path).
const configDriveSeed = "/var/lib/cloud/seed/config_drive"

// maxConfigDrive bounds a decompressed configuration drive; the agent's
// partition for it is 64 MiB.
const maxConfigDrive = 64 << 20

// ConfigDriveSections is upstream prepare_config_drive: every file of the
// node's configuration drive (instance_info configdrive: a gzipped,
// base64-encoded ISO, or a URL to one) as a kickstart %post section that
// writes it under the seed directory, in path order. No drive, no
// sections.
//
// A drive given as a dict (meta_data, user_data…) is kept as it is in
// instance_info here, where upstream builds its ISO at once; its files
// are the ones that ISO would hold.
func ConfigDriveSections(ctx context.Context, client *http.Client, n *model.Node) (string, error) {
	files, err := configDriveFiles(ctx, client, n)
	if err != nil || len(files) == 0 {
		return "", err
	}
	targets := make([]string, 0, len(files))
	for p := range files {
		targets = append(targets, p)
	}
	sort.Strings(targets)
	var b strings.Builder
	for _, p := range targets {
		writeFileSection(&b, path.Join(configDriveSeed, p), files[p])
	}
	return b.String(), nil
}

func configDriveFiles(ctx context.Context, client *http.Client, n *model.Node) (map[string][]byte, error) {
	switch cd := n.InstanceInfo["configdrive"].(type) {
	case map[string]any:
		name := ""
		if n.Name != nil {
			name = *n.Name
		}
		entries, err := configdrive.Files(n.UUID, name, cd)
		if err != nil {
			return nil, err
		}
		files := make(map[string][]byte, len(entries))
		for p, e := range entries {
			data := e.Data
			if e.Source != "" {
				if data, err = os.ReadFile(e.Source); err != nil {
					return nil, fmt.Errorf("config drive file %s: %w", p, err)
				}
			}
			files[strings.TrimPrefix(p, "/")] = data
		}
		return files, nil
	case string:
		if cd == "" {
			return nil, nil
		}
		s := cd
		var err error
		if strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
			if s, err = fetchConfigDrive(ctx, client, s); err != nil {
				return nil, err
			}
		}
		iso, err := configdrive.Decode(s, maxConfigDrive)
		if err != nil {
			return nil, err
		}
		files, err := isoFiles(ctx, iso)
		if err != nil {
			return nil, errs.NewMessage(errs.ClassInstanceDeployFailure, "Error reading the config drive iso: "+err.Error())
		}
		return files, nil
	}
	return nil, nil
}

// writeFileSection is upstream _write_config_drive_content. Upstream
// formats the Python bytes of the encoded content, so its scripts decode
// "b'…'"; ours carry the plain base64 text.
func writeFileSection(b *strings.Builder, target string, content []byte) {
	fmt.Fprintf(b, "\n%%post\nDIRPATH=`/usr/bin/dirname %s`\n/bin/mkdir -p $DIRPATH\n", target)
	fmt.Fprintf(b, "CONTENT='%s'\necho $CONTENT | /usr/bin/base64 --decode > %s\n", base64.StdEncoding.EncodeToString(content), target)
	fmt.Fprintf(b, "/bin/chmod 600 %s\n%%end\n\n", target)
}

func fetchConfigDrive(ctx context.Context, client *http.Client, url string) (string, error) {
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err == nil && resp.StatusCode >= 400 {
		resp.Body.Close()
		err = fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if err != nil {
		return "", errs.NewMessage(errs.ClassInstanceDeployFailure, fmt.Sprintf("Can't download the configdrive content from '%s'. Reason: %s", url, err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 2*maxConfigDrive))
	if err != nil {
		return "", errs.NewMessage(errs.ClassInstanceDeployFailure, fmt.Sprintf("Can't download the configdrive content from '%s'. Reason: %s", url, err))
	}
	return string(body), nil
}

// isoFiles extracts the ISO (with Rock Ridge names, as upstream's pycdlib
// reads them) and answers its files by path, relative to its root.
func isoFiles(ctx context.Context, iso []byte) (map[string][]byte, error) {
	dir, err := os.MkdirTemp("", "ks-configdrive")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "cd.iso")
	if err := os.WriteFile(src, iso, 0o600); err != nil {
		return nil, err
	}
	root := filepath.Join(dir, "root")
	out, err := exec.CommandContext(ctx, "xorriso", "-osirrox", "on", "-indev", src, "-extract", "/", root).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("xorriso: %w: %s", err, strings.TrimSpace(string(out)))
	}
	files := map[string][]byte{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = data
		return nil
	})
	return files, err
}
