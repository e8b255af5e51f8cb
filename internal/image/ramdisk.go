package image

import (
	"context"
	"fmt"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// ValidateRamdiskInstance is upstream's get_image_instance_info followed
// by validate_image_properties for a ramdisk deployment: instance_info
// names a boot ISO, a kernel and ramdisk pair, or a Glance image whose
// properties name them (or a boot ISO). sources, when set, checks the
// boot ISO reference and reads the Glance image's properties.
func ValidateRamdiskInstance(ctx context.Context, sources *Sources, nodeUUID string, ii map[string]any) error {
	str := func(k string) string { s, _ := ii[k].(string); return s }
	iso, source := str("boot_iso"), str("image_source")
	if iso != "" {
		if source != "" {
			return errs.NewMessage(errs.ClassInvalidParameterValue, "An 'image_source' and 'boot_iso' parameter may not be specified at the same time.")
		}
		if sources != nil {
			if _, err := sources.For(iso); err != nil {
				return errs.NewMessage(errs.ClassInvalidParameterValue, err.Error())
			}
		}
		return nil
	}
	kernel, ramdisk := str("kernel"), str("ramdisk")
	if kernel == "" && ramdisk == "" && source != "" {
		if !IsGlanceImage(source) {
			return errs.NewMessage(errs.ClassMissingParameterValue, fmt.Sprintf("Image %s is missing the following properties: kernel, ramdisk", source))
		}
		if sources == nil {
			return fmt.Errorf("no image service configured to read the properties of %s", source)
		}
		info, err := sources.Show(ctx, source)
		if err != nil {
			return err
		}
		prop := func(k string) string { s, _ := info.Properties[k].(string); return s }
		if prop("boot_iso_id") != "" {
			return nil
		}
		var missing []string
		for _, p := range []string{"kernel_id", "ramdisk_id"} {
			if prop(p) == "" {
				missing = append(missing, p)
			}
		}
		if len(missing) > 0 {
			return errs.NewMessage(errs.ClassMissingParameterValue, fmt.Sprintf("Image %s is missing the following properties: %s", source, strings.Join(missing, ", ")))
		}
		return nil
	}
	var missing []any
	if kernel == "" {
		missing = append(missing, "kernel")
	}
	if ramdisk == "" {
		missing = append(missing, "ramdisk")
	}
	if len(missing) > 0 {
		return errs.NewMessage(errs.ClassMissingParameterValue, fmt.Sprintf("Cannot validate image information for node %s because one or more "+
			"parameters are missing from its instance_info and insufficient information is present to boot from a remote volume. Missing are: %s",
			nodeUUID, pyfmt.Repr(missing)))
	}
	return nil
}
