package redfish

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/openkeel/ironic/internal/clock"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
)

// Extensions are the points where a vendor hardware type built on these
// implementations changes what they do, as upstream's vendor classes
// override methods of the redfish ones (drac/boot.py, drac/raid.py). The
// zero value is the plain redfish behaviour.
type Extensions struct {
	// VirtualBootDevice, when set, sets the next boot from the virtual CD
	// ("cdrom") or floppy ("floppy") in place of the standard boot source
	// override (upstream DracRedfishVirtualMediaBoot._set_boot_device);
	// other devices keep the standard path.
	VirtualBootDevice func(ctx context.Context, task *driver.Task, s *Session, device string, persistent bool) error
	// AcceptableMediaID, when set, names the only virtual media slot an
	// insert may use ("" any), for media reached through the system when
	// viaSystem (upstream _get_acceptable_media_id).
	AcceptableMediaID func(s *Session, viaSystem bool) (string, error)
	// BeforeRAIDCreate, when set, runs before the volumes are requested
	// with the drives each controller's new volumes use (upstream
	// pre_create_configuration). It returns true when it changed the
	// drives (RAID mode conversion); their sizes are then read again and
	// the volumes checked against them.
	BeforeRAIDCreate func(ctx context.Context, task *driver.Task, s *Session, drives map[string][]string) (bool, error)
	// SystemVendor, when set, amends the inventory's system_vendor
	// (upstream _get_system_vendor_info).
	SystemVendor func(s *Session, vendor map[string]any) error
	// PXEPortMACs, when set, gives the addresses of the ports the system
	// boots from over the network; the first becomes the inventory's
	// boot.pxe_interface (upstream _get_pxe_port_macs).
	PXEPortMACs func(ctx context.Context, task *driver.Task, s *Session, bootMode string) ([]string, error)
	// LLDP, when set, gives the parsed LLDP of the system's ports in place
	// of what the NetworkAdapters' ports received; fallback asks for the
	// standard collection instead (upstream _collect_lldp_data).
	LLDP func(task *driver.Task, s *Session) (parsed map[string]any, fallback bool)
}

// Set is one group of the redfish implementations sharing a connection
// cache and Extensions, for a hardware type that composes them under its
// own names (idrac).
type Set struct {
	Power        *Power
	Management   *Management
	VirtualMedia *VirtualMediaBoot
	Inspect      *Inspect
	BIOS         *BIOS
	RAID         *RAID
	Vendor       *Vendor
	core         *core
}

// NewSet builds the implementations of one Set.
func NewSet(opts Options, boot BootOptions, ext Extensions) *Set {
	c := newCore(opts, opts.Log)
	c.ext = ext
	mgmt := &Management{core: c, images: boot}
	return &Set{
		Power: &Power{core: c}, Management: mgmt, VirtualMedia: &VirtualMediaBoot{core: c, mgmt: mgmt, opts: boot},
		Inspect: &Inspect{core: c}, BIOS: &BIOS{core: c}, RAID: &RAID{core: c}, Vendor: &Vendor{core: c}, core: c,
	}
}

// Clock is the time source of the Set's waits.
func (s *Set) Clock() clock.Clock { return s.core.opts.clock() }

// WithSession runs fn on the node's cached BMC connection with its system
// read, retrying connection errors as every redfish call does.
func (s *Set) WithSession(ctx context.Context, task *driver.Task, fn func(*Session) error) error {
	return s.core.withConnection(ctx, task, func(cl *client, info DriverInfo) error {
		sys, err := fetchSystem(cl, info)
		if err != nil {
			return redfishError(err.Error())
		}
		return fn(&Session{cl: cl, sys: sys})
	})
}

// Session is a node's BMC connection handed to vendor code, with the
// node's system read. Error answers are *HTTPError.
type Session struct {
	cl  *client
	sys *system
}

// GetJSON reads a resource into v.
func (s *Session) GetJSON(path string, v any) error { return s.cl.getJSON(path, v) }

// Get reads a resource; the caller closes the body.
func (s *Session) Get(path string) (*http.Response, error) { return s.cl.Get(path) }

// Post sends payload to an action target.
func (s *Session) Post(path string, payload any) (*http.Response, error) {
	return s.cl.Post(path, payload)
}

// Patch updates a resource.
func (s *Session) Patch(path string, payload any) (*http.Response, error) {
	return s.cl.Patch(path, payload)
}

// SystemPath is the @odata.id of the node's system.
func (s *Session) SystemPath() string { return s.sys.ODataID }

// SystemUUID is the node's system UUID, its Id when it has none (how
// upstream's messages name the system).
func (s *Session) SystemUUID() string {
	if s.sys.UUID != "" {
		return s.sys.UUID
	}
	return s.sys.ID
}

// Managers are the @odata.id of the managers of the node's system.
func (s *Session) Managers() []string { return s.sys.links("ManagedBy") }

// drivesByController lists the drives of the volumes about to be created
// per controller (Storage Id).
func drivesByController(lds []*logicalDisk) map[string][]string {
	out := map[string][]string{}
	for _, ld := range lds {
		for _, d := range ld.physical {
			if !slices.Contains(out[ld.controller], d) {
				out[ld.controller] = append(out[ld.controller], d)
			}
		}
	}
	return out
}

// revalidateLogicalDisks is upstream DracRedfishRAID
// _get_revalidated_logical_disks: after a RAID mode conversion a drive
// may offer less space, so a volume larger than its drives now hold is
// cut down to what they hold. As upstream, when any volume was cut down
// only the volumes cut down are returned.
func revalidateLogicalDisks(lds []*logicalDisk, disks []*physDisk) ([]*logicalDisk, error) {
	free := freeSpace{}
	for _, d := range disks {
		free[d] = d.capacity
	}
	var changed []*logicalDisk
	for _, ld := range lds {
		var selected []*physDisk
		for _, d := range disks {
			if slices.Contains(ld.physical, d.id) {
				selected = append(selected, d)
			}
		}
		spans, err := calculateSpans(ld.level, len(selected))
		if err != nil {
			return nil, err
		}
		maxBytes, err := maxVolumeBytes(ld.level, selected, free, spans)
		if err != nil {
			return nil, err
		}
		if ld.sizeBytes <= maxBytes {
			continue
		}
		ld.sizeBytes = maxBytes
		if err := volumeProps(ld, disks, free); err != nil {
			return nil, err
		}
		changed = append(changed, ld)
	}
	if len(changed) > 0 {
		return changed, nil
	}
	return lds, nil
}

// MessageIDs are the MessageId of each @Message.ExtendedInfo entry of the
// error answer.
func (e *HTTPError) MessageIDs() []string {
	var infos []struct{ MessageId string }
	if json.Unmarshal(e.extInfo, &infos) != nil {
		return nil
	}
	out := make([]string, 0, len(infos))
	for _, i := range infos {
		out = append(out, i.MessageId)
	}
	return out
}

// SetAsyncStepFlags is upstream set_async_step_flags with every flag
// given, for the flow the node is in (cleaning, deployment, servicing).
func SetAsyncStepFlags(n *model.Node, reboot, skipCurrentStep, polling bool) {
	setAsyncStepFlags(n, &reboot, &skipCurrentStep, &polling)
}

// AsyncWaitState is upstream get_async_step_return_state: the wait state
// of the node's flow.
func AsyncWaitState(n *model.Node) string { return flagsOf(n).wait }

// RamdiskDisabled is upstream is_ramdisk_disabled for the node's flow.
func RamdiskDisabled(n *model.Node) bool {
	f := flagsOf(n)
	if f.disableRamdisk == "" {
		return false
	}
	off, _ := n.InternalInfo().Bool(f.disableRamdisk)
	return off
}

// RebootToFinishStep is upstream reboot_to_finish_step.
func RebootToFinishStep(ctx context.Context, task *driver.Task) (string, error) {
	return rebootToFinishStep(ctx, task)
}

// TaskState is what a task monitor tells of a BMC task.
type TaskState struct {
	// Processing is true while the monitor answers 202.
	Processing bool
	// State and Status are the task's TaskState and TaskStatus.
	State, Status string
	// Messages are the task's messages' texts.
	Messages []string
}

// TaskMonitor reads a task monitor (or task) URI.
func (s *Session) TaskMonitor(uri string) (TaskState, error) {
	t, err := getTaskMonitor(s.cl, uri)
	if err != nil {
		return TaskState{}, err
	}
	return TaskState{Processing: t.processing, State: t.state, Status: t.status, Messages: t.messages}, nil
}

// SystemID is the Id of the node's system.
func (s *Session) SystemID() string { return s.sys.ID }
