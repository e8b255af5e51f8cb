package main

import (
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
)

// allInOneDatabase is where the zero-configuration service keeps its data,
// relative to the working directory.
const allInOneDatabase = "sqlite:///ironic-data/ironic.sqlite"

// overrides are the defaults a mode puts beneath the configuration files.
// The all-in-one mode must run with no file at all on a laptop: loopback
// only, no authentication, no RPC bus, an embedded SQLite file and the
// fake-hardware type. haveIPMITool says whether the ipmitool program is
// installed (see allInOneInterfaces).
func (m mode) overrides(haveIPMITool bool) map[string]map[string]string {
	switch m {
	case modeAllInOne:
		defaults := map[string]string{
			"auth_strategy":          "noauth",
			"rpc_transport":          "none",
			"enabled_hardware_types": "fake-hardware",
			// A laptop has no Neutron to wire a flat network with: nodes
			// get noop unless they ask for flat, which stays enabled as
			// upstream has it. fake-hardware nodes keep the noop network
			// they always had here.
			"default_network_interface": "noop",
		}
		for option, list := range allInOneInterfaces(haveIPMITool) {
			defaults[option] = list
		}
		return map[string]map[string]string{
			"DEFAULT":  defaults,
			"api":      {"host_ip": "127.0.0.1"},
			"database": {"connection": allInOneDatabase},
			// The conductor publishes boot images itself: no web server
			// to set up beside it.
			"deploy":      {"http_root": "ironic-data/httpboot", "http_url": "http://127.0.0.1:6386"},
			"healthcheck": {"enabled": "true"},
			// State a laptop user can write without root, next to the
			// database, instead of upstream's /var/lib/ironic, /var/log/ironic and
			// /tftpboot.
			"agent": {"certificates_path": "ironic-data/certificates", "deploy_logs_local_path": "ironic-data/deploy-logs"},
			"pxe": {
				"images_path": "ironic-data/images", "instance_master_path": "ironic-data/master_images",
				"tftp_root": "ironic-data/tftpboot", "tftp_master_path": "ironic-data/tftpboot/master_images",
			},
		}
	case modeDBSync, modeNoVNCProxy:
		// So that `ironic dbsync upgrade` without a file prepares the
		// database the all-in-one service uses, and the proxy reads it.
		return map[string]map[string]string{"database": {"connection": allInOneDatabase}}
	default:
		return nil
	}
}

// laptopInterfaces are the fake-hardware implementations the all-in-one
// enables beside upstream's lists. fake storage is left out: with it,
// fake-hardware nodes would default to fake storage instead of noop.
var laptopInterfaces = []driver.Kind{
	driver.KindBIOS, driver.KindBoot, driver.KindConsole, driver.KindDeploy, driver.KindFirmware,
	driver.KindInspect, driver.KindRAID, driver.KindRescue, driver.KindVendor,
}

// allInOneInterfaces are the all-in-one's enabled_<kind>_interfaces:
// "fake" first, then upstream's stock list, so that one
// enabled_hardware_types line is all real hardware types need. Lists
// upstream leaves empty (power, management) stay empty: they are then
// computed from the enabled hardware types. The ipmitool implementations
// are left out when the program is not installed, since enabling them
// probes it and a laptop with only fake-hardware has no use for it.
func allInOneInterfaces(haveIPMITool bool) map[string]string {
	out := map[string]string{}
	for _, kind := range driver.AllKinds {
		option := enabledOption(kind)
		o, ok := config.Lookup("DEFAULT", option)
		if !ok {
			panic("config: no option [DEFAULT]/" + option)
		}
		stock, _ := o.Default.([]string)
		if len(stock) == 0 {
			continue
		}
		var list []string
		if slices.Contains(laptopInterfaces, kind) {
			list = append(list, "fake")
		}
		for _, name := range stock {
			if !haveIPMITool && strings.Contains(name, "ipmitool") {
				continue
			}
			list = append(list, name)
		}
		out[option] = strings.Join(list, ",")
	}
	return out
}

func enabledOption(kind driver.Kind) string { return "enabled_" + string(kind) + "_interfaces" }
