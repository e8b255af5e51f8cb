package ipmisim

import (
	"strings"
	"testing"
)

func TestSimulatedChassis(t *testing.T) {
	b := Start(t, Options{})
	out, err := b.Ipmitool("power", "status")
	if err != nil || out != "Chassis Power is off\n" {
		t.Fatalf("power status = %q, %v", out, err)
	}
	if _, err := b.Ipmitool("power", "on"); err != nil {
		t.Fatal(err)
	}
	if !b.PoweredOn(t) {
		t.Fatal("power on did not reach the chassis")
	}
	b.SetPower(t, false)
	if out, _ := b.Ipmitool("power", "status"); out != "Chassis Power is off\n" {
		t.Fatalf("power changed behind the BMC's back not seen: %q", out)
	}
	if _, err := b.Ipmitool("chassis", "bootdev", "pxe"); err != nil {
		t.Fatal(err)
	}
	if got := b.BootDevice(t); got != "pxe" {
		t.Fatalf("boot device %q, want pxe", got)
	}
	if out, _ := b.Ipmitool("chassis", "bootparam", "get", "5"); !strings.Contains(out, "Boot Device Selector : Force PXE") {
		t.Fatalf("bootparam output:\n%s", out)
	}
}

func TestWrongPasswordIsRefused(t *testing.T) {
	b := Start(t, Options{})
	b.Password = "not-the-password"
	if _, err := b.Ipmitool("power", "status"); err == nil {
		t.Fatal("a wrong password was accepted")
	}
}

func TestSeparateSimulators(t *testing.T) {
	a := Start(t, Options{PoweredOn: true})
	b := Start(t, Options{})
	if a.Port == b.Port {
		t.Fatal("two simulators share a port")
	}
	if !a.PoweredOn(t) || b.PoweredOn(t) {
		t.Fatal("power states leak between simulators")
	}
}
