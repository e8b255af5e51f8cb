package agent

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/states"
)

// cleaningSteps are the three places upstream asks should_manage_boot:
// prepare_cleaning, tear_down_cleaning and clean_up.
type cleaningSteps interface {
	PrepareCleaning(context.Context, *driver.Task) (string, error)
	TearDownCleaning(context.Context, *driver.Task) error
	CleanUp(context.Context, *driver.Task) error
}

// [agent]/manage_agent_boot false leaves the agent ramdisk's boot alone in
// cleaning and clean up for the interfaces that follow it (upstream
// CustomAgentDeploy and its direct and bootc subclasses); the ramdisk
// deploy interface (AgentBaseMixin) manages it all the same.
func TestManageAgentBootInCleaning(t *testing.T) {
	ctx := context.Background()
	client := agentclient.New(agentclient.DefaultOptions())
	t.Cleanup(client.Close)
	for _, unmanaged := range []bool{false, true} {
		o := Options{Client: client, UnmanagedAgentBoot: unmanaged}
		for name, c := range map[string]struct {
			iface   cleaningSteps
			managed bool
		}{
			"custom-agent": {NewCustomAgent(o), !unmanaged},
			"direct":       {NewDirect(o), !unmanaged},
			"bootc":        {NewBootc(o), !unmanaged},
			"ramdisk":      {NewRamdisk(o), true},
		} {
			j := &journal{}
			task := newTask(j, &journalNetwork{j: j}, false)
			task.Driver.Boot = &paramsBoot{j: j}
			task.Node.ProvisionState = states.Cleaning
			delete(task.Node.DriverInternalInfo, "agent_url")
			st, err := c.iface.PrepareCleaning(ctx, task)
			if err != nil || st != "clean wait" {
				t.Fatalf("%s unmanaged=%v: prepare_cleaning = %q, %v", name, unmanaged, st, err)
			}
			want := "add_cleaning_network,reboot"
			if c.managed {
				want = "add_cleaning_network,prepare_ramdisk,reboot"
			}
			if got := j.String(); got != want {
				t.Errorf("%s unmanaged=%v: prepare_cleaning calls %q, want %q", name, unmanaged, got, want)
			}
			j.calls = nil
			if err := c.iface.TearDownCleaning(ctx, task); err != nil {
				t.Fatalf("%s unmanaged=%v: tear_down_cleaning: %v", name, unmanaged, err)
			}
			want = "power off,remove_cleaning_network"
			if c.managed {
				want = "power off,clean_up_ramdisk,remove_cleaning_network"
			}
			if got := j.String(); got != want {
				t.Errorf("%s unmanaged=%v: tear_down_cleaning calls %q, want %q", name, unmanaged, got, want)
			}
			j.calls = nil
			if err := c.iface.CleanUp(ctx, task); err != nil {
				t.Fatalf("%s unmanaged=%v: clean_up: %v", name, unmanaged, err)
			}
			want = ""
			if c.managed {
				want = "clean_up_ramdisk"
			}
			if got := j.String(); got != want {
				t.Errorf("%s unmanaged=%v: clean_up calls %q, want %q", name, unmanaged, got, want)
			}
		}
	}
}
