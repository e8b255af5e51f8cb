package redfishbmc

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// The Dell OEM resources of an iDRAC, as Dell's Redfish API documents them
// and sushy's Dell extension reads them: the manager's DelliDRACCardService
// (iDRACReset), DellJobService (DeleteJobQueue), DellLCService
// (GetRemoteServicesAPIStatus) and Jobs, its ImportSystemConfiguration
// action, and the system's DellRaidService (ConvertToRAID,
// ClearForeignConfig). Jobs run asynchronously: Scheduled, then Running,
// then Completed or Failed, one step per GET of the job.

// dellManagerID is the iDRAC's manager Id.
const dellManagerID = "iDRAC.Embedded.1"

// dellControllerID is the FQDD of the RAID controller.
const dellControllerID = "RAID.Integrated.1-1"

// resetDrops is how many requests an iDRAC being reset drops.
const resetDrops = 4

// dellOEM is the emulator's iDRAC state.
type dellOEM struct {
	model   string
	jobs    []*dellJob
	nextJob int
	// lcNotReady and rtNotReady count the status requests still answering
	// NotReady for LCStatus and RTStatus.
	lcNotReady, rtNotReady int
	resets                 int
	// importFaults are MessageIds the next imports are refused with.
	importFaults []string
	// jobFailures are the messages the next jobs fail with.
	jobFailures []string
	// nonRAID are drives in non-RAID mode, by system.
	nonRAID map[string][]string
	// foreign marks the systems whose RAID controller sees a foreign
	// configuration; controllerMode is the Dell ControllerMode of a
	// system's RAID controller ("" shows no Controllers collection).
	foreign        map[string]bool
	controllerMode map[string]string
	// serviceTags are the systems' SKU; switchConnections their NICs'
	// DellSwitchConnections; legacyPXE the NICs whose LegacyBootProto is
	// PXE in the exported configuration.
	// systemMedia are an iDRAC10's virtual media slots, which hang off the
	// system; only slot 1 takes an image.
	systemMedia       map[string]*virtualMedia
	serviceTags       map[string]string
	switchConnections map[string][]DellSwitchConnection
	legacyPXE         map[string][]string
	// staleEject is how many requests a slot keeps showing ejected media;
	// ejecting counts them down per slot.
	staleEject int
	ejecting   map[string]*staleMedia
}

type staleMedia struct {
	image string
	left  int
}

// dellJob is one Lifecycle Controller job.
type dellJob struct {
	id, name, jobType string
	state, message    string
	pollsLeft         int
	fail              string
	onDone            func()
	// result is what the job's task answers once completed (an exported
	// configuration), instead of the job.
	result map[string]any
}

// DellJobInfo is what tests read of a job.
type DellJobInfo struct {
	ID, Name, JobType, JobState, Message string
}

// WithDellOEM makes the BMC an iDRAC9 ("14G Monolithic"): manager
// iDRAC.Embedded.1 with the Dell OEM services, vendor Dell.
func (b *BMC) WithDellOEM() *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dell = &dellOEM{model: "14G Monolithic", nonRAID: map[string][]string{}, ejecting: map[string]*staleMedia{},
		foreign: map[string]bool{}, controllerMode: map[string]string{}, serviceTags: map[string]string{},
		switchConnections: map[string][]DellSwitchConnection{}, legacyPXE: map[string][]string{}}
	b.manager.ID = dellManagerID
	b.vendor = "Dell"
	return b
}

// DellModel sets the manager's Model, whose leading generation tells the
// iDRAC version ("17G Monolithic" is an iDRAC10).
func (b *BMC) DellModel(model string) *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mustDell().model = model
	return b
}

// DellIDRAC10 makes the iDRAC an iDRAC10 ("17G Monolithic"): its virtual
// media slots are the system's, not the manager's, and the collection
// lists slot 2 first. Slot 2 takes an image but the system does not boot
// from it: only slot 1 is good for a remote boot image.
func (b *BMC) DellIDRAC10() *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.mustDell()
	d.model = "17G Monolithic"
	d.systemMedia = map[string]*virtualMedia{
		"1": {ID: "1", MediaTypes: []string{"CD", "DVD"}},
		"2": {ID: "2", MediaTypes: []string{"CD", "DVD", "USBStick"}},
	}
	return b
}

// DellSystemMedia is the image in an iDRAC10 slot ("" when empty).
func (b *BMC) DellSystemMedia(slot string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if vm := b.mustDell().systemMedia[slot]; vm != nil && vm.Inserted {
		return vm.Image
	}
	return ""
}

// DellNonRAIDDrives puts drives of a system's RAID controller in non-RAID
// mode: each shows a raw device volume, and volumes cannot use them until
// ConvertToRAID.
func (b *BMC) DellNonRAIDDrives(system string, drives ...string) *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.mustDell()
	d.nonRAID[system] = append(d.nonRAID[system], drives...)
	return b
}

// DellNonRAIDDrivesOf lists the drives still in non-RAID mode.
func (b *BMC) DellNonRAIDDrivesOf(system string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.mustDell().nonRAID[system])
}

// DellForeignConfig gives a system's RAID controller a foreign
// configuration, which ClearForeignConfig clears with a RAIDConfiguration
// job.
func (b *BMC) DellForeignConfig(system string) *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mustDell().foreign[system] = true
	return b
}

// DellControllerMode gives a system's RAID controller a Controllers
// collection whose controller reports this Dell ControllerMode ("HBA" for a
// PERC in non-RAID mode); a PATCH to RAID mode runs as a job.
func (b *BMC) DellControllerMode(system, mode string) *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mustDell().controllerMode[system] = mode
	return b
}

// DellControllerModeOf is the ControllerMode of a system's RAID controller.
func (b *BMC) DellControllerModeOf(system string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mustDell().controllerMode[system]
}

// DellForeignConfigOf tells whether a system's controller still sees a
// foreign configuration.
func (b *BMC) DellForeignConfigOf(system string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mustDell().foreign[system]
}

// DellSwitchConnection is what the iDRAC learnt over LLDP of the switch
// port a NIC is cabled to ("No Link" when none).
type DellSwitchConnection struct {
	FQDD, SwitchConnectionID, SwitchPortConnectionID string
}

// DellServiceTag sets a system's SKU, the Dell service tag.
func (b *BMC) DellServiceTag(system, tag string) *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mustDell().serviceTags[system] = tag
	return b
}

// DellSwitchConnections sets a system's DellSwitchConnections.
func (b *BMC) DellSwitchConnections(system string, conns ...DellSwitchConnection) *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mustDell().switchConnections[system] = conns
	return b
}

// DellLegacyPXE sets which NICs (EthernetInterface Ids) boot with PXE in
// legacy BIOS mode, as the exported NIC configuration shows.
func (b *BMC) DellLegacyPXE(system string, nics ...string) *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mustDell().legacyPXE[system] = nics
	return b
}

// DellFailNextImport has the next configuration import refused with a
// 400 carrying messageID ("LC068": a configuration is pending; "RAC0679":
// a job is running).
func (b *BMC) DellFailNextImport(messageID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.mustDell()
	d.importFaults = append(d.importFaults, messageID)
}

// DellFailNextJob has the next job the iDRAC creates end Failed with
// message.
func (b *BMC) DellFailNextJob(message string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.mustDell()
	d.jobFailures = append(d.jobFailures, message)
}

// DellRealtimeNotReady has the next n status requests report real-time
// operations NotReady.
func (b *BMC) DellRealtimeNotReady(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mustDell().rtNotReady = n
}

// DellStaleEject has a virtual media slot keep showing its ejected image
// as inserted, and refuse inserts with a 500, for the next n requests of
// that slot, as iDRACs do while the eject completes.
func (b *BMC) DellStaleEject(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mustDell().staleEject = n
}

// DellQueueJob adds a Scheduled job to the queue, as a configuration
// change waiting for a reboot leaves.
func (b *BMC) DellQueueJob(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mustDell().newJob(name, "BIOSConfiguration", 1<<30, nil)
}

// DellJobs lists the job queue, oldest first.
func (b *BMC) DellJobs() []DellJobInfo {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := []DellJobInfo{}
	for _, j := range b.mustDell().jobs {
		out = append(out, DellJobInfo{ID: j.id, Name: j.name, JobType: j.jobType, JobState: j.state, Message: j.message})
	}
	return out
}

// DellResets counts the iDRAC resets.
func (b *BMC) DellResets() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mustDell().resets
}

func (b *BMC) mustDell() *dellOEM {
	if b.dell == nil {
		b.t.Fatalf("redfishbmc: WithDellOEM was not called")
	}
	return b.dell
}

// newJob queues a job that completes after polls GETs.
func (d *dellOEM) newJob(name, jobType string, polls int, onDone func()) *dellJob {
	d.nextJob++
	j := &dellJob{id: fmt.Sprintf("JID_%012d", 900000000000+d.nextJob), name: name, jobType: jobType,
		state: "Scheduled", message: "Task successfully scheduled.", pollsLeft: polls, onDone: onDone}
	if len(d.jobFailures) > 0 {
		j.fail, d.jobFailures = d.jobFailures[0], d.jobFailures[1:]
	}
	d.jobs = append(d.jobs, j)
	return j
}

func (d *dellOEM) job(id string) *dellJob {
	i := slices.IndexFunc(d.jobs, func(j *dellJob) bool { return j.id == id })
	if i < 0 {
		return nil
	}
	return d.jobs[i]
}

// advance is one GET of the job.
func (j *dellJob) advance() {
	if j.done() {
		return
	}
	j.pollsLeft--
	switch {
	case j.pollsLeft > 0:
		j.state, j.message = "Running", "Job in progress."
	case j.fail != "":
		j.state, j.message = "Failed", j.fail
	default:
		j.state, j.message = "Completed", "Job completed successfully."
		if j.onDone != nil {
			j.onDone()
		}
	}
}

func (j *dellJob) done() bool { return j.state == "Completed" || j.state == "Failed" }

// render is the job as DellJob and as the Task of the TaskService.
func (j *dellJob) render(path string) map[string]any {
	taskState, status := "Running", "OK"
	switch j.state {
	case "Scheduled":
		taskState = "Starting"
	case "Completed":
		taskState = "Completed"
	case "Failed":
		taskState, status = "Exception", "Critical"
	}
	return map[string]any{
		"@odata.id": path, "@odata.type": "#DellJob.v1_5_0.DellJob", "Id": j.id, "Name": j.name,
		"JobState": j.state, "JobType": j.jobType, "Message": j.message, "MessageId": "IDRAC.2.8.JCP001",
		"TaskState": taskState, "TaskStatus": status,
		"Messages": []any{map[string]any{"Message": j.message, "MessageId": "IDRAC.2.8.JCP001"}},
		"Oem": map[string]any{"Dell": map[string]any{"@odata.type": "#DellJob.v1_5_0.DellJob", "Id": j.id,
			"JobState": j.state, "JobType": j.jobType, "Message": j.message, "Name": j.name}},
	}
}

func dellError(status int, messageID, message string) response {
	resp := redfishError(status, "Base.1.8.GeneralError", "A general error has occurred. See ExtendedInfo for more information")
	resp.body.(map[string]any)["error"].(map[string]any)["@Message.ExtendedInfo"] = []any{map[string]any{
		"MessageId": messageID, "Message": message, "Severity": "Warning",
	}}
	return resp
}

// dellRoute answers the Dell OEM paths and adds the OEM parts to the
// standard resources; ok is false for what the standard routes answer
// alone.
func (b *BMC) dellRoute(r *http.Request, path string, body []byte) (response, bool) {
	d := b.dell
	if d == nil {
		return response{}, false
	}
	if !b.authorized(r, path) {
		return response{}, false
	}
	mgr := root + "/Managers/" + dellManagerID
	switch {
	case path == mgr && r.Method == http.MethodGet:
		resp := b.managerRoute(r, path, body)
		b.decorateManager(resp.body.(map[string]any), mgr)
		return resp, true
	case strings.HasPrefix(path, mgr+"/Oem/Dell/") || strings.HasPrefix(path, mgr+"/Jobs") ||
		strings.HasPrefix(path, mgr+"/Actions/Oem/"):
		return b.dellManagerRoute(r, mgr, path, body), true
	case strings.HasPrefix(path, mgr+"/VirtualMedia/"):
		return b.dellVirtualMedia(r, path, body)
	case path == taskServiceURI+"/Tasks" && r.Method == http.MethodGet:
		resp := b.taskRoute(r, path)
		m := resp.body.(map[string]any)
		members, _ := m["Members"].([]any)
		for _, j := range d.jobs {
			members = append(members, link(taskServiceURI+"/Tasks/"+j.id))
		}
		m["Members"], m["Members@odata.count"] = members, len(members)
		return resp, true
	case strings.HasPrefix(path, taskServiceURI+"/Tasks/JID_"):
		return b.dellJobRoute(r, path, strings.TrimPrefix(path, taskServiceURI+"/Tasks/"), true), true
	case strings.HasPrefix(path, root+"/Systems/"):
		return b.dellSystemRoute(r, path, body)
	}
	return response{}, false
}

func (b *BMC) decorateManager(m map[string]any, mgr string) {
	m["Model"] = b.dell.model
	m["Oem"] = map[string]any{"Dell": map[string]any{"@odata.type": "#DellOem.v1_3_0.DellOemResources"}}
	links, _ := m["Links"].(map[string]any)
	if links == nil {
		links = map[string]any{}
		m["Links"] = links
	}
	links["Oem"] = map[string]any{"Dell": map[string]any{
		"@odata.type":          "#DellOem.v1_3_0.DellOemLinks",
		"DelliDRACCardService": link(mgr + "/Oem/Dell/DelliDRACCardService"),
		"DellJobService":       link(mgr + "/Oem/Dell/DellJobService"),
		"DellLCService":        link(mgr + "/Oem/Dell/DellLCService"),
		"Jobs":                 link(mgr + "/Jobs"),
	}}
	m["Actions"] = map[string]any{"Oem": map[string]any{
		"#OemManager.ExportSystemConfiguration": map[string]any{
			"target":                               mgr + "/Actions/Oem/EID_674_Manager.ExportSystemConfiguration",
			"ExportFormat@Redfish.AllowableValues": []any{"XML", "JSON"},
			"ExportUse@Redfish.AllowableValues":    []any{"Default", "Clone", "Replace"},
			"ShareParameters": map[string]any{"Target@Redfish.AllowableValues": []any{
				"ALL", "IDRAC", "BIOS", "NIC", "RAID"}},
		},
		"#OemManager.ImportSystemConfiguration": map[string]any{
			"target":                               mgr + "/Actions/Oem/EID_674_Manager.ImportSystemConfiguration",
			"ShutdownType@Redfish.AllowableValues": []any{"Graceful", "Forced", "NoReboot"},
		},
	}}
}

func (b *BMC) dellManagerRoute(r *http.Request, mgr, path string, body []byte) response {
	d := b.dell
	service := func(name string, actions ...string) response {
		if r.Method != http.MethodGet {
			return methodNotAllowed()
		}
		acts := map[string]any{}
		for _, a := range actions {
			acts["#"+name+"."+a] = map[string]any{"target": path + "/Actions/" + name + "." + a}
		}
		if name == "DelliDRACCardService" {
			acts["#DelliDRACCardService.iDRACReset"].(map[string]any)["Force@Redfish.AllowableValues"] = []any{"Graceful", "Force"}
		}
		return response{status: http.StatusOK, body: map[string]any{"@odata.id": path,
			"@odata.type": "#" + name + ".v1_0_0." + name, "Id": name, "Name": name, "Actions": acts}}
	}
	post := func() bool { return r.Method == http.MethodPost }
	switch strings.TrimPrefix(path, mgr) {
	case "/Oem/Dell/DelliDRACCardService":
		return service("DelliDRACCardService", "iDRACReset")
	case "/Oem/Dell/DellJobService":
		return service("DellJobService", "DeleteJobQueue")
	case "/Oem/Dell/DellLCService":
		return service("DellLCService", "GetRemoteServicesAPIStatus")
	case "/Oem/Dell/DelliDRACCardService/Actions/DelliDRACCardService.iDRACReset":
		var req struct{ Force string }
		if resp, ok := decode(body, &req); !ok || !post() {
			return resp
		}
		if req.Force != "Graceful" && req.Force != "Force" {
			return badRequest("Base.1.8.ActionParameterValueNotInList", "Invalid Force %q", req.Force)
		}
		// The iDRAC goes away (its connections drop) for a few requests,
		// forgets its sessions, and its Lifecycle Controller is not ready
		// at once when it is back.
		d.resets++
		b.faults = append(b.faults, fault{remaining: resetDrops, drop: true})
		d.lcNotReady = 2
		clear(b.sessions)
		return response{status: http.StatusOK, body: map[string]any{"@Message.ExtendedInfo": []any{
			map[string]any{"MessageId": "IDRAC.2.8.RAC064", "Message": "iDRAC restart operation initiated successfully."}}}}
	case "/Oem/Dell/DellJobService/Actions/DellJobService.DeleteJobQueue":
		var req struct{ JobID string }
		if resp, ok := decode(body, &req); !ok || !post() {
			return resp
		}
		switch {
		case req.JobID == "JID_CLEARALL":
			d.jobs = nil
		case d.job(req.JobID) != nil:
			d.jobs = slices.DeleteFunc(d.jobs, func(j *dellJob) bool { return j.id == req.JobID })
		default:
			return dellError(http.StatusBadRequest, "IDRAC.2.8.SUP011", "Job ID "+req.JobID+" not found.")
		}
		return response{status: http.StatusOK, body: map[string]any{"@Message.ExtendedInfo": []any{
			map[string]any{"MessageId": "IDRAC.2.8.SUP020", "Message": "The job queue was deleted."}}}}
	case "/Oem/Dell/DellLCService/Actions/DellLCService.GetRemoteServicesAPIStatus":
		if !post() {
			return methodNotAllowed()
		}
		lc, rt := "Ready", "Ready"
		if d.lcNotReady > 0 {
			d.lcNotReady--
			lc = "NotReady"
		}
		if d.rtNotReady > 0 {
			d.rtNotReady--
			rt = "NotReady"
		}
		return response{status: http.StatusOK, body: map[string]any{"LCStatus": lc, "RTStatus": rt,
			"Status": lc, "ServerStatus": "OutOfPOST", "TelemetryStatus": "Ready"}}
	case "/Jobs":
		if r.Method != http.MethodGet {
			return methodNotAllowed()
		}
		members := []any{}
		for _, j := range d.jobs {
			// The collection is read with $expand: members come whole.
			members = append(members, j.render(mgr+"/Jobs/"+j.id))
		}
		return response{status: http.StatusOK, body: map[string]any{"@odata.id": path,
			"@odata.type": "#DellJobCollection.DellJobCollection", "Members": members, "Members@odata.count": len(members)}}
	case "/Actions/Oem/EID_674_Manager.ImportSystemConfiguration":
		if !post() {
			return methodNotAllowed()
		}
		return b.dellImport(body)
	case "/Actions/Oem/EID_674_Manager.ExportSystemConfiguration":
		if !post() {
			return methodNotAllowed()
		}
		return b.dellExport(body)
	}
	if id, ok := strings.CutPrefix(path, mgr+"/Jobs/"); ok {
		return b.dellJobRoute(r, path, id, false)
	}
	return notFound(path)
}

// dellJobRoute answers a job: as a Task (asTask) it answers 202 until the
// job is done, as iDRAC task monitors do; as a DellJob always 200.
func (b *BMC) dellJobRoute(r *http.Request, path, id string, asTask bool) response {
	j := b.dell.job(id)
	if j == nil {
		return notFound(path)
	}
	if r.Method != http.MethodGet {
		return methodNotAllowed()
	}
	j.advance()
	if asTask && !j.done() {
		return response{status: http.StatusAccepted, headers: map[string]string{"Location": path, "Retry-After": "1"},
			body: j.render(path)}
	}
	if asTask && j.state == "Completed" && j.result != nil {
		return response{status: http.StatusOK, body: j.result}
	}
	return response{status: http.StatusOK, body: j.render(path)}
}

var (
	scpComponent = regexp.MustCompile(`<Component FQDD="([^"]+)">`)
	scpAttribute = regexp.MustCompile(`<Attribute Name="([^"]+)">([^<]*)</Attribute>`)
)

// dellImport is ImportSystemConfiguration of an XML profile; the
// ServerBoot attributes of the iDRAC component set the next boot from
// its virtual CD (VCD-DVD) or floppy (VFDD), once or for good.
func (b *BMC) dellImport(body []byte) response {
	d := b.dell
	var req struct {
		ShareParameters struct{ Target string }
		ImportBuffer    string
	}
	if resp, ok := decode(body, &req); !ok {
		return resp
	}
	if len(d.importFaults) > 0 {
		id := d.importFaults[0]
		d.importFaults = d.importFaults[1:]
		msg := "Unable to complete the operation because a configuration job is pending."
		if strings.Contains(id, "RAC0679") {
			msg = "Unable to run the method because the requested HTTP method is not allowed while a job runs."
		}
		return dellError(http.StatusBadRequest, "IDRAC.2.8."+id, msg)
	}
	comp := scpComponent.FindStringSubmatch(req.ImportBuffer)
	if req.ShareParameters.Target == "" || comp == nil {
		return dellError(http.StatusBadRequest, "IDRAC.2.8.SYS041", "Unable to import the configuration: invalid ImportBuffer.")
	}
	attrs := map[string]string{}
	for _, a := range scpAttribute.FindAllStringSubmatch(req.ImportBuffer, -1) {
		attrs[a[1]] = a[2]
	}
	target := map[string]string{"VCD-DVD": "Cd", "VFDD": "Floppy"}[attrs["ServerBoot.1#FirstBootDevice"]]
	enabled := "Continuous"
	if attrs["ServerBoot.1#BootOnce"] == "Enabled" {
		enabled = "Once"
	}
	polls := b.taskPolls
	if polls == 0 {
		polls = defaultTaskPolls
	}
	j := d.newJob("Import Configuration", "ImportConfiguration", polls, func() {
		if comp[1] != dellManagerID || target == "" {
			return
		}
		for _, s := range b.systems {
			s.BootTarget, s.BootEnabled = target, enabled
		}
	})
	loc := taskServiceURI + "/Tasks/" + j.id
	return response{status: http.StatusAccepted, headers: map[string]string{"Location": loc}, body: map[string]any{}}
}

// dellExport is ExportSystemConfiguration in JSON; the NIC target
// exports each EthernetInterface's LegacyBootProto.
func (b *BMC) dellExport(body []byte) response {
	var req struct {
		ShareParameters struct{ Target string }
		ExportFormat    string
	}
	if resp, ok := decode(body, &req); !ok {
		return resp
	}
	if req.ExportFormat != "JSON" || (req.ShareParameters.Target != "NIC" && req.ShareParameters.Target != "ALL") {
		return dellError(http.StatusBadRequest, "IDRAC.2.8.SYS041", "The emulator exports the NIC configuration in JSON only.")
	}
	var comps []any
	for _, id := range b.order {
		for _, nic := range b.systems[id].NICs {
			proto := "NONE"
			if slices.Contains(b.dell.legacyPXE[id], nic.ID) {
				proto = "PXE"
			}
			comps = append(comps, map[string]any{"FQDD": nic.ID, "Attributes": []any{
				map[string]any{"Name": "LegacyBootProto", "Value": proto, "Set On Import": "True", "Comment": "Read and Write"}}})
		}
	}
	j := b.dell.newJob("Export Configuration", "ExportConfiguration", max(b.taskPolls, defaultTaskPolls), nil)
	j.result = map[string]any{"SystemConfiguration": map[string]any{"Model": b.dell.model, "Components": comps}}
	return response{status: http.StatusAccepted, headers: map[string]string{"Location": taskServiceURI + "/Tasks/" + j.id},
		body: map[string]any{}}
}

// dellSystemMedia answers an iDRAC10's system virtual media.
func (b *BMC) dellSystemMedia(r *http.Request, path, rest string, body []byte) response {
	d := b.dell
	if rest == "" {
		return b.getOnly(r, func() any {
			return collection(path, "VirtualMediaCollection", path+"/2", path+"/1")
		})
	}
	id, action, _ := strings.Cut(rest, "/")
	vm := d.systemMedia[id]
	if vm == nil {
		return notFound(path)
	}
	base := strings.TrimSuffix(path, "/"+action)
	switch action {
	case "":
		return b.getOnly(r, func() any {
			return map[string]any{"@odata.id": base, "@odata.type": "#VirtualMedia.v1_6_0.VirtualMedia", "Id": id,
				"Name": "Virtual Media " + id, "MediaTypes": vm.MediaTypes, "Image": vm.Image, "Inserted": vm.Inserted,
				"Actions": map[string]any{
					"#VirtualMedia.InsertMedia": map[string]any{"target": base + "/Actions/VirtualMedia.InsertMedia"},
					"#VirtualMedia.EjectMedia":  map[string]any{"target": base + "/Actions/VirtualMedia.EjectMedia"},
				}}
		})
	case "Actions/VirtualMedia.InsertMedia":
		if r.Method != http.MethodPost {
			return methodNotAllowed()
		}
		var req struct{ Image string }
		if resp, ok := decode(body, &req); !ok {
			return resp
		}
		vm.Image, vm.Inserted = req.Image, true
		return noContent
	case "Actions/VirtualMedia.EjectMedia":
		if r.Method != http.MethodPost {
			return methodNotAllowed()
		}
		vm.Image, vm.Inserted = "", false
		return noContent
	}
	return notFound(path)
}

// dellVirtualMedia plays the iDRAC's slow eject: for a while after an
// eject the slot still shows the image and refuses inserts with a 500.
func (b *BMC) dellVirtualMedia(r *http.Request, path string, body []byte) (response, bool) {
	d := b.dell
	rest := strings.TrimPrefix(path, root+"/Managers/"+dellManagerID+"/VirtualMedia/")
	id, action, _ := strings.Cut(rest, "/")
	stale := d.ejecting[id]
	switch {
	case action == "Actions/VirtualMedia.EjectMedia" && r.Method == http.MethodPost:
		vm := b.manager.VirtualMedia[id]
		if vm == nil || d.staleEject == 0 || !vm.Inserted {
			return response{}, false
		}
		image := vm.Image
		resp := b.managerRoute(r, path, body)
		d.ejecting[id] = &staleMedia{image: image, left: d.staleEject}
		return resp, true
	case stale == nil || stale.left == 0:
		return response{}, false
	}
	stale.left--
	switch {
	case action == "" && r.Method == http.MethodGet:
		resp := b.managerRoute(r, path, body)
		m := resp.body.(map[string]any)
		m["Inserted"], m["Image"] = true, stale.image
		return resp, true
	case action == "Actions/VirtualMedia.InsertMedia" && r.Method == http.MethodPost:
		return redfishError(http.StatusInternalServerError, "IDRAC.2.8.VRM0009",
			"Virtual Media is detached or Virtual Media devices are already in use."), true
	}
	return response{}, false
}

// dellSystemRoute adds the DellRaidService to the system and the non-RAID
// mode of drives to the RAID controller.
func (b *BMC) dellSystemRoute(r *http.Request, path string, body []byte) (response, bool) {
	s, sub, ok := b.systemByPath(path)
	if !ok {
		return response{}, false
	}
	d := b.dell
	base := SystemPath(s.ID)
	raidSvc := base + "/Oem/Dell/DellRaidService"
	rawVolume := func(drive string) string { return base + "/Storage/1/Volumes/Disk.Direct." + drive }
	switch {
	case sub == "" && r.Method == http.MethodGet:
		resp := b.systemRoute(r, path, body)
		m := resp.body.(map[string]any)
		links, _ := m["Links"].(map[string]any)
		if links == nil {
			links = map[string]any{}
			m["Links"] = links
		}
		links["Oem"] = map[string]any{"Dell": map[string]any{"DellRaidService": link(raidSvc)}}
		if tag := d.serviceTags[s.ID]; tag != "" {
			m["SKU"] = tag
		}
		if d.systemMedia != nil {
			m["VirtualMedia"] = link(base + "/VirtualMedia")
		}
		return resp, true
	case d.systemMedia != nil && (sub == "VirtualMedia" || strings.HasPrefix(sub, "VirtualMedia/")):
		return b.dellSystemMedia(r, path, strings.TrimPrefix(strings.TrimPrefix(sub, "VirtualMedia"), "/"), body), true
	case sub == "NetworkPorts/Oem/Dell/DellSwitchConnections":
		return b.getOnly(r, func() any {
			members := []any{}
			for _, c := range d.switchConnections[s.ID] {
				members = append(members, map[string]any{"@odata.id": path + "/" + c.FQDD, "FQDD": c.FQDD,
					"SwitchConnectionID": c.SwitchConnectionID, "SwitchPortConnectionID": c.SwitchPortConnectionID})
			}
			return map[string]any{"@odata.id": path, "Members": members, "Members@odata.count": len(members)}
		}), true
	case path == raidSvc:
		return b.getOnly(r, func() any {
			acts := map[string]any{}
			for _, a := range []string{"ConvertToRAID", "ConvertToNonRAID", "ClearForeignConfig"} {
				acts["#DellRaidService."+a] = map[string]any{"target": raidSvc + "/Actions/DellRaidService." + a}
			}
			return map[string]any{"@odata.id": path, "@odata.type": "#DellRaidService.v1_3_0.DellRaidService",
				"Id": "DellRaidService", "Name": "DellRaidService", "Actions": acts}
		}), true
	case path == raidSvc+"/Actions/DellRaidService.ConvertToRAID" && r.Method == http.MethodPost:
		var req struct{ PDArray []string }
		if resp, ok := decode(body, &req); !ok {
			return resp, true
		}
		if len(req.PDArray) == 0 {
			return dellError(http.StatusBadRequest, "IDRAC.2.8.STOR001", "No physical disks given."), true
		}
		polls := max(b.taskPolls, defaultTaskPolls)
		j := d.newJob("Convert to RAID", "RealTimeNoRebootConfiguration", polls, func() {
			d.nonRAID[s.ID] = slices.DeleteFunc(d.nonRAID[s.ID], func(id string) bool { return slices.Contains(req.PDArray, id) })
		})
		return response{status: http.StatusAccepted, headers: map[string]string{
			"Location": root + "/Managers/" + dellManagerID + "/Jobs/" + j.id}, body: map[string]any{}}, true
	case path == raidSvc+"/Actions/DellRaidService.ClearForeignConfig" && r.Method == http.MethodPost:
		if !d.foreign[s.ID] {
			return dellError(http.StatusBadRequest, "IDRAC.2.8.STOR018", "No foreign configuration found."), true
		}
		j := d.newJob("Clear foreign configuration", "RAIDConfiguration", max(b.taskPolls, defaultTaskPolls),
			func() { d.foreign[s.ID] = false })
		return response{status: http.StatusAccepted, headers: map[string]string{
			"Location": root + "/Managers/" + dellManagerID + "/Jobs/" + j.id}, body: map[string]any{}}, true
	case sub == "Storage/1" && r.Method == http.MethodGet && s.hw.raid != nil && d.controllerMode[s.ID] != "":
		resp, ok := b.raidRoute(r, s, sub, path, body)
		if ok {
			resp.body.(map[string]any)["Controllers"] = link(path + "/Controllers")
		}
		return resp, ok
	case sub == "Storage/1/Controllers" && d.controllerMode[s.ID] != "":
		return b.getOnly(r, func() any {
			return collection(path, "StorageControllerCollection", path+"/"+dellControllerID)
		}), true
	case sub == "Storage/1/Controllers/"+dellControllerID && d.controllerMode[s.ID] != "":
		switch r.Method {
		case http.MethodGet:
			return response{status: http.StatusOK, body: map[string]any{"@odata.id": path,
				"@odata.type": "#StorageController.v1_2_0.StorageController", "Id": dellControllerID,
				"Name": "PERC H730P Mini", "SupportedRAIDTypes": []any{"RAID0", "RAID1"},
				"Oem": map[string]any{"Dell": map[string]any{"DellStorageController": map[string]any{
					"ControllerMode": d.controllerMode[s.ID]}}}}}, true
		case http.MethodPatch:
			var req struct {
				Oem struct {
					Dell struct {
						DellStorageController struct{ ControllerMode string }
					}
				}
			}
			if resp, ok := decode(body, &req); !ok {
				return resp, true
			}
			mode := req.Oem.Dell.DellStorageController.ControllerMode
			if mode != "RAID" && mode != "HBA" {
				return dellError(http.StatusBadRequest, "IDRAC.2.8.SYS426", "Invalid ControllerMode "+mode), true
			}
			j := d.newJob("Configure: "+dellControllerID, "RAIDConfiguration", max(b.taskPolls, defaultTaskPolls),
				func() { d.controllerMode[s.ID] = mode })
			return response{status: http.StatusAccepted, headers: map[string]string{
				"Location": taskServiceURI + "/Tasks/" + j.id}, body: map[string]any{}}, true
		}
		return methodNotAllowed(), true
	case strings.HasPrefix(sub, "Storage/1/Drives/") && r.Method == http.MethodGet && s.hw.raid != nil:
		drive := strings.TrimPrefix(sub, "Storage/1/Drives/")
		resp, ok := b.raidRoute(r, s, sub, path, body)
		if !ok || !slices.Contains(d.nonRAID[s.ID], drive) {
			return resp, ok
		}
		resp.body.(map[string]any)["Links"] = map[string]any{"Volumes": []any{link(rawVolume(drive))}}
		return resp, true
	case strings.HasPrefix(sub, "Storage/1/Volumes/Disk.Direct.") && r.Method == http.MethodGet:
		drive := strings.TrimPrefix(sub, "Storage/1/Volumes/Disk.Direct.")
		if !slices.Contains(d.nonRAID[s.ID], drive) {
			return notFound(path), true
		}
		return response{status: http.StatusOK, body: map[string]any{"@odata.id": path, "@odata.type": "#Volume.v1_5_0.Volume",
			"Id": "Disk.Direct." + drive, "Name": "Disk.Direct." + drive, "VolumeType": "RawDevice", "RAIDType": nil,
			"Links": map[string]any{"Drives": []any{link(base + "/Storage/1/Drives/" + drive)}}}}, true
	case sub == "Storage/1/Volumes" && r.Method == http.MethodPost:
		var req struct {
			Links struct {
				Drives []struct {
					ODataID string `json:"@odata.id"`
				}
			}
		}
		if json.Unmarshal(body, &req) != nil {
			return response{}, false
		}
		for _, l := range req.Links.Drives {
			drive := l.ODataID[strings.LastIndex(l.ODataID, "/")+1:]
			if slices.Contains(d.nonRAID[s.ID], drive) {
				return dellError(http.StatusBadRequest, "IDRAC.2.8.STOR023",
					"Physical disk "+drive+" is in non-RAID mode and cannot be part of a virtual disk."), true
			}
		}
	}
	return response{}, false
}
