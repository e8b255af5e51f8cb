package ipmi

import (
	"context"
	"slices"
	"testing"
	"time"
)

type observation struct {
	operation string
	d         time.Duration
	failed    bool
}

// Every ipmitool run is observed, retries included, under a name that
// leaves out the boot device, parameters and raw bytes, with how long the
// process ran and whether the command took its exit code as a failure.
func TestObserveEachIpmitoolRun(t *testing.T) {
	var seen []observation
	c, bmc, _, logs := testCore(t, func(o *Options) {
		o.Observe = func(op string, d time.Duration, failed bool) {
			seen = append(seen, observation{op, d, failed})
		}
	})
	bmc.duration = 2 * time.Second
	killed := func(ctx context.Context, cmd Command) (Result, error) {
		res, _ := bmc.exec(ctx, cmd)
		if slices.Contains(cmd.Args, "sdr") {
			return res, ErrTimeout
		}
		return res, nil
	}
	c.opts.Exec = killed
	task := testTask(baseInfo(), logs)
	d, err := c.parse(task)
	must(t, err)
	ctx := context.Background()

	bmc.answer("power status", Result{ExitCode: 1, Stderr: "Error: Unable to establish IPMI v2 / RMCP+ session"},
		Result{Stdout: "Chassis Power is on\n"})
	_, _, err = c.exec(ctx, d, "power status", execOptions{})
	must(t, err)
	_, _, err = c.exec(ctx, d, "chassis bootdev pxe options=persistent", execOptions{})
	must(t, err)
	_, _, err = c.sendRaw(ctx, task, d, "0x00 0x08 0x05 0xe0 0x04 0x00 0x00 0x00")
	must(t, err)
	bmc.answer("sol deactivate", Result{ExitCode: 1})
	_, _, err = c.exec(ctx, d, "sol deactivate", execOptions{okCodes: []int{0, 1}})
	must(t, err)
	if _, _, err := c.exec(ctx, d, "sdr -v", execOptions{}); err == nil {
		t.Fatal("killed sdr succeeded")
	}

	want := []observation{
		{"power status", 2 * time.Second, true},
		{"power status", 2 * time.Second, false},
		{"chassis bootdev", 2 * time.Second, false},
		{"raw", 2 * time.Second, false},
		{"sol deactivate", 2 * time.Second, false},
		{"sdr", 2 * time.Second, true},
	}
	if !slices.Equal(seen, want) {
		t.Fatalf("observed\n %+v\nwant\n %+v", seen, want)
	}
}

func TestOperationNames(t *testing.T) {
	for cmd, want := range map[string]string{
		"power status":             "power status",
		"power soft":               "power soft",
		"chassis bootparam get 5":  "chassis bootparam",
		"bmc reset cold":           "bmc reset",
		"mc info":                  "mc info",
		"sdr -v":                   "sdr",
		"raw 0x06 0x01":            "raw",
		"raw 0x00 0x08 0x05 0xe0 ": "raw",
	} {
		if got := operation(cmd); got != want {
			t.Errorf("operation(%q) = %q, want %q", cmd, got, want)
		}
	}
}
