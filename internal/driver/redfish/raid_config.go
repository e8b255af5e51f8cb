package redfish

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/stmcginnis/gofish/common"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
)

// logicalDisk is one logical disk of target_raid_config on its way to a
// Volume request.
type logicalDisk struct {
	raw         map[string]any
	level       string
	sizeBytes   int64
	max         bool
	physical    []string
	hasPhysical bool
	share       bool
	isRoot      bool
	controller  string
	diskType    string
	ifaceType   string
	numDisks    int
}

func (ld *logicalDisk) clone() *logicalDisk {
	c := *ld
	c.physical = slices.Clone(ld.physical)
	return &c
}

// parseLogicalDisks is upstream convert_drive_units over the node's
// target_raid_config.
func parseLogicalDisks(n *model.Node) ([]*logicalDisk, error) {
	list, _ := n.TargetRAIDConfig["logical_disks"].([]any)
	if len(list) == 0 {
		return nil, driver.MissingParameterValue("node %s has no target_raid_config logical disks", n.UUID)
	}
	out := make([]*logicalDisk, 0, len(list))
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, driver.InvalidParameterValue("logical disk %v is not a dictionary", item)
		}
		ld := &logicalDisk{raw: m, level: fmt.Sprint(m["raid_level"])}
		ld.isRoot, _ = m["is_root_volume"].(bool)
		ld.share, _ = m["share_physical_disks"].(bool)
		ld.controller, _ = m["controller"].(string)
		ld.diskType, _ = m["disk_type"].(string)
		ld.ifaceType, _ = m["interface_type"].(string)
		if v, ok := m["number_of_physical_disks"].(float64); ok {
			ld.numDisks = int(v)
		}
		if pd, ok := m["physical_disks"].([]any); ok {
			ld.hasPhysical = true
			for _, d := range pd {
				ld.physical = append(ld.physical, fmt.Sprint(d))
			}
		}
		switch size := m["size_gb"].(type) {
		case string:
			if size != "MAX" {
				return nil, driver.InvalidParameterValue("size_gb %q of logical disk is not a number or 'MAX'", size)
			}
			if !ld.hasPhysical {
				return nil, driver.InvalidParameterValue("create_configuration called with invalid "+
					"target_raid_configuration for node %s. 'physical_disks' is missing from logical_disk while "+
					"'size_gb'='MAX' was requested: %s", n.UUID, pyDict(m))
			}
			ld.max = true
		case float64:
			ld.sizeBytes = int64(size) * gib
		default:
			return nil, driver.InvalidParameterValue("size_gb %v of logical disk is not a number or 'MAX'", m["size_gb"])
		}
		out = append(out, ld)
	}
	return out, nil
}

// pyDict renders a logical disk as Python's repr of a dict, as upstream
// messages quote it.
func pyDict(m map[string]any) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := m[k]
		s := pyRepr(v)
		if list, ok := v.([]any); ok {
			items := make([]string, 0, len(list))
			for _, x := range list {
				items = append(items, pyRepr(x))
			}
			s = "[" + strings.Join(items, ", ") + "]"
		}
		parts = append(parts, pyRepr(k)+": "+s)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// physDisk is a Drive of a RAID controller.
type physDisk struct {
	id, path, storage   string
	mediaType, protocol string
	capacity            int64
}

type storageDoc struct {
	ODataID string `json:"@odata.id"`
	ID      string `json:"Id"`
	Drives  []common.Link
	Volumes struct {
		ODataID string `json:"@odata.id"`
	}
	StorageControllers []struct{ SupportedRAIDTypes []string }
}

type volumeDoc struct {
	ODataID       string `json:"@odata.id"`
	ID            string `json:"Id"`
	Name          string
	RAIDType      string
	VolumeType    string
	CapacityBytes int64
}

func storageDocs(cl *client, sys *system) ([]*storageDoc, error) {
	path := sys.rawLink("Storage")
	if path == "" {
		return nil, fmt.Errorf("the system %s has no Storage", sys.ODataID)
	}
	coll, err := common.GetCollection(cl, path)
	if err != nil {
		return nil, err
	}
	out := make([]*storageDoc, 0, len(coll.ItemLinks))
	for _, p := range coll.ItemLinks {
		var st storageDoc
		if err := cl.getJSON(p, &st); err != nil {
			return nil, err
		}
		out = append(out, &st)
	}
	return out, nil
}

func volumeDocs(cl *client, st *storageDoc) ([]*volumeDoc, error) {
	if st.Volumes.ODataID == "" {
		return nil, nil
	}
	coll, err := common.GetCollection(cl, st.Volumes.ODataID)
	if err != nil {
		return nil, err
	}
	out := make([]*volumeDoc, 0, len(coll.ItemLinks))
	for _, p := range coll.ItemLinks {
		var v volumeDoc
		if err := cl.getJSON(p, &v); err != nil {
			return nil, err
		}
		out = append(out, &v)
	}
	return out, nil
}

// physicalDisks is upstream get_physical_disks: the drives of every
// Storage whose controller supports RAID.
func physicalDisks(cl *client, sys *system) ([]*physDisk, map[string]*storageDoc, error) {
	docs, err := storageDocs(cl, sys)
	if err != nil {
		return nil, nil, err
	}
	var disks []*physDisk
	byID := map[string]*storageDoc{}
	for _, st := range docs {
		if len(st.StorageControllers) > 0 && len(st.StorageControllers[0].SupportedRAIDTypes) == 0 {
			continue
		}
		byID[st.ID] = st
		for _, l := range st.Drives {
			var d struct {
				ID            string `json:"Id"`
				CapacityBytes int64
				MediaType     string
				Protocol      string
			}
			if err := cl.getJSON(l.String(), &d); err != nil {
				return nil, nil, err
			}
			disks = append(disks, &physDisk{id: d.ID, path: l.String(), storage: st.ID,
				mediaType: d.MediaType, protocol: d.Protocol, capacity: d.CapacityBytes})
		}
	}
	return disks, byID, nil
}

const (
	stripeKiB = 64 * 1024
	kib       = 1024
)

// freeSpace maps a drive to the bytes not yet given to volumes.
type freeSpace map[*physDisk]int64

func maxVolumeBytes(level string, disks []*physDisk, free freeSpace, spans int) (int64, error) {
	if len(disks) == 0 {
		return 0, redfishError("no physical disks of the node match the logical disk")
	}
	smallest := free[disks[0]]
	for _, d := range disks[1:] {
		smallest = min(smallest, free[d])
	}
	stripes := (smallest / kib) / stripeKiB
	info, err := spanLevel(level, spans)
	if err != nil {
		return 0, err
	}
	overhead := info.overhead * spans
	if len(disks) <= overhead {
		return 0, redfishError(fmt.Sprintf("The number of physical drives (%d) is too few for the required number "+
			"of overhead drives (%d)", len(disks), overhead))
	}
	return stripes * stripeKiB * int64(len(disks)-overhead) * kib, nil
}

func usagePerDisk(ld *logicalDisk, disks []*physDisk, spans int) (int64, error) {
	info, err := spanLevel(ld.level, spans)
	if err != nil {
		return 0, err
	}
	data := len(disks) - info.overhead*spans
	stripesPerVolume := math.Ceil(float64(ld.sizeBytes/kib) / stripeKiB)
	stripesPerDisk := math.Ceil(stripesPerVolume / float64(data))
	return int64(stripesPerDisk) * stripeKiB * kib, nil
}

// volumeProps is upstream _calculate_volume_props: size (MAX resolved),
// space check and accounting, controller.
func volumeProps(ld *logicalDisk, all []*physDisk, free freeSpace) error {
	var selected []*physDisk
	for _, d := range all {
		if slices.Contains(ld.physical, d.id) {
			selected = append(selected, d)
		}
	}
	spans, err := calculateSpans(ld.level, len(selected))
	if err != nil {
		return err
	}
	if spans == 0 || len(selected)%spans != 0 {
		return redfishError(fmt.Sprintf("For RAID level %s, the number of physical disks provided (%d) must be a "+
			"multiple of the spans count (%d)", ld.level, len(selected), spans))
	}
	maxBytes, err := maxVolumeBytes(ld.level, selected, free, spans)
	if err != nil {
		return err
	}
	if ld.max {
		if maxBytes == 0 {
			return redfishError("size set to 'MAX' but could not allocate physical disk space")
		}
		ld.sizeBytes, ld.max = maxBytes, false
	} else if maxBytes < ld.sizeBytes {
		return redfishError(fmt.Sprintf("The physical disk space (%d bytes) is not enough for the size of the "+
			"logical disk (%d bytes)", maxBytes, ld.sizeBytes))
	}
	usage, err := usagePerDisk(ld, selected, spans)
	if err != nil {
		return err
	}
	for _, d := range selected {
		if free[d] < usage {
			return redfishError(fmt.Sprintf("The free space of a disk (%d bytes) is not enough for the per-disk "+
				"size of the logical disk (%d bytes)", free[d], usage))
		}
		free[d] -= usage
	}
	if ld.controller == "" {
		ld.controller = selected[0].storage
	}
	return nil
}

type diskKind struct {
	media, protocol string
	capacity        int64
}

type diskGroup struct {
	kind  diskKind
	disks []*physDisk
}

var protocolNames = map[string]string{"SAS": "sas", "SATA": "sata"}

// assignDisks is upstream _assign_disks_to_volume: a depth-first search
// for drives of one kind for each logical disk in turn. The resolved
// volumes come back with the last logical disk first, as upstream's
// queue leaves them.
func assignDisks(queue []*logicalDisk, groups []diskGroup, free freeSpace) ([]*logicalDisk, freeSpace, bool, error) {
	ld, rest := queue[0], queue[1:]
	for _, g := range groups {
		if ld.diskType != "" && !strings.EqualFold(ld.diskType, g.kind.media) {
			continue
		}
		if ld.ifaceType != "" && !strings.EqualFold(ld.ifaceType, protocolNames[g.kind.protocol]) {
			continue
		}
		var disks []*physDisk
		for _, d := range g.disks {
			if free[d] > 0 && (ld.share || d.capacity == free[d]) {
				disks = append(disks, d)
			}
		}
		slices.SortStableFunc(disks, func(a, b *physDisk) int { return int(free[a] - free[b]) })
		maxSpans, err := calculateSpans(ld.level, len(disks))
		if err != nil {
			return nil, nil, false, err
		}
		minInfo, err := spanLevel(ld.level, min(2, maxSpans))
		if err != nil {
			return nil, nil, false, err
		}
		maxInfo, err := spanLevel(ld.level, maxSpans)
		if err != nil {
			return nil, nil, false, err
		}
		minSpans := min(2, maxSpans)
		if !raidLevels[ld.level].spanned {
			minSpans = 1
		}
		for count := minInfo.minDisks * minSpans; count <= min(maxInfo.maxDisks*maxSpans, len(disks)); count++ {
			if ld.numDisks != 0 && ld.numDisks != count {
				continue
			}
			if raidLevels[ld.level].spanned && count%2 != 0 {
				continue
			}
			cand := ld.clone()
			candFree := maps.Clone(free)
			cand.physical = nil
			for _, d := range disks[:count] {
				cand.physical = append(cand.physical, d.id)
			}
			if volumeProps(cand, disks[:count], candFree) != nil {
				continue
			}
			if len(rest) == 0 {
				return []*logicalDisk{cand}, candFree, true, nil
			}
			resolved, after, ok, err := assignDisks(rest, groups, candFree)
			if err != nil || !ok {
				continue
			}
			return append(resolved, cand), after, true, nil
		}
	}
	return nil, free, false, nil
}

// findConfiguration is upstream _find_configuration: volumes with named
// drives and a size first, then volumes without drives by search, then
// volumes with named drives and size MAX.
func findConfiguration(lds []*logicalDisk, disks []*physDisk) ([]*logicalDisk, error) {
	reserved := map[*physDisk]bool{}
	for _, ld := range lds {
		if ld.hasPhysical && ld.max && ld.share {
			for _, d := range disks {
				if slices.Contains(ld.physical, d.id) {
					reserved[d] = true
				}
			}
		}
	}
	free := freeSpace{}
	var groups, reservedGroups []diskGroup
	index := map[diskKind]int{}
	for _, d := range disks {
		free[d] = d.capacity
		k := diskKind{d.mediaType, d.protocol, d.capacity}
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, diskGroup{kind: k})
			reservedGroups = append(reservedGroups, diskGroup{kind: k})
		}
		if reserved[d] {
			reservedGroups[i].disks = append(reservedGroups[i].disks, d)
		} else {
			groups[i].disks = append(groups[i].disks, d)
		}
	}
	for _, ld := range lds {
		if ld.hasPhysical && !ld.share {
			for i := range groups {
				groups[i].disks = slices.DeleteFunc(groups[i].disks, func(d *physDisk) bool {
					return slices.Contains(ld.physical, d.id)
				})
			}
		}
	}
	var out []*logicalDisk
	for _, ld := range lds {
		if ld.hasPhysical && !ld.max {
			if err := volumeProps(ld, disks, free); err != nil {
				return nil, err
			}
			out = append(out, ld)
		}
	}
	var without []*logicalDisk
	for _, ld := range lds {
		if !ld.hasPhysical {
			without = append(without, ld)
		}
	}
	if len(without) > 0 {
		resolved, after, ok, err := assignDisks(without, groups, free)
		if err != nil {
			return nil, err
		}
		if !ok {
			for i := range groups {
				groups[i].disks = append(groups[i].disks, reservedGroups[i].disks...)
			}
			if resolved, after, ok, err = assignDisks(without, groups, free); err != nil {
				return nil, err
			}
			if !ok {
				return nil, redfishError("failed to find matching physical disks for all logical disks")
			}
		}
		free = after
		out = append(out, resolved...)
	}
	for _, ld := range lds {
		if ld.hasPhysical && ld.max {
			if err := volumeProps(ld, disks, free); err != nil {
				return nil, err
			}
			out = append(out, ld)
		}
	}
	return out, nil
}
