package anaconda

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"strings"
	"text/template"

	"github.com/openkeel/ironic/internal/errs"
)

// defaultTemplate is our kickstart template, written to upstream's
// ks.cfg.template contract: the same ks_options variables, the same
// heartbeats at the same points of the installation.
//
//go:embed ks.cfg.tmpl
var defaultTemplate string

// Kickstart is upstream's ks_options, what a kickstart template is
// rendered with (build_kickstart_config_options).
type Kickstart struct {
	// LiveimgURL is instance_info image_url: the image (or, with
	// IsSourceAPath, the installation tree) the installer installs.
	LiveimgURL string
	// IsSourceAPath: image_source names a directory, not an image.
	IsSourceAPath bool
	// InsecureHeartbeat is [anaconda]/insecure_heartbeat: the heartbeat
	// calls do not verify the API's certificate.
	InsecureHeartbeat bool
	// AgentToken authenticates the installer's heartbeats.
	AgentToken string
	// HeartbeatURL is <Ironic API URL>/v1/heartbeat/<node uuid>.
	HeartbeatURL string
	// ConfigDrive is the configuration drive as kickstart %post sections.
	ConfigDrive string
}

// options is the ks_options mapping templates see. The two flags are
// present only when set, as upstream's templates test them by membership
// ('is_source_a_path' in ks_options); ours test them with index, which
// is false for a missing key.
func (k Kickstart) options() map[string]string {
	o := map[string]string{
		"liveimg_url":   k.LiveimgURL,
		"agent_token":   k.AgentToken,
		"heartbeat_url": k.HeartbeatURL,
		"config_drive":  k.ConfigDrive,
	}
	if k.IsSourceAPath {
		o["is_source_a_path"] = "true"
	}
	if k.InsecureHeartbeat {
		o["insecure_heartbeat"] = "true"
	}
	return o
}

// DefaultTemplate reports whether path names the template shipped with
// the service: empty, or upstream's default under $pybasedir, which has
// no meaning here.
func DefaultTemplate(path string) bool {
	return path == "" || strings.Contains(path, "$pybasedir")
}

// TemplateText is the text of the kickstart template at path, or of ours
// for the default.
func TemplateText(path string) (string, error) {
	if DefaultTemplate(path) {
		return defaultTemplate, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read kickstart template: %w", err)
	}
	return string(b), nil
}

// Render executes a kickstart template (Go text/template syntax, with
// upstream's variable names under .ks_options). A variable the options
// lack is an error, as a typo would otherwise render as an empty URL.
func Render(text string, k Kickstart) ([]byte, error) {
	t, err := template.New("ks.cfg").Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("parse kickstart template: %w", err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, map[string]any{"ks_options": k.options()}); err != nil {
		return nil, fmt.Errorf("render kickstart template: %w", err)
	}
	return buf.Bytes(), nil
}

// ValidateTemplate is upstream validate_kickstart_template: the template
// renders with placeholder options, and every required option shows in
// the result; InvalidKickstartTemplate otherwise. It answers the
// rendered placeholder kickstart.
func ValidateTemplate(text string) ([]byte, error) {
	probe := Kickstart{LiveimgURL: "fake_image_url", AgentToken: "fake_token", HeartbeatURL: "fake_heartbeat_url"}
	required := []struct{ name, value string }{
		{"liveimg_url", probe.LiveimgURL}, {"agent_token", probe.AgentToken}, {"heartbeat_url", probe.HeartbeatURL},
	}
	out, err := Render(text, probe)
	if err != nil {
		// Upstream lists its placeholder options in this order.
		names := []string{"liveimg_url", "agent_token", "config_drive", "heartbeat_url"}
		return nil, errs.NewMessage(errs.ClassInvalidKickstartTemplate, fmt.Sprintf(
			"The kickstart template includes a variable that is not a valid kickstart option. Rendering the template returned  %s. The valid options are %s.",
			err, strings.Join(names, ",")))
	}
	var missing []string
	for _, r := range required {
		if !bytes.Contains(out, []byte(r.value)) {
			missing = append(missing, r.name)
		}
	}
	if len(missing) > 0 {
		return nil, errs.NewMessage(errs.ClassInvalidKickstartTemplate, fmt.Sprintf(
			"Following required kickstart option variables are missing from the kickstart template: %s.", strings.Join(missing, ",")))
	}
	return out, nil
}
