package agentclient

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/swift"
)

// DeployLogs are the [agent]/deploy_logs_* options: when the ramdisk's
// logs are fetched (log.collect_system_logs) and where they are kept.
type DeployLogs struct {
	// Collect is always, on_failure or never.
	Collect string
	// StorageBackend is local or swift.
	StorageBackend string
	// LocalPath is the directory of the local backend.
	LocalPath string
	// SwiftContainer and SwiftDaysToExpire are where the swift backend
	// uploads and after how many days Swift deletes the upload.
	SwiftContainer    string
	SwiftDaysToExpire int
	// Swift is the swift backend's object store.
	Swift ObjectStore
}

// ObjectStore uploads files (internal/swift's Client).
type ObjectStore interface {
	CreateObject(ctx context.Context, container, obj string, data []byte, headers map[string]string) error
}

// DeployLogsFromConfig reads the [agent]/deploy_logs_* options; the swift
// backend uploads with the [swift] section's credentials.
func DeployLogsFromConfig(c *config.Config) DeployLogs {
	d := DeployLogs{
		Collect:           c.StringOf(config.AgentDeployLogsCollect),
		StorageBackend:    c.StringOf(config.AgentDeployLogsStorageBackend),
		LocalPath:         c.StringOf(config.AgentDeployLogsLocalPath),
		SwiftContainer:    c.StringOf(config.AgentDeployLogsSwiftContainer),
		SwiftDaysToExpire: c.IntOf(config.AgentDeployLogsSwiftDaysToExpire),
	}
	if d.StorageBackend == "swift" {
		d.Swift = swift.FromConfig(c)
	}
	return d
}

// Values of [agent]/deploy_logs_collect.
const (
	LogsAlways    = "always"
	LogsOnFailure = "on_failure"
	LogsNever     = "never"
)

// DeployLogsCollect is [agent]/deploy_logs_collect; callers decide from
// it whether a success (always) or a failure (on_failure or always)
// collects the logs.
func (c *Client) DeployLogsCollect() string { return c.opts.DeployLogs.Collect }

// RamdiskLogsFileName is upstream get_ramdisk_logs_file_name:
// <uuid>[_<name>][_<instance_uuid>][_<label>]_<UTC time>.tar.gz.
func (c *Client) RamdiskLogsFileName(tgt Target, label string) string {
	fields := []string{tgt.NodeUUID}
	if tgt.NodeName != "" {
		fields = append(fields, tgt.NodeName)
	}
	if tgt.InstanceUUID != "" {
		fields = append(fields, tgt.InstanceUUID)
	}
	if label != "" {
		fields = append(fields, label)
	}
	fields = append(fields, c.opts.now().UTC().Format("2006-01-02-15-04-05"))
	return strings.Join(fields, "_") + ".tar.gz"
}

// CollectRamdiskLogs is upstream collect_ramdisk_logs: unless
// deploy_logs_collect is never, the agent is asked for its logs and they
// are stored under the storage backend; label (a flow such as "cleaning")
// goes into the file name. Failing to collect or store is logged, never
// returned: the flow that asked goes on as it would have.
func (c *Client) CollectRamdiskLogs(ctx context.Context, tgt Target, label string) {
	if c.opts.DeployLogs.Collect == LogsNever {
		return
	}
	log := c.opts.log()
	res, err := c.CollectSystemLogs(ctx, tgt)
	if err != nil {
		log.ErrorContext(ctx, fmt.Sprintf("Failed to invoke collect_system_logs agent command for node %s. Error: %s", tgt.NodeUUID, err), "node", tgt.NodeUUID)
		return
	}
	logs, _ := res.ResultMap()["system_logs"].(string)
	if res.Status == StatusFailed || logs == "" {
		log.ErrorContext(ctx, fmt.Sprintf("Failed to collect logs from the node %s deployment. Error: %v", tgt.NodeUUID, CommandError(res)), "node", tgt.NodeUUID)
		return
	}
	if err := c.storeRamdiskLogs(ctx, tgt, logs, label); err != nil {
		log.ErrorContext(ctx, fmt.Sprintf("Failed to store the logs from the node %s deployment. Error: %s", tgt.NodeUUID, err), "node", tgt.NodeUUID)
	}
}

// storeRamdiskLogs is upstream store_ramdisk_logs.
func (c *Client) storeRamdiskLogs(ctx context.Context, tgt Target, logs, label string) error {
	data, err := base64.StdEncoding.DecodeString(logs)
	if err != nil {
		return fmt.Errorf("decode the logs archive: %w", err)
	}
	name := c.RamdiskLogsFileName(tgt, label)
	switch c.opts.DeployLogs.StorageBackend {
	case "local":
		dir := c.opts.DeployLogs.LocalPath
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return fmt.Errorf("create %s: %w", dir, err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o640); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		c.opts.log().Info("stored the ramdisk logs", "node", tgt.NodeUUID, "path", path)
		return nil
	case "swift":
		d := c.opts.DeployLogs
		if d.Swift == nil {
			return fmt.Errorf("cannot upload %s: no Swift client for deploy_logs_storage_backend swift", name)
		}
		// Swift deletes the logs once they are this old.
		expire := strconv.Itoa(d.SwiftDaysToExpire * 86400)
		if err := d.Swift.CreateObject(ctx, d.SwiftContainer, name, data, map[string]string{"X-Delete-After": expire}); err != nil {
			return err
		}
		c.opts.log().InfoContext(ctx, fmt.Sprintf("Ramdisk logs were stored in swift for node %s", tgt.NodeUUID), "node", tgt.NodeUUID, "container", d.SwiftContainer, "object", name)
		return nil
	}
	return fmt.Errorf("unknown deploy_logs_storage_backend %q", c.opts.DeployLogs.StorageBackend)
}
