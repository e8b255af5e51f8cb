package redfishbmc

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

const (
	taskServiceURI   = root + "/TaskService"
	updateServiceURI = root + "/UpdateService"
	simpleUpdateURI  = updateServiceURI + "/Actions/UpdateService.SimpleUpdate"
)

// defaultTaskPolls is how many GETs of its monitor a task takes unless
// TaskPolls says otherwise.
const defaultTaskPolls = 2

// bmcTask is a long-running operation the BMC answered with 202 and a task
// monitor (DSP0266 § "Asynchronous operations").
type bmcTask struct {
	id, name  string
	pollsLeft int
	state     string
	status    string
	message   string
	// fail, when set, ends the task in Exception with this message.
	fail string
	// onDone applies the operation when the task completes successfully.
	onDone func()
	// waitReset keeps the task Starting until a system reset.
	waitReset bool
}

// TaskInfo is what tests read of a task.
type TaskInfo struct {
	ID, Name, State, Status, Message string
}

// firmwareImage is what SimpleUpdate does with one image URI.
type firmwareImage struct {
	component, version string
}

// TaskPolls sets how many GETs of its task monitor a task takes before it
// finishes (default 2).
func (b *BMC) TaskPolls(n int) *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.taskPolls = n
	return b
}

// WithAsyncRAID makes the RAID controller answer volume creation and
// deletion with 202 and a task monitor; the volume appears or goes away
// when the task completes.
func (b *BMC) WithAsyncRAID() *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.asyncRAID = true
	return b
}

// FirmwareImage registers an image URI SimpleUpdate accepts: component
// "bios" sets every system's BiosVersion to version when the update task
// completes, "bmc" the manager's FirmwareVersion, "nic:<serial or id>" the
// network adapter's FirmwarePackageVersion. Other URIs are refused.
func (b *BMC) FirmwareImage(uri, component, version string) *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.images == nil {
		b.images = map[string]firmwareImage{}
	}
	b.images[uri] = firmwareImage{component: component, version: version}
	return b
}

// WithBMCFirmwareVersion sets the manager's FirmwareVersion.
func (b *BMC) WithBMCFirmwareVersion(v string) *BMC {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.manager.FirmwareVersion = v
	return b
}

// BiosVersion sets the system's BiosVersion.
func BiosVersion(v string) SystemOption { return func(s *System) { s.BiosVersion = v } }

// FailNextTask makes the next task the BMC creates end in the Exception
// state with a Critical message.
func (b *BMC) FailNextTask(message string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.taskFailures = append(b.taskFailures, message)
}

// Tasks lists the tasks created, oldest first.
func (b *BMC) Tasks() []TaskInfo {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]TaskInfo, 0, len(b.tasks))
	for _, t := range b.tasks {
		out = append(out, TaskInfo{ID: t.id, Name: t.name, State: t.state, Status: t.status, Message: t.message})
	}
	return out
}

// FirmwareVersions returns the BiosVersion of a system and the manager's
// FirmwareVersion.
func (b *BMC) FirmwareVersions(system string) (bios, bmc string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mustSystem(system).BiosVersion, b.manager.FirmwareVersion
}

// newTask starts a task and answers 202 with its monitor, as a BMC does
// for an operation it runs in the background. Called with b.mu held.
func (b *BMC) newTask(name string, onDone func()) response {
	b.nextTask++
	polls := b.taskPolls
	if polls == 0 {
		polls = defaultTaskPolls
	}
	t := &bmcTask{id: strconv.Itoa(b.nextTask), name: name, pollsLeft: polls, state: "New", status: "OK", onDone: onDone,
		waitReset: b.startOnReset}
	if len(b.taskFailures) > 0 {
		t.fail, b.taskFailures = b.taskFailures[0], b.taskFailures[1:]
	}
	b.tasks = append(b.tasks, t)
	mon := taskServiceURI + "/TaskMonitors/" + t.id
	return response{status: http.StatusAccepted, headers: map[string]string{"Location": mon, "Retry-After": "1"},
		body: renderTask(t)}
}

func renderTask(t *bmcTask) map[string]any {
	out := map[string]any{
		"@odata.id": taskServiceURI + "/Tasks/" + t.id, "@odata.type": "#Task.v1_4_3.Task",
		"Id": t.id, "Name": t.name, "TaskState": t.state, "TaskStatus": t.status,
		"TaskMonitor": taskServiceURI + "/TaskMonitors/" + t.id, "Messages": []any{},
	}
	if t.message != "" {
		sev := "OK"
		if t.status != "OK" {
			sev = t.status
		}
		out["Messages"] = []any{map[string]any{"MessageId": "Base.1.8.GeneralError", "Message": t.message, "Severity": sev}}
	}
	return out
}

// advance counts one poll of the task's monitor and finishes it after the
// configured number.
func (t *bmcTask) advance() {
	if t.state == "Completed" || t.state == "Exception" {
		return
	}
	if t.waitReset {
		t.state = "Starting"
		return
	}
	t.pollsLeft--
	if t.pollsLeft > 0 {
		t.state = "Running"
		return
	}
	if t.fail != "" {
		t.state, t.status, t.message = "Exception", "Critical", t.fail
		return
	}
	t.state, t.status, t.message = "Completed", "OK", "The task has completed successfully."
	if t.onDone != nil {
		t.onDone()
	}
}

func (b *BMC) taskByID(id string) *bmcTask {
	i := slices.IndexFunc(b.tasks, func(t *bmcTask) bool { return t.id == id })
	if i < 0 {
		return nil
	}
	return b.tasks[i]
}

// taskRoute answers the TaskService, its tasks and their monitors. A
// monitor answers 202 with the task while it runs and 200 once it is done.
func (b *BMC) taskRoute(r *http.Request, path string) response {
	switch {
	case path == taskServiceURI:
		return b.getOnly(r, func() any {
			return map[string]any{"@odata.id": path, "@odata.type": "#TaskService.v1_1_4.TaskService",
				"Id": "TaskService", "ServiceEnabled": true, "Tasks": link(taskServiceURI + "/Tasks")}
		})
	case path == taskServiceURI+"/Tasks":
		return b.getOnly(r, func() any {
			members := make([]string, 0, len(b.tasks))
			for _, t := range b.tasks {
				members = append(members, taskServiceURI+"/Tasks/"+t.id)
			}
			return collection(path, "TaskCollection", members...)
		})
	}
	if id, ok := strings.CutPrefix(path, taskServiceURI+"/Tasks/"); ok {
		t := b.taskByID(id)
		if t == nil {
			return notFound(path)
		}
		return b.getOnly(r, func() any { return renderTask(t) })
	}
	if id, ok := strings.CutPrefix(path, taskServiceURI+"/TaskMonitors/"); ok {
		t := b.taskByID(id)
		if t == nil {
			return notFound(path)
		}
		if r.Method != http.MethodGet {
			return methodNotAllowed()
		}
		t.advance()
		if t.state == "Completed" || t.state == "Exception" {
			return response{status: http.StatusOK, body: renderTask(t)}
		}
		return response{status: http.StatusAccepted, headers: map[string]string{"Location": path, "Retry-After": "1"},
			body: renderTask(t)}
	}
	return notFound(path)
}

// updateRoute answers the UpdateService and its SimpleUpdate action, which
// runs as a task.
func (b *BMC) updateRoute(r *http.Request, path string, body []byte) response {
	switch path {
	case updateServiceURI:
		return b.getOnly(r, func() any {
			return map[string]any{"@odata.id": path, "@odata.type": "#UpdateService.v1_11_0.UpdateService",
				"Id": "UpdateService", "Name": "Update Service", "ServiceEnabled": true,
				"Actions": map[string]any{"#UpdateService.SimpleUpdate": map[string]any{
					"target": simpleUpdateURI,
					"TransferProtocol@Redfish.AllowableValues": []string{"HTTP", "HTTPS"},
				}}}
		})
	case simpleUpdateURI:
		if r.Method != http.MethodPost {
			return methodNotAllowed()
		}
		var req struct {
			ImageURI string
			Targets  []string
		}
		if resp, ok := decode(body, &req); !ok {
			return resp
		}
		img, ok := b.images[req.ImageURI]
		if !ok {
			return badRequest("Base.1.8.ActionParameterValueFormatError",
				"The value %s for the parameter ImageURI in the action SimpleUpdate is invalid.", req.ImageURI)
		}
		for _, t := range req.Targets {
			if _, _, ok := b.systemByPath(t); !ok {
				return badRequest("Base.1.8.ActionParameterValueNotInList", "Target %s is not known.", t)
			}
		}
		return b.newTask(fmt.Sprintf("Firmware update %s", req.ImageURI), func() {
			switch img.component {
			case "bmc":
				b.manager.FirmwareVersion = img.version
			case "bios":
				for _, s := range b.systems {
					s.BiosVersion = img.version
				}
			default:
				b.updateAdapter(img.component, img.version)
			}
		})
	}
	return notFound(path)
}
