package conductor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// storeAgentCertificate is upstream store_agent_certificate: the CA a
// heartbeat sends (agent_verify_ca, IPA's auto-TLS certificate) is
// written to [agent]/certificates_path/<uuid>.crt and its path is what
// driver_internal_info keeps and the agent client trusts. A ramdisk that
// sends another certificate than the one on file is refused, unless the
// file is gone (another conductor took the node over).
func (c *Conductor) storeAgentCertificate(n *model.Node, pem string) (string, error) {
	if existing := n.InternalInfo().String(model.DIIAgentVerifyCA); existing != "" {
		data, err := os.ReadFile(existing)
		switch {
		case err == nil && strings.TrimSpace(string(data)) != strings.TrimSpace(pem):
			c.log.Error("content mismatch for agent_verify_ca", "node", n.UUID)
			return "", errs.InvalidParameterValue(`Detected change in ramdisk provided "agent_verify_ca"`)
		case err == nil:
			return existing, nil
		case !os.IsNotExist(err):
			return "", fmt.Errorf("read the agent certificate of node %s: %w", n.UUID, err)
		}
		c.log.Info("current agent_verify_ca was not found, assuming take over and storing", "node", n.UUID)
	}
	dir := c.cfg.StringOf(config.AgentCertificatesPath)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s for agent certificates: %w", dir, err)
	}
	path := filepath.Join(dir, n.UUID+".crt")
	if err := os.WriteFile(path, []byte(pem), 0o644); err != nil {
		return "", fmt.Errorf("save the agent certificate of node %s: %w", n.UUID, err)
	}
	return path, nil
}
