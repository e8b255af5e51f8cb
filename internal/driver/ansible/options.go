package ansible

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/clock"
	"github.com/openkeel/ironic/internal/config"
)

// Options are the [ansible] section and what else the interface reads.
type Options struct {
	// PlaybooksPath is [ansible]/playbooks_path; empty means our embedded
	// playbooks, written to EmbeddedDir on first use.
	PlaybooksPath string
	// EmbeddedDir is where the embedded playbooks are written.
	EmbeddedDir string
	// ConfigFilePath is [ansible]/config_file_path, handed to
	// ansible-playbook as ANSIBLE_CONFIG when set.
	ConfigFilePath string
	// PlaybookScript is [ansible]/ansible_playbook_script.
	PlaybookScript string
	// ExtraArgs is [ansible]/ansible_extra_args, split as a shell would.
	ExtraArgs string
	// Verbosity is [ansible]/verbosity, or 4 under [DEFAULT]/debug when
	// unset (upstream's rule); 0 adds no -v.
	Verbosity int
	// Defaults of the driver_info ansible_* fields.
	DefaultUsername          string
	DefaultKeyFile           string
	DefaultPythonInterpreter string
	DefaultDeployPlaybook    string
	DefaultShutdownPlaybook  string
	// DefaultCleanPlaybook and DefaultCleanStepsConfig are
	// [ansible]/default_clean_playbook and default_clean_steps_config:
	// the playbook each clean step runs (with the step's tags) and the
	// file, beside the playbooks, that declares the clean steps.
	DefaultCleanPlaybook    string
	DefaultCleanStepsConfig string
	// ImageStoreInsecure, ...Cafile, ...Certfile, ...Keyfile are the TLS
	// settings the playbooks download the image with.
	ImageStoreInsecure bool
	ImageStoreCafile   string
	ImageStoreCertfile string
	ImageStoreKeyfile  string
	// TLSMinimumVersion is [DEFAULT]/webserver_tls_minimum_version.
	// Upstream also passes [DEFAULT]/webserver_tls_ciphers, an OpenSSL
	// cipher string this build does not read (see unread.go).
	TLSMinimumVersion string
	// ExtraMemory is [ansible]/extra_memory (MiB added to the image size
	// for the ramdisk's memory requirement).
	ExtraMemory int
	// Tempdir is where a configdrive given inline is written for the
	// playbook to copy ([DEFAULT]/tempdir).
	Tempdir string
	// PowerOffRetries and PowerOffInterval are
	// [ansible]/post_deploy_get_power_state_retries and _retry_interval:
	// how often, how far apart, the power state is read again after the
	// shutdown playbook before the node is powered off out of band.
	PowerOffRetries  int
	PowerOffInterval time.Duration
	// Clock paces those reads; nil is the real clock.
	Clock clock.Clock
}

// upstreamPlaybooksDefault is the default of [ansible]/playbooks_path,
// upstream's package directory, which has no meaning here: it stands for
// our embedded playbooks.
const upstreamPlaybooksDefault = "$pybasedir/drivers/modules/ansible/playbooks"

// OptionsFromConfig reads [ansible].
func OptionsFromConfig(c *config.Config) Options {
	o := Options{
		PlaybooksPath:            c.StringOf(config.AnsiblePlaybooksPath),
		ConfigFilePath:           c.StringOf(config.AnsibleConfigFilePath),
		PlaybookScript:           c.StringOf(config.AnsibleAnsiblePlaybookScript),
		ExtraArgs:                c.StringOf(config.AnsibleAnsibleExtraArgs),
		Verbosity:                c.IntOf(config.AnsibleVerbosity),
		DefaultUsername:          c.StringOf(config.AnsibleDefaultUsername),
		DefaultKeyFile:           c.StringOf(config.AnsibleDefaultKeyFile),
		DefaultPythonInterpreter: c.StringOf(config.AnsibleDefaultPythonInterpreter),
		DefaultDeployPlaybook:    c.StringOf(config.AnsibleDefaultDeployPlaybook),
		DefaultShutdownPlaybook:  c.StringOf(config.AnsibleDefaultShutdownPlaybook),
		DefaultCleanPlaybook:     c.StringOf(config.AnsibleDefaultCleanPlaybook),
		DefaultCleanStepsConfig:  c.StringOf(config.AnsibleDefaultCleanStepsConfig),
		ImageStoreInsecure:       c.BoolOf(config.AnsibleImageStoreInsecure),
		ImageStoreCafile:         c.StringOf(config.AnsibleImageStoreCafile),
		ImageStoreCertfile:       c.StringOf(config.AnsibleImageStoreCertfile),
		ImageStoreKeyfile:        c.StringOf(config.AnsibleImageStoreKeyfile),
		TLSMinimumVersion:        c.StringOf(config.DefaultWebserverTLSMinimumVersion),
		ExtraMemory:              c.IntOf(config.AnsibleExtraMemory),
		Tempdir:                  c.StringOf(config.DefaultTempdir),
		PowerOffRetries:          c.IntOf(config.AnsiblePostDeployGetPowerStateRetries),
		PowerOffInterval:         time.Duration(c.IntOf(config.AnsiblePostDeployGetPowerStateRetryInterval)) * time.Second,
	}
	if !c.IsSetOf(config.AnsibleVerbosity) && c.BoolOf(config.DefaultDebug) {
		o.Verbosity = 4
	}
	if strings.Contains(o.PlaybooksPath, "$pybasedir") || o.PlaybooksPath == upstreamPlaybooksDefault {
		o.PlaybooksPath = ""
	}
	base := c.StringOf(config.DefaultStatePath)
	if base == "" || strings.Contains(base, "$pybasedir") {
		base = o.Tempdir
	}
	o.EmbeddedDir = filepath.Join(base, "openkeel-ansible-playbooks")
	// The default ansible.cfg is upstream's, beside its playbooks: ours
	// is beside ours.
	if strings.Contains(o.ConfigFilePath, "$pybasedir") {
		o.ConfigFilePath = filepath.Join(o.EmbeddedDir, "ansible.cfg")
	}
	return o
}
