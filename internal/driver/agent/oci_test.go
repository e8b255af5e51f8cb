package agent

import (
	"bytes"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/testing/ociregistry"
)

// Issue 23 item 7: an oci:// image_source is resolved at the registry
// (Debian's docker-registry on 127.0.0.1) to the artifact of the node's
// cpu_arch: with download source http the agent is sent the blob's URL and
// checksum, with local the conductor caches the blob and serves its copy;
// driver_internal_info/image_source is the chosen manifest either way.
func TestWriteImageFromOCIRegistry(t *testing.T) {
	reg := ociregistry.Start(t)
	const repo = "ironic/disk"
	amd64, arm64 := diskBytes(64, 256<<10), diskBytes(65, 256<<10)
	entry := func(d ociregistry.Descriptor, arch string) ociregistry.Descriptor {
		d.Platform = &ociregistry.Platform{Architecture: arch, OS: "linux"}
		d.Annotations = map[string]string{"disktype": "raw"}
		return d
	}
	a, b := reg.Artifact(repo, "amd64.raw", amd64), reg.Artifact(repo, "arm64.raw", arm64)
	reg.Index(repo, "v1", entry(a, "amd64"), entry(b, "arm64"))
	src := "oci://" + reg.Host + "/" + repo + ":v1"

	for _, ds := range []string{DownloadHTTP, DownloadLocal} {
		e := newImageEnv(t, nil)
		opts := image.DefaultOptions()
		opts.OCIPermitHTTPFallback = true
		oci, err := image.NewOCIService(opts)
		if err != nil {
			t.Fatal(err)
		}
		e.im.Sources.OCI = oci
		e.im.DownloadSource = ds
		task := e.task("1be26c0b-03f2-4d2e-ae87-c02d7f33c1"+map[string]string{DownloadHTTP: "01", DownloadLocal: "02"}[ds], map[string]any{"image_source": src})
		task.Node.Properties["cpu_arch"] = "aarch64"
		info, _ := e.write(t, task)

		blob := ociregistry.Digest(arm64)
		if got, _ := task.Node.InternalInfo().Get(model.DIIImageSource).(string); got != "oci://"+reg.Host+"/"+repo+"@"+b.Digest {
			t.Errorf("%s: driver_internal_info/image_source %q", ds, got)
		}
		if info["checksum"] != strings.TrimPrefix(blob, "sha256:") {
			t.Errorf("%s: checksum %v", ds, info["checksum"])
		}
		url, _ := info["urls"].([]any)[0].(string)
		switch ds {
		case DownloadHTTP:
			if url != "http://"+reg.Host+"/v2/"+repo+"/blobs/"+blob {
				t.Errorf("http: agent told to fetch %s", url)
			}
		case DownloadLocal:
			if !strings.HasPrefix(url, e.httpSrv.URL) || !bytes.Equal(get(t, url), arm64) {
				t.Errorf("local: agent told to fetch %s, not the conductor's copy of the arm64 blob", url)
			}
		}
	}
}
