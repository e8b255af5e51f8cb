package ansible

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// playbook is one run's playbook and SSH identity, from driver_info or
// the [ansible] defaults (upstream _parse_ansible_driver_info).
type playbook struct {
	Dir, Name, User, KeyFile, Python string
}

// playbookFor resolves the playbook of action (deploy, shutdown, clean).
func (d *Deploy) playbookFor(n *model.Node, action string) (playbook, error) {
	str := func(key, def string) string {
		if v, ok := n.DriverInfo[key].(string); ok && v != "" {
			return v
		}
		return def
	}
	def := map[string]string{"deploy": d.opts.DefaultDeployPlaybook, "shutdown": d.opts.DefaultShutdownPlaybook, "clean": d.opts.DefaultCleanPlaybook}[action]
	name := str("ansible_"+action+"_playbook", def)
	if name == "" {
		return playbook{}, errs.New(errs.ClassInstanceDeployFailure, map[string]any{"reason": fmt.Sprintf("Failed to set ansible playbook for action %s", action)})
	}
	dir, err := d.playbooksDir(n)
	if err != nil {
		return playbook{}, err
	}
	return playbook{
		Dir:     dir,
		Name:    filepath.Base(name), // upstream keeps the base name only
		User:    str("ansible_username", d.opts.DefaultUsername),
		KeyFile: str("ansible_key_file", d.opts.DefaultKeyFile),
		Python:  str("ansible_python_interpreter", d.opts.DefaultPythonInterpreter),
	}, nil
}

// playbooksDir is the node's playbooks directory: driver_info's
// ansible_playbooks_path, [ansible]/playbooks_path, or our embedded
// playbooks.
func (d *Deploy) playbooksDir(n *model.Node) (string, error) {
	if v, ok := n.DriverInfo["ansible_playbooks_path"].(string); ok && v != "" {
		return v, nil
	}
	if d.opts.PlaybooksPath != "" {
		return d.opts.PlaybooksPath, nil
	}
	return d.runner.embedded()
}

// nodeIP is the host of the agent's callback URL: the ramdisk's address.
func nodeIP(n *model.Node) string {
	raw, _ := n.InternalInfo().Get(model.DIIAgentURL).(string)
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// deployVars are the variables of the deploy playbook besides nodes
// (upstream _prepare_variables, _parse_partitioning_info and the RAID
// configuration): image, configdrive, root_device_hints,
// partition_info, raid_config.
func (d *Deploy) deployVars(n *model.Node) (map[string]any, error) {
	image := map[string]any{}
	for k, v := range n.InstanceInfo {
		if name, ok := strings.CutPrefix(k, "image_"); ok {
			image[name] = v
		}
	}
	// A checksum without its algorithm comes from Glance, whose
	// checksum is MD5; ansible's modules want "<algo>:<hex>".
	if sum, ok := image["checksum"].(string); ok && sum != "" && !strings.Contains(sum, ":") {
		image["checksum"] = "md5:" + sum
	}
	image["validate_certs"] = "yes"
	if d.opts.ImageStoreInsecure {
		image["validate_certs"] = "no"
	}
	if d.opts.ImageStoreCafile != "" {
		image["cafile"] = d.opts.ImageStoreCafile
	}
	if d.opts.ImageStoreCertfile != "" && d.opts.ImageStoreKeyfile != "" {
		image["client_cert"] = d.opts.ImageStoreCertfile
		image["client_key"] = d.opts.ImageStoreKeyfile
	}
	if d.opts.TLSMinimumVersion != "" {
		image["tls_minimum_version"] = d.opts.TLSMinimumVersion
	}
	vars := map[string]any{"image": image}
	if cd, ok := n.InstanceInfo["configdrive"].(string); ok && cd != "" {
		if u, err := url.Parse(cd); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			vars["configdrive"] = map[string]any{"type": "url", "location": cd}
		} else {
			loc := filepath.Join(d.opts.Tempdir, n.UUID+".cndrive")
			if err := os.WriteFile(loc, []byte(cd), 0o600); err != nil {
				return nil, fmt.Errorf("write the configdrive for the playbook: %w", err)
			}
			vars["configdrive"] = map[string]any{"type": "file", "location": loc}
		}
	}
	hints, err := rootDeviceHints(n)
	if err != nil {
		return nil, err
	}
	if len(hints) > 0 {
		vars["root_device_hints"] = hints
	}
	if whole, _ := n.InternalInfo().Get("is_whole_disk_image").(bool); !whole {
		vars["partition_info"] = partitionInfo(n)
	}
	if len(n.TargetRAIDConfig) > 0 {
		vars["raid_config"] = n.TargetRAIDConfig
	}
	return vars, nil
}

// partitionInfo is upstream _parse_partitioning_info: the partitions a
// partition image needs, in MiB, root last so that it can grow.
func partitionInfo(n *model.Node) map[string]any {
	label := "msdos"
	if caps, ok := n.InstanceInfo["capabilities"].(map[string]any); ok {
		if l, ok := caps["disk_label"].(string); ok && l != "" {
			label = l
		}
	}
	if l, ok := n.Properties["capabilities"].(string); ok && strings.Contains(l, "disk_label:gpt") && label == "msdos" {
		label = "gpt"
	}
	info := map[string]any{"label": label}
	gpt := label == "gpt"
	parts := map[string]any{}
	end := 1
	add := func(name string, size int) map[string]any {
		start := end
		end += size
		p := map[string]any{"number": len(parts) + 1, "part_start": fmt.Sprintf("%dMiB", start), "part_end": fmt.Sprintf("%dMiB", end)}
		if gpt {
			p["name"] = name
		}
		parts[name] = p
		return p
	}
	if gpt {
		// grub needs a bios_grub partition on GPT.
		add("bios", 1)["flags"] = []string{"bios_grub"}
	}
	if mb := intOf(n.InstanceInfo["ephemeral_mb"]); mb > 0 {
		add("ephemeral", mb)
		info["ephemeral_format"] = n.InstanceInfo["ephemeral_format"]
		info["preserve_ephemeral"] = "no"
		if b, _ := n.InstanceInfo["preserve_ephemeral"].(bool); b {
			info["preserve_ephemeral"] = "yes"
		}
	}
	if mb := intOf(n.InstanceInfo["swap_mb"]); mb > 0 {
		add("swap", mb)
	}
	if cd, _ := n.InstanceInfo["configdrive"].(string); cd != "" {
		add("configdrive", 64)
	}
	root := add("root", intOf(n.InstanceInfo["root_mb"]))
	if !gpt {
		root["flags"] = []string{"boot"}
	}
	info["partitions"] = parts
	return info
}

func intOf(v any) int {
	switch x := v.(type) {
	case float64:
		return int(x)
	case int:
		return x
	case int64:
		return int(x)
	case string:
		i, _ := strconv.Atoi(x)
		return i
	}
	return 0
}

// rootDeviceHints is upstream _parse_root_device_hints: the node's hints
// (instance_info's, else properties'), with "== N" and "s== x" reduced
// to plain values; other operators are refused, ansible matching values
// exactly.
func rootDeviceHints(n *model.Node) (map[string]any, error) {
	raw, ok := n.InstanceInfo["root_device"].(map[string]any)
	if !ok {
		raw, _ = n.Properties["root_device"].(map[string]any)
	}
	out := map[string]any{}
	advanced := map[string]any{}
	for k, v := range raw {
		s, isStr := v.(string)
		switch {
		case !isStr:
			out[k] = v
		case strings.HasPrefix(s, "== "):
			i, err := strconv.Atoi(strings.TrimSpace(s[3:]))
			if err != nil {
				advanced[k] = v
				continue
			}
			out[k] = i
		case strings.HasPrefix(s, "s== "):
			uq, err := url.QueryUnescape(s[4:])
			if err != nil {
				uq = s[4:]
			}
			out[k] = uq
		case isOperator(strings.Fields(s + " x")[0]):
			advanced[k] = v
		default:
			out[k] = s
		}
	}
	if len(advanced) > 0 {
		return nil, errs.New(errs.ClassInvalidParameterValue, map[string]any{"err": fmt.Sprintf(
			"Ansible-deploy does not support advanced root device hints based on oslo.utils operators. Present advanced hints for node %s are %s.", n.UUID, pyfmt.Repr(advanced))})
	}
	return out, nil
}

func isOperator(s string) bool {
	switch s {
	case "==", "!=", ">=", "<=", ">", "<", "s==", "s!=", "s>=", "s<=", "s>", "s<", "<in>", "<or>", "<all-in>":
		return true
	}
	return false
}
