package pxe

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/anaconda"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// The files of a kickstart boot under http_root/<node uuid>: the
// installer fetches them over HTTP (upstream get_file_path_from_label).
const (
	ksTemplateFile = "ks.cfg.template"
	ksConfigFile   = "ks.cfg"
	stage2File     = "LiveOS/squashfs.img"
)

// validateKickstart is the kickstart part of upstream _validate_common:
// the installer reads its files from the HTTP server, and a template must
// be configured.
func (b *Boot) validateKickstart(n *model.Node) error {
	if bootOption(n) != "kickstart" {
		return nil
	}
	if b.opts.HTTPURL == "" || b.opts.HTTPRoot == "" {
		return errs.NewMessage(errs.ClassMissingParameterValue, "'kickstart' boot option is set on the node but no HTTP URL or HTTP root was specified")
	}
	if b.opts.Kickstart.NoDefaultKSTemplate {
		return errs.NewMessage(errs.ClassMissingParameterValue, "'kickstart' boot option is set on the node but no default kickstart template is specified")
	}
	return nil
}

// validateKickstartImage is upstream validate_image_properties for the
// kickstart boot: a Glance image names its kernel, ramdisk and stage2;
// any other image needs the kernel and ramdisk in instance_info; an
// installation tree (a path) needs nothing more.
func (b *Boot) validateKickstartImage(ctx context.Context, n *model.Node) error {
	src := strField(n.InstanceInfo, "image_source")
	if isSourceAPath(n) || strField(n.InstanceInfo, "boot_iso") != "" {
		return nil
	}
	if wd, _ := n.InternalInfo().Bool(model.DIIIsWholeDiskImage); wd {
		return nil
	}
	var missing []string
	if image.IsGlanceImage(src) {
		props, err := b.imageProperties(ctx, src)
		if err != nil {
			return err
		}
		for _, p := range []string{"kernel_id", "ramdisk_id", "stage2_id"} {
			if strField(props, p) == "" {
				missing = append(missing, p)
			}
		}
	} else {
		for _, p := range []string{"kernel", "ramdisk"} {
			if strField(n.InstanceInfo, p) == "" {
				missing = append(missing, p)
			}
		}
	}
	if len(missing) > 0 {
		return errs.NewMessage(errs.ClassMissingParameterValue, fmt.Sprintf("Image %s is missing the following properties: %s", src, strings.Join(missing, ", ")))
	}
	return nil
}

// isSourceAPath: the deployment installs from a directory (an
// installation tree), flagged by the deploy interface's prepare.
func isSourceAPath(n *model.Node) bool {
	v, _ := n.InternalInfo().Bool(model.DIIIsSourceAPath)
	return v
}

// kickstartImages is upstream get_instance_image_info for the kickstart
// boot: the kernel and ramdisk (instance_info, else the image's
// kernel_id and ramdisk_id, then kept in instance_info), the stage2 image
// unless installing from a tree, and the kickstart template. The stage2
// and template chosen are kept in driver_internal_info, so that a later
// change of instance_info does not swap them mid-deployment.
func (b *Boot) kickstartImages(ctx context.Context, n *model.Node) (kernel, ramdisk, stage2, ksTemplate string, err error) {
	isap := isSourceAPath(n)
	src := strField(n.InstanceInfo, "image_source")
	var props map[string]any
	imageProps := func() (map[string]any, error) {
		if props == nil && !isap {
			p, err := b.imageProperties(ctx, src)
			if err != nil {
				return nil, err
			}
			props = p
		}
		return props, nil
	}
	kernel, ramdisk = strField(n.InstanceInfo, "kernel"), strField(n.InstanceInfo, "ramdisk")
	if kernel == "" || ramdisk == "" {
		p, err := imageProps()
		if err != nil {
			return "", "", "", "", err
		}
		kernel, ramdisk = strField(p, "kernel_id"), strField(p, "ramdisk_id")
		n.InstanceInfo["kernel"], n.InstanceInfo["ramdisk"] = kernel, ramdisk
	}
	ii := n.InternalInfo()
	if !isap {
		stage2 = ii.String(anaconda.DIIStage2)
		if stage2 == "" {
			stage2 = strField(n.InstanceInfo, "stage2")
		}
		if stage2 == "" {
			p, err := imageProps()
			if err != nil {
				return "", "", "", "", err
			}
			if stage2 = strField(p, "stage2_id"); stage2 == "" {
				return "", "", "", "", errs.NewMessage(errs.ClassImageUnacceptable, fmt.Sprintf(
					"'stage2_id' is missing from the properties of the OS image %s. The anaconda deploy interface requires this to be set with the OS image or in instance_info['stage2']. ", src))
			}
		}
		ii.Set(anaconda.DIIStage2, stage2)
	}
	ksTemplate = strField(n.InstanceInfo, "ks_template")
	if ksTemplate == "" {
		p, err := imageProps()
		if err != nil {
			return "", "", "", "", err
		}
		ksTemplate = strField(p, "ks_template")
	}
	if ksTemplate == "" {
		ksTemplate = defaultKSTemplateRef(b.opts.Kickstart.DefaultKSTemplate)
	}
	ii.Set(anaconda.DIIKSTemplate, ksTemplate)
	return kernel, ramdisk, stage2, ksTemplate, nil
}

// defaultKSTemplateRef is the reference recorded for the default
// template: file://<absolute path>, as upstream records it; for ours,
// upstream's default name, which TemplateText resolves to the embedded
// text.
func defaultKSTemplateRef(path string) string {
	if path == "" {
		return "file://$pybasedir/drivers/modules/ks.cfg.template"
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return "file://" + abs
}

// prepareKickstartInstance is upstream prepare_instance for the
// kickstart boot: the installer's kernel and ramdisk go to the node's
// folder and its stage2 and kickstart to the HTTP root; the kickstart is
// rendered with a new pregenerated agent token for the installer's
// heartbeats; the boot configuration (written unless one is there) boots
// its boot_anaconda entry, from the network, persistently.
func (b *Boot) prepareKickstartInstance(ctx context.Context, task *driver.Task) error {
	n := task.Node
	kernel, ramdisk, stage2, ksRef, err := b.kickstartImages(ctx, n)
	if err != nil {
		return err
	}
	httpDir := filepath.Join(b.opts.HTTPRoot, n.UUID)
	for _, d := range []string{b.nodeDir(n), filepath.Join(httpDir, filepath.Dir(stage2File))} {
		if err := os.MkdirAll(d, b.opts.DirPermission); err != nil {
			return fmt.Errorf("kickstart boot directory of node %s: %w", n.UUID, err)
		}
	}
	files := []instanceImage{{"kernel", kernel}, {"ramdisk", ramdisk}}
	for _, img := range files {
		if err := b.fetch(ctx, img.href, filepath.Join(b.nodeDir(n), img.label)); err != nil {
			return err
		}
	}
	if stage2 != "" {
		if err := b.fetch(ctx, stage2, filepath.Join(httpDir, stage2File)); err != nil {
			return err
		}
	}
	tmplPath := filepath.Join(httpDir, ksTemplateFile)
	if err := b.placeKSTemplate(ctx, ksRef, tmplPath); err != nil {
		return err
	}
	if err := b.writeKickstart(ctx, task, tmplPath, filepath.Join(httpDir, ksConfigFile)); err != nil {
		return err
	}
	if err := b.updateDHCP(ctx, task); err != nil {
		return err
	}
	cfg := b.configPath(n)
	if _, err := os.Stat(cfg); errors.Is(err, fs.ErrNotExist) {
		opts, err := b.instanceOptions(n, files)
		if err != nil {
			return err
		}
		base := strings.TrimRight(b.opts.HTTPURL, "/") + "/" + n.UUID
		opts["ks_cfg_url"] = base + "/" + ksConfigFile
		opts["ks_template_path"] = base + "/" + ksTemplateFile
		if stage2 != "" {
			// The installer finds LiveOS/squashfs.img under this URL.
			opts["stage2_url"] = base
		} else {
			// An installation tree: the installer reads its .treeinfo.
			opts["repo_url"] = strField(n.InstanceInfo, "image_source")
		}
		if err := b.writeConfig(ctx, task, opts); err != nil {
			return err
		}
	} else if err != nil {
		return fmt.Errorf("boot configuration of node %s: %w", n.UUID, err)
	}
	if err := b.switchConfig(n, "boot_anaconda"); err != nil {
		return err
	}
	if n.ProvisionState == states.Active || n.ProvisionState == states.Adopting {
		return nil
	}
	return b.setNetworkBoot(ctx, task, true)
}

// placeKSTemplate puts the kickstart template at dest: ours for the
// default, else the file, URL or image the reference names. It is then
// checked as upstream's validate_kickstart_template does.
func (b *Boot) placeKSTemplate(ctx context.Context, ref, dest string) error {
	path := strings.TrimPrefix(ref, "file://")
	switch {
	case strings.HasPrefix(ref, "file://") && anaconda.DefaultTemplate(path):
		text, err := anaconda.TemplateText("")
		if err != nil {
			return err
		}
		if err := writeFile(dest, []byte(text), b.opts.FilePermission); err != nil {
			return err
		}
	case ref == defaultKSTemplateRef(b.opts.Kickstart.DefaultKSTemplate):
		// The operator's configured template is read as it is, not
		// through the image service's allowed paths.
		text, err := anaconda.TemplateText(b.opts.Kickstart.DefaultKSTemplate)
		if err != nil {
			return err
		}
		if err := writeFile(dest, []byte(text), b.opts.FilePermission); err != nil {
			return err
		}
	default:
		if err := b.fetch(ctx, ref, dest); err != nil {
			return err
		}
	}
	text, err := anaconda.TemplateText(dest)
	if err != nil {
		return err
	}
	probe, err := anaconda.ValidateTemplate(text)
	if err != nil {
		return err
	}
	return b.validateKickstartFile(ctx, probe)
}

// validateKickstartFile is upstream validate_kickstart_file: pykickstart's
// ksvalidator checks the rendered kickstart when it is installed; without
// it there is no check, as upstream (which also logs a warning).
func (b *Boot) validateKickstartFile(ctx context.Context, ks []byte) error {
	tool, err := exec.LookPath("ksvalidator")
	if err != nil {
		return nil
	}
	f, err := os.CreateTemp("", "ks-*.cfg")
	if err != nil {
		return fmt.Errorf("kickstart validation file: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(ks); err != nil {
		f.Close()
		return fmt.Errorf("kickstart validation file: %w", err)
	}
	f.Close()
	if out, err := exec.CommandContext(ctx, tool, f.Name()).CombinedOutput(); err != nil {
		return errs.NewMessage(errs.ClassInvalidKickstartFile, fmt.Sprintf(
			"The kickstart file generated does not pass validation. The ksvalidator tool returned the following error: %s %s", err, strings.TrimSpace(string(out))))
	}
	return nil
}

// writeKickstart is upstream prepare_instance_kickstart_config: the
// template rendered with the node's ks_options into the kickstart.
func (b *Boot) writeKickstart(ctx context.Context, task *driver.Task, tmplPath, dest string) error {
	n := task.Node
	k := b.opts.Kickstart
	token, err := newAgentToken()
	if err != nil {
		return err
	}
	n.InternalInfo().SetAgentToken(token)
	n.InternalInfo().Set(model.DIIAgentSecretTokenPregenerated, true)
	liveimg := strField(n.InstanceInfo, "image_url")
	if liveimg == "" {
		return errs.NewMessage(errs.ClassInstanceDeployFailure, fmt.Sprintf("Node %s has no image_url in instance_info to install from", n.UUID))
	}
	if k.APIURL == nil {
		return errs.NewMessage(errs.ClassInvalidParameterValue, "Couldn't get the URL of the Ironic API service from the configuration file or keystone catalog.")
	}
	api, err := k.APIURL(ctx)
	if err != nil {
		return err
	}
	cd, err := anaconda.ConfigDriveSections(ctx, k.HTTPClient, n)
	if err != nil {
		return err
	}
	text, err := anaconda.TemplateText(tmplPath)
	if err != nil {
		return err
	}
	out, err := anaconda.Render(text, anaconda.Kickstart{
		LiveimgURL: liveimg, IsSourceAPath: isSourceAPath(n), InsecureHeartbeat: k.InsecureHeartbeat,
		AgentToken: token, HeartbeatURL: strings.TrimRight(api, "/") + "/v1/heartbeat/" + n.UUID, ConfigDrive: cd,
	})
	if err != nil {
		return err
	}
	return writeFile(dest, out, b.opts.FilePermission)
}

// newAgentToken is upstream add_secret_token's secrets.token_urlsafe().
func newAgentToken() (string, error) {
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("generate agent token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(buf), nil
}
