package redfishbmc

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// RAIDDrive is one physical drive behind the RAID controller.
type RAIDDrive struct {
	ID            string
	CapacityBytes int64
	MediaType     string // HDD or SSD
	Protocol      string // SAS, SATA, NVMe
}

// RAIDVolume is one volume of the RAID controller, as tests read it.
type RAIDVolume struct {
	ID            string
	RAIDType      string
	VolumeType    string
	CapacityBytes int64
	Drives        []string
}

// raidStorage is a Storage resource whose Volumes collection takes POST
// (create) and whose volumes take DELETE, as a RAID controller's does.
type raidStorage struct {
	drives  []RAIDDrive
	volumes []RAIDVolume
	nextID  int
}

// raidLevels are the RAID types the controller supports with the fewest
// drives each needs and how many drives' worth of capacity goes to
// redundancy.
var raidLevels = map[string]struct{ minDrives, overhead int }{
	"RAID0": {1, 0}, "RAID1": {2, 1}, "RAID5": {3, 1}, "RAID6": {4, 2}, "RAID10": {4, 0},
}

// RAIDController gives the system a RAID-capable Storage controller with
// these drives and no volumes. It replaces the read-only Storage resource
// of StorageDrive and StorageVolume.
func RAIDController(drives ...RAIDDrive) SystemOption {
	return func(s *System) {
		s.hw.raid = &raidStorage{drives: slices.Clone(drives), nextID: 1}
		for _, d := range drives {
			s.hw.drives = append(s.hw.drives, d.CapacityBytes)
		}
	}
}

// RAIDVolumesOf returns the volumes of a system's RAID controller.
func (b *BMC) RAIDVolumesOf(id string) []RAIDVolume {
	b.mu.Lock()
	defer b.mu.Unlock()
	rs := b.mustSystem(id).hw.raid
	if rs == nil {
		return nil
	}
	out := make([]RAIDVolume, 0, len(rs.volumes))
	for _, v := range rs.volumes {
		v.Drives = slices.Clone(v.Drives)
		out = append(out, v)
	}
	return out
}

// raidRoute answers the Storage resources of a RAID controller; ok is
// false for paths it does not know.
func (b *BMC) raidRoute(r *http.Request, s *System, sub, path string, body []byte) (response, bool) {
	rs := s.hw.raid
	base := SystemPath(s.ID) + "/Storage/1"
	drivePath := func(id string) string { return base + "/Drives/" + id }
	switch {
	case sub == "Storage/1":
		return b.getOnly(r, func() any {
			drives := make([]string, 0, len(rs.drives))
			for _, d := range rs.drives {
				drives = append(drives, drivePath(d.ID))
			}
			types := make([]string, 0, len(raidLevels))
			for k := range raidLevels {
				types = append(types, k)
			}
			slices.Sort(types)
			return map[string]any{"@odata.id": path, "@odata.type": "#Storage.v1_8_0.Storage", "Id": "1",
				"Name": "RAID Controller", "Drives": linkList(drives), "Volumes": link(base + "/Volumes"),
				"StorageControllers": []any{map[string]any{"MemberId": "0", "Name": "RAID Controller",
					"SupportedRAIDTypes": types}}}
		}), true
	case strings.HasPrefix(sub, "Storage/1/Drives/"):
		id := strings.TrimPrefix(sub, "Storage/1/Drives/")
		i := slices.IndexFunc(rs.drives, func(d RAIDDrive) bool { return d.ID == id })
		if i < 0 {
			return response{}, false
		}
		d := rs.drives[i]
		return b.getOnly(r, func() any {
			return map[string]any{"@odata.id": path, "@odata.type": "#Drive.v1_9_0.Drive", "Id": d.ID,
				"Name": "Drive " + d.ID, "CapacityBytes": d.CapacityBytes, "MediaType": d.MediaType,
				"Protocol": d.Protocol, "Status": map[string]any{"State": "Enabled", "Health": "OK"}}
		}), true
	case sub == "Storage/1/Volumes":
		switch r.Method {
		case http.MethodGet:
			members := make([]string, 0, len(rs.volumes))
			for _, v := range rs.volumes {
				members = append(members, base+"/Volumes/"+v.ID)
			}
			return response{status: http.StatusOK, body: collection(path, "VolumeCollection", members...)}, true
		case http.MethodPost:
			v, resp, ok := rs.check(base, body)
			if !ok {
				return resp, true
			}
			if b.asyncRAID {
				return b.newTask("Create volume", func() { rs.add(v) }), true
			}
			v = rs.add(v)
			loc := base + "/Volumes/" + v.ID
			return response{status: http.StatusCreated, headers: map[string]string{"Location": loc},
				body: map[string]any{"@odata.id": loc, "Id": v.ID, "RAIDType": v.RAIDType, "CapacityBytes": v.CapacityBytes}}, true
		}
		return methodNotAllowed(), true
	case strings.HasPrefix(sub, "Storage/1/Volumes/"):
		id := strings.TrimPrefix(sub, "Storage/1/Volumes/")
		i := slices.IndexFunc(rs.volumes, func(v RAIDVolume) bool { return v.ID == id })
		if i < 0 {
			return response{}, false
		}
		v := rs.volumes[i]
		switch r.Method {
		case http.MethodGet:
			drives := make([]string, 0, len(v.Drives))
			for _, d := range v.Drives {
				drives = append(drives, drivePath(d))
			}
			return response{status: http.StatusOK, body: map[string]any{"@odata.id": path,
				"@odata.type": "#Volume.v1_5_0.Volume", "Id": v.ID, "Name": "Volume " + v.ID,
				"CapacityBytes": v.CapacityBytes, "RAIDType": v.RAIDType, "VolumeType": v.VolumeType,
				"Links":  map[string]any{"Drives": linkList(drives)},
				"Status": map[string]any{"State": "Enabled", "Health": "OK"}}}, true
		case http.MethodDelete:
			if b.asyncRAID {
				return b.newTask("Delete volume "+id, func() { rs.remove(id) }), true
			}
			rs.remove(id)
			return response{status: http.StatusNoContent}, true
		}
		return methodNotAllowed(), true
	}
	return response{}, false
}

// remove deletes a volume (gone already is fine: two tasks may race).
func (rs *raidStorage) remove(id string) {
	rs.volumes = slices.DeleteFunc(rs.volumes, func(v RAIDVolume) bool { return v.ID == id })
}

// add gives the volume its identity and adds it.
func (rs *raidStorage) add(v RAIDVolume) RAIDVolume {
	v.ID = strconv.Itoa(rs.nextID)
	rs.nextID++
	rs.volumes = append(rs.volumes, v)
	return v
}

// check validates a volume request as a controller does (supported RAID
// type, known and unused drives, capacity within what they hold).
func (rs *raidStorage) check(base string, body []byte) (RAIDVolume, response, bool) {
	fail := func(r response) (RAIDVolume, response, bool) { return RAIDVolume{}, r, false }
	var req struct {
		RAIDType      string
		VolumeType    string
		CapacityBytes int64
		Links         struct {
			Drives []struct {
				ID string `json:"@odata.id"`
			}
		}
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return fail(badRequest("Base.1.8.MalformedJSON", "The request body is not valid JSON: %v", err))
	}
	level, ok := raidLevels[req.RAIDType]
	if !ok {
		return fail(badRequest("Base.1.8.PropertyValueNotInList", "RAIDType %q is not supported.", req.RAIDType))
	}
	if len(req.Links.Drives) < level.minDrives {
		return fail(badRequest("Base.1.8.PropertyValueIncorrect", "%s needs at least %d drives, %d given.",
			req.RAIDType, level.minDrives, len(req.Links.Drives)))
	}
	var ids []string
	smallest := int64(-1)
	for _, l := range req.Links.Drives {
		id := strings.TrimPrefix(l.ID, base+"/Drives/")
		i := slices.IndexFunc(rs.drives, func(d RAIDDrive) bool { return d.ID == id })
		if i < 0 {
			return fail(badRequest("Base.1.8.ResourceMissingAtURI", "The drive %s does not exist.", l.ID))
		}
		for _, v := range rs.volumes {
			if slices.Contains(v.Drives, id) {
				return fail(badRequest("Base.1.8.ResourceInUse", "The drive %s is used by volume %s.", l.ID, v.ID))
			}
		}
		if c := rs.drives[i].CapacityBytes; smallest < 0 || c < smallest {
			smallest = c
		}
		ids = append(ids, id)
	}
	limit := smallest * int64(len(ids)-level.overhead)
	if req.RAIDType == "RAID10" {
		limit = smallest * int64(len(ids)/2)
	}
	if req.CapacityBytes <= 0 || req.CapacityBytes > limit {
		return fail(badRequest("Base.1.8.PropertyValueIncorrect", "CapacityBytes %d exceeds the %d bytes the drives hold.",
			req.CapacityBytes, limit))
	}
	return RAIDVolume{RAIDType: req.RAIDType, VolumeType: req.VolumeType, CapacityBytes: req.CapacityBytes, Drives: ids},
		response{}, true
}
