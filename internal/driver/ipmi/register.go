package ipmi

import (
	"context"
	"fmt"
	"os"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
)

// core is what the ipmitool interfaces share: options, the local
// ipmitool's capabilities, the per-BMC throttle and the console ports.
// Register builds one per process.
type core struct {
	opts     Options
	support  Support
	throttle *throttle
	ports    *portAllocator
}

func newCore(opts Options, support Support) *core {
	return &core{opts: opts, support: support, throttle: newThrottle(), ports: newPortAllocator()}
}

func (c *core) parse(task *driver.Task) (DriverInfo, error) {
	return ParseDriverInfo(task.Node, c.support, task.Logger())
}

// Register adds the ipmitool power, management (plain and intel-ipmitool)
// and vendor interfaces and the ipmitool-socat console to r. As upstream's
// constructors do, it checks that ipmitool can be run (probing its
// optional flags unless opts.Support says) and that password files can be
// created.
func Register(r *driver.Registry, opts Options) error {
	var support Support
	if opts.Support != nil {
		support = *opts.Support
	} else {
		s, err := ProbeSupport(context.Background(), opts.binary())
		if err != nil {
			return fmt.Errorf("register ipmitool interfaces: %w: %w", errs.New(errs.ClassDriverLoadError, map[string]any{
				"driver": "IPMIPower",
				"reason": "Unable to locate usable ipmitool command in the system path when checking ipmitool version",
			}), err)
		}
		support = s
	}
	if err := checkTempDir(opts.TempDir); err != nil {
		return fmt.Errorf("register ipmitool interfaces: %w", err)
	}
	c := newCore(opts, support)
	mgmt := &Management{core: c}
	for _, i := range []struct {
		kind driver.Kind
		name string
		impl driver.Interface
	}{
		{driver.KindPower, "ipmitool", &Power{core: c}},
		{driver.KindManagement, "ipmitool", mgmt},
		{driver.KindManagement, "intel-ipmitool", &IntelManagement{Management: mgmt}},
		{driver.KindVendor, "ipmitool", &Vendor{core: c}},
		{driver.KindConsole, "ipmitool-socat", &SocatConsole{core: c}},
	} {
		if err := r.Register(i.kind, i.name, i.impl); err != nil {
			return fmt.Errorf("register ipmitool interfaces: %w", err)
		}
	}
	return nil
}

// checkTempDir is upstream _check_temp_dir: password files go to the temp
// directory, so it must exist and be writable.
func checkTempDir(dir string) error {
	f, err := os.CreateTemp(dir, "ipmi-check-")
	if err == nil {
		name := f.Name()
		_ = f.Close()
		err = os.Remove(name)
	}
	if err != nil {
		return errs.NewMessage(errs.ClassDirectoryNotWritable, fmt.Sprintf(
			"Ipmitool drivers need to be able to create temporary files to pass password to ipmitool. Encountered error: %s", err))
	}
	return nil
}

func requireExclusive(task *driver.Task) error {
	if task.Shared {
		return errs.New(errs.ClassExclusiveLockRequired, nil)
	}
	return nil
}
