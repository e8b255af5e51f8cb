package pxefilter

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// UnknownHostsFile is the hostsdir file holding the wildcard entry that
// allows or denies every MAC no other file names; upstream's name, so a
// hostsdir can pass between upstream's filter and ours.
const UnknownHostsFile = "unknown_hosts_filter"

// The file contents dnsmasq reads as dhcp-host lines: a MAC alone lets
// dnsmasq answer it, ",ignore" makes dnsmasq ignore its requests. They are
// byte for byte upstream's.
const (
	allowUnknownHosts = "*:*:*:*:*:*\n"
	denyUnknownHosts  = "*:*:*:*:*:*,ignore\n"
)

func allowLine(mac string) string { return mac + "\n" }
func denyLine(mac string) string  { return mac + ",ignore\n" }

// macPattern is what a port address looks like once the API has
// normalised it; only such names become files, so an address can never
// name a path outside the hostsdir.
var macPattern = regexp.MustCompile(`^[0-9a-f]{2}(:[0-9a-f]{2}){5}$`)

// Changes counts the files one Apply wrote, by what they now say.
type Changes struct {
	Allowed, Denied int
	// Unknown is whether the wildcard file was (re)written.
	Unknown bool
}

// Apply brings the hostsdir dir in step with d: a file per MAC of d
// (allowed or ignored), the wildcard file, and every other MAC file left
// by an earlier sync set as unknown MACs are. Those files are rewritten,
// not deleted, as upstream does: dnsmasq keeps the hosts of a file that
// disappears until it is restarted or sent SIGHUP, so a MAC whose port was
// deleted would keep its last entry. Only files whose content differs are
// written, so dnsmasq re-reads nothing on a sync that changes nothing.
func Apply(dir string, d Decision) (Changes, error) {
	var ch Changes
	current, err := readHostsdir(dir)
	if err != nil {
		return ch, err
	}
	want := make(map[string]string, len(d.Allow)+len(d.Deny))
	for _, mac := range d.Deny {
		want[mac] = denyLine(mac)
	}
	// A MAC both allowed and denied (two ports cannot share one, but be
	// safe) is allowed: it belongs to a node on inspection.
	for _, mac := range d.Allow {
		want[mac] = allowLine(mac)
	}
	for mac := range current {
		if _, known := want[mac]; known {
			continue
		}
		if d.AllowUnknown {
			want[mac] = allowLine(mac)
		} else {
			want[mac] = denyLine(mac)
		}
	}
	for mac, line := range want {
		if !macPattern.MatchString(mac) {
			continue
		}
		if current[mac] == line {
			continue
		}
		if err := writeAtomic(dir, mac, line); err != nil {
			return ch, err
		}
		if line == allowLine(mac) {
			ch.Allowed++
		} else {
			ch.Denied++
		}
	}
	wildcard := denyUnknownHosts
	if d.AllowUnknown {
		wildcard = allowUnknownHosts
	}
	old, err := os.ReadFile(filepath.Join(dir, UnknownHostsFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ch, fmt.Errorf("read %s: %w", UnknownHostsFile, err)
	}
	if string(old) != wildcard {
		if err := writeAtomic(dir, UnknownHostsFile, wildcard); err != nil {
			return ch, err
		}
		ch.Unknown = true
	}
	return ch, nil
}

// readHostsdir returns the content of every MAC file of dir by MAC. Dot
// files (our temporary files, which dnsmasq skips too) and the wildcard
// file are not MAC files.
func readHostsdir(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read [pxe_filter]dhcp_hostsdir: %w", err)
	}
	files := make(map[string]string, len(entries))
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") || name == UnknownHostsFile {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("read hostsdir file %s: %w", name, err)
		}
		files[name] = string(b)
	}
	return files, nil
}

// writeAtomic replaces dir/name with content through a dot file renamed
// over it, so dnsmasq, which re-reads a file when it is closed after a
// write or moved into the directory and skips dot files, never reads half
// a line. Upstream writes in place under flock instead, which dnsmasq does
// not take.
func writeAtomic(dir, name, content string) error {
	tmp, err := os.CreateTemp(dir, ".pxefilter-*")
	if err != nil {
		return fmt.Errorf("write hostsdir file %s: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(content)
	if err == nil {
		// dnsmasq drops its privileges: the file must be readable by
		// another user, which CreateTemp's 0600 is not.
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		return fmt.Errorf("write hostsdir file %s: %w", name, err)
	}
	return nil
}
