package ovo

import (
	"fmt"
	"strconv"
	"strings"
)

// Release is what a named release of upstream speaks: its highest REST
// API microversion, its conductor RPC API version and the version of each
// object class the RPC carries (master's
// ironic/common/release_mappings.py, the highest version listed for each
// object).
type Release struct {
	API     string
	RPC     string
	Objects map[string]string
}

// objs builds a release's object versions in the order Node, Port,
// Portgroup, Allocation, VolumeConnector, VolumeTarget, Trait, TraitList,
// Conductor.
func objs(v ...string) map[string]string {
	names := []string{"Node", "Port", "Portgroup", "Allocation", "VolumeConnector", "VolumeTarget", "Trait", "TraitList", "Conductor"}
	out := make(map[string]string, len(names))
	for i, n := range names {
		out[n] = v[i]
	}
	return out
}

// releases are the values [DEFAULT]/pin_release_version may name that a
// rolling migration to us can start from: master's mappings go back to
// 21.4 (2023.1), the oldest release whose objects master still reads.
// Older names are refused by ReleaseFor.
var releases = map[string]Release{
	"21.4":   {"1.82", "1.55", objs("1.37", "1.11", "1.5", "1.1", "1.0", "1.0", "1.0", "1.0", "1.3")},
	"22.0":   {"1.83", "1.55", objs("1.38", "1.11", "1.5", "1.1", "1.0", "1.0", "1.0", "1.0", "1.3")},
	"22.1":   {"1.86", "1.56", objs("1.39", "1.11", "1.5", "1.1", "1.0", "1.0", "1.0", "1.0", "1.3")},
	"23.0":   {"1.87", "1.58", objs("1.40", "1.11", "1.5", "1.1", "1.0", "1.0", "1.0", "1.0", "1.3")},
	"23.1":   {"1.88", "1.58", objs("1.40", "1.11", "1.5", "1.1", "1.0", "1.0", "1.0", "1.0", "1.3")},
	"24.0":   {"1.89", "1.59", objs("1.40", "1.11", "1.5", "1.1", "1.0", "1.0", "1.0", "1.0", "1.3")},
	"24.1":   {"1.90", "1.59", objs("1.40", "1.11", "1.5", "1.1", "1.0", "1.0", "1.0", "1.0", "1.3")},
	"25.0":   {"1.91", "1.59", objs("1.40", "1.11", "1.5", "1.1", "1.0", "1.0", "1.0", "1.0", "1.4")},
	"26.0":   {"1.91", "1.60", objs("1.40", "1.11", "1.5", "1.1", "1.0", "1.0", "1.0", "1.0", "1.4")},
	"26.1":   {"1.93", "1.61", objs("1.40", "1.11", "1.5", "1.1", "1.0", "1.0", "1.0", "1.0", "1.4")},
	"27.0":   {"1.94", "1.61", objs("1.41", "1.11", "1.5", "1.1", "1.0", "1.0", "1.0", "1.0", "1.4")},
	"28.0":   {"1.95", "1.61", objs("1.41", "1.11", "1.5", "1.1", "1.0", "1.0", "1.0", "1.0", "1.4")},
	"29.0":   {"1.96", "1.61", objs("1.41", "1.11", "1.5", "1.1", "1.0", "1.0", "1.0", "1.0", "1.4")},
	"30.0":   {"1.99", "1.61", objs("1.41", "1.12", "1.5", "1.1", "1.0", "1.0", "1.0", "1.0", "1.4")},
	"31.0":   {"1.99", "1.61", objs("1.41", "1.12", "1.5", "1.1", "1.0", "1.0", "1.0", "1.0", "1.4")},
	"32.0":   {"1.101", "1.61", objs("1.42", "1.15", "1.6", "1.3", "1.1", "1.1", "1.1", "1.2", "1.6")},
	"33.0":   {"1.104", "1.62", objs("1.43", "1.15", "1.8", "1.3", "1.1", "1.1", "1.1", "1.2", "1.6")},
	"34.0":   {"1.109", "1.62", objs("1.44", "1.15", "1.8", "1.3", "1.1", "1.1", "1.1", "1.2", "1.6")},
	"35.0":   {"1.111", "1.62", objs("1.44", "1.16", "1.9", "1.3", "1.1", "1.1", "1.1", "1.2", "1.6")},
	"36.0":   {"1.112", "1.62", objs("1.44", "1.16", "1.9", "1.3", "1.1", "1.1", "1.1", "1.2", "1.6")},
	"37.0":   {"1.112", "1.62", objs("1.44", "1.16", "1.9", "1.3", "1.1", "1.1", "1.1", "1.2", "1.6")},
	"master": {"1.115", "1.62", objs("1.44", "1.16", "1.9", "1.3", "1.1", "1.1", "1.1", "1.2", "1.6")},
}

// aliases are the named releases upstream maps to a semver one.
var aliases = map[string]string{
	"antelope": "21.4", "2023.1": "21.4", "2023.2": "23.0", "2024.1": "24.1",
	"2024.2": "26.1", "2025.1": "29.0", "2025.2": "32.0", "2026.1": "35.0",
}

// ReleaseFor returns what release name speaks; "" is no pin (master).
func ReleaseFor(name string) (Release, error) {
	if name == "" {
		name = "master"
	}
	if a, ok := aliases[name]; ok {
		name = a
	}
	r, ok := releases[name]
	if !ok {
		return Release{}, fmt.Errorf("pin_release_version %q: a rolling migration can start from release 21.4 (2023.1) or later", name)
	}
	return r, nil
}

// parse splits "major.minor"; a malformed version is 0.0.
func parse(v string) (int, int) {
	a, b, _ := strings.Cut(v, ".")
	major, _ := strconv.Atoi(a)
	minor, _ := strconv.Atoi(b)
	return major, minor
}

// Newer reports whether version a is newer than b.
func Newer(a, b string) bool {
	am, an := parse(a)
	bm, bn := parse(b)
	return am > bm || (am == bm && an > bn)
}

// Compatible reports whether an object of version v can be read by code
// whose class is at version latest (oslo's is_compatible: same major,
// minor not newer).
func Compatible(v, latest string) bool {
	vm, vn := parse(v)
	lm, ln := parse(latest)
	return vm == lm && vn <= ln
}

// CanSendVersion is upstream's JSON-RPC can_send_version: a call of RPC
// version v may be sent under the cap ("" is no cap).
func CanSendVersion(v, cap string) bool {
	if v == "" || cap == "" {
		return true
	}
	return Compatible(v, cap)
}
