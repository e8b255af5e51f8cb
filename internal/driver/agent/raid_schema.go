package agent

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/pyfmt"
)

// The RAID configuration schema is upstream's raid_config_schema.json
// (draft 4). It is checked by hand rather than by a schema library so
// that the first error is worded as Python's jsonschema words it (the
// text reaches the user after "RAID config validation error: "), and
// picked as its best_match does: the error highest up in the document.

var (
	raidLevels     = []string{"JBOD", "0", "1", "2", "5", "6", "1+0", "5+0", "6+0"}
	diskTypes      = []string{"hdd", "ssd"}
	interfaceTypes = []string{"sata", "scsi", "sas"}
	// logicalDiskProps is the schema's property order, which is the order
	// jsonschema reports their errors in.
	logicalDiskProps = []string{"raid_level", "size_gb", "volume_name", "is_root_volume", "share_physical_disks",
		"disk_type", "interface_type", "number_of_physical_disks", "controller", "physical_disks"}
)

func validateRAIDSchema(cfg map[string]any) error {
	if cfg == nil {
		return errors.New("None is not of type 'object'")
	}
	if _, ok := cfg["logical_disks"]; !ok {
		return errors.New("'logical_disks' is a required property")
	}
	if err := noExtraProps(cfg, []string{"logical_disks"}); err != nil {
		return err
	}
	disks, ok := cfg["logical_disks"].([]any)
	if !ok {
		return typeError(cfg["logical_disks"], "array")
	}
	if len(disks) == 0 {
		return errors.New("[] is too short")
	}
	// Errors on a logical disk as a whole come before those on one of
	// its properties, which lie deeper.
	for _, d := range disks {
		ld, ok := d.(map[string]any)
		if !ok {
			return typeError(d, "object")
		}
		for _, k := range []string{"raid_level", "size_gb"} {
			if _, ok := ld[k]; !ok {
				return fmt.Errorf("'%s' is a required property", k)
			}
		}
		if err := noExtraProps(ld, logicalDiskProps); err != nil {
			return err
		}
		if _, ok := ld["physical_disks"]; ok {
			if _, ok := ld["controller"]; !ok {
				return errors.New("'controller' is a dependency of 'physical_disks'")
			}
		}
	}
	for _, d := range disks {
		ld := d.(map[string]any)
		for _, k := range logicalDiskProps {
			v, ok := ld[k]
			if !ok {
				continue
			}
			if err := checkLogicalDiskProp(k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkLogicalDiskProp(name string, v any) error {
	switch name {
	case "raid_level":
		return enumString(v, raidLevels)
	case "disk_type":
		return enumString(v, diskTypes)
	case "interface_type":
		return enumString(v, interfaceTypes)
	case "size_gb":
		if n, ok := jsonInt(v); ok && n >= 0 {
			return nil
		}
		if v == "MAX" {
			return nil
		}
		return fmt.Errorf("%s is not valid under any of the given schemas", pyfmt.ReprJSON(v))
	case "volume_name", "controller":
		if _, ok := v.(string); !ok {
			return typeError(v, "string")
		}
	case "is_root_volume", "share_physical_disks":
		if _, ok := v.(bool); !ok {
			return typeError(v, "boolean")
		}
	case "number_of_physical_disks":
		n, ok := jsonInt(v)
		if !ok {
			return typeError(v, "integer")
		}
		if n <= 0 {
			return fmt.Errorf("%s is less than or equal to the minimum of 0", pyfmt.ReprJSON(v))
		}
	case "physical_disks":
		if list, ok := v.([]any); ok && (allOf(list, isString) || (len(list) >= 2 && allOf(list, isObject))) {
			return nil
		}
		return fmt.Errorf("%s is not valid under any of the given schemas", pyfmt.ReprJSON(v))
	}
	return nil
}

func isString(v any) bool { _, ok := v.(string); return ok }
func isObject(v any) bool { _, ok := v.(map[string]any); return ok }

func allOf(list []any, f func(any) bool) bool {
	for _, v := range list {
		if !f(v) {
			return false
		}
	}
	return true
}

// jsonInt is the draft 4 integer: a whole number that is not a boolean.
func jsonInt(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return int64(x), true
		}
	case int:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

func enumString(v any, allowed []string) error {
	if s, ok := v.(string); ok && slices.Contains(allowed, s) {
		return nil
	}
	quoted := make([]string, len(allowed))
	for i, a := range allowed {
		quoted[i] = pyfmt.Quote(a)
	}
	return fmt.Errorf("%s is not one of [%s]", pyfmt.ReprJSON(v), strings.Join(quoted, ", "))
}

func typeError(v any, typ string) error {
	return fmt.Errorf("%s is not of type '%s'", pyfmt.ReprJSON(v), typ)
}

// noExtraProps is additionalProperties false.
func noExtraProps(m map[string]any, allowed []string) error {
	var extra []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	slices.Sort(extra)
	quoted := make([]string, len(extra))
	for i, k := range extra {
		quoted[i] = pyfmt.Quote(k)
	}
	verb := "was"
	if len(extra) > 1 {
		verb = "were"
	}
	return fmt.Errorf("Additional properties are not allowed (%s %s unexpected)", strings.Join(quoted, ", "), verb)
}
