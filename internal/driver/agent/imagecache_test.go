package agent

import (
	"context"
	"os"
	"testing"
)

// Issue 23: DestroyInstanceImages (what [conductor]/
// clear_image_cache_on_deploy_failure asks of a failed deployment) removes
// the node's cached instance image and its directory; the master copy
// stays for the cache's own clean-up (CleanUpImageCaches), as upstream's
// destroy_images.
func TestDestroyInstanceImages(t *testing.T) {
	e := newImageEnv(t, nil)
	o := newOrigin(t)
	disk := diskBytes(7, 64<<10)
	src := o.add("/disk.img", disk)
	e.im.DownloadSource = DownloadLocal
	task := e.task("1be26c0b-03f2-4d2e-ae87-c02d7f33c1aa", map[string]any{"image_source": src, "image_checksum": sha256Hex(disk)})
	e.write(t, task)
	dir := e.im.nodeImageDir(task.Node.UUID)
	if _, err := os.Stat(e.im.nodeImagePath(task.Node.UUID)); err != nil {
		t.Fatalf("no cached instance image after write_image: %v", err)
	}
	e.d.DestroyInstanceImages(context.Background(), task)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("instance image directory left: %v", err)
	}
	if len(masterFiles(t, e.im.MasterPath)) == 0 {
		t.Error("master copy removed with the node's")
	}
	e.d.CleanUpImageCaches(context.Background())
}
