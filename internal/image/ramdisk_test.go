package image

import (
	"testing"

	"github.com/openkeel/ironic/internal/errs"
)

// What a ramdisk deployment boots from, as upstream validates it: a boot
// ISO alone, a kernel and ramdisk pair, or a Glance image whose
// properties name them or a boot ISO.
func TestValidateRamdiskInstance(t *testing.T) {
	image := map[string]any{"id": imgID, "status": "active", "visibility": "public", "kernel_id": "k"}
	srv := fakeGlance(t, image, nil)
	sources, err := NewSources(testOpts(), glanceFor(srv))
	if err != nil {
		t.Fatal(err)
	}
	const node = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
	check := func(ii map[string]any, class errs.Class, msg string) {
		t.Helper()
		err := ValidateRamdiskInstance(t.Context(), sources, node, ii)
		if class == "" {
			if err != nil {
				t.Errorf("%v: %v", ii, err)
			}
			return
		}
		wantClass(t, err, class, msg)
	}
	check(map[string]any{"boot_iso": "http://127.0.0.1:1/live.iso"}, "", "")
	check(map[string]any{"boot_iso": "ftp://127.0.0.1/live.iso"}, "InvalidParameterValue", "")
	check(map[string]any{"boot_iso": "http://127.0.0.1:1/live.iso", "image_source": imgID}, "InvalidParameterValue",
		"An 'image_source' and 'boot_iso' parameter may not be specified at the same time.")
	check(map[string]any{"kernel": "http://127.0.0.1:1/k", "ramdisk": "http://127.0.0.1:1/r"}, "", "")
	check(map[string]any{"ramdisk": "http://127.0.0.1:1/r"}, "MissingParameterValue", "Cannot validate image information for node "+node+
		" because one or more parameters are missing from its instance_info and insufficient information is present to boot from a remote volume. Missing are: ['kernel']")
	check(map[string]any{}, "MissingParameterValue", "Cannot validate image information for node "+node+
		" because one or more parameters are missing from its instance_info and insufficient information is present to boot from a remote volume. Missing are: ['kernel', 'ramdisk']")
	check(map[string]any{"image_source": "http://127.0.0.1:1/disk.img"}, "MissingParameterValue", "Image http://127.0.0.1:1/disk.img is missing the following properties: kernel, ramdisk")
	check(map[string]any{"image_source": imgID}, "MissingParameterValue", "Image "+imgID+" is missing the following properties: ramdisk_id")
	image["ramdisk_id"] = "r"
	check(map[string]any{"image_source": imgID}, "", "")
	delete(image, "kernel_id")
	image["boot_iso_id"] = "iso"
	check(map[string]any{"image_source": imgID}, "", "")
}
