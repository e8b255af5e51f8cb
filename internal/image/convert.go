package image

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// Resource limits for qemu-img, applied through util-linux's prlimit(1)
// in the child (Go's exec cannot set rlimits between fork and exec);
// upstream does the same through oslo.concurrency's prlimit wrapper.
const (
	// qemuImgInfoAddressSpace and qemuImgInfoCPUSeconds are oslo's limits
	// for qemu-img info.
	qemuImgInfoAddressSpace = 1 << 30
	qemuImgInfoCPUSeconds   = 30
)

func limitedCommand(ctx context.Context, addressSpace int64, cpuSeconds int, name string, args ...string) *exec.Cmd {
	if p, err := exec.LookPath("prlimit"); err == nil {
		pre := []string{}
		if addressSpace > 0 {
			pre = append(pre, "--as="+strconv.FormatInt(addressSpace, 10))
		}
		if cpuSeconds > 0 {
			pre = append(pre, "--cpu="+strconv.Itoa(cpuSeconds))
		}
		pre = append(pre, "--", name)
		return exec.CommandContext(ctx, p, append(pre, args...)...)
	}
	return exec.CommandContext(ctx, name, args...)
}

// ConvertImage runs qemu-img convert -f srcFormat -O outFormat as
// upstream's qemu_img.convert_image: address space limited to
// [disk_utils]/image_convert_memory_limit, three malloc arenas, and
// retried [disk_utils]/image_convert_attempts times when the system was
// short of memory.
func ConvertImage(ctx context.Context, opts Options, src, dst, srcFormat, outFormat string) error {
	attempts := max(opts.ConvertAttempts, 1)
	limit := int64(opts.ConvertMemoryLimitMiB) << 20
	var err error
	for i := 0; i < attempts; i++ {
		cmd := limitedCommand(ctx, limit, 0, "qemu-img", "convert", "-f", srcFormat, "-O", outFormat, src, dst)
		cmd.Env = append(os.Environ(), "MALLOC_ARENA_MAX=3", "LC_ALL=C", "LANG=C")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err = cmd.Run(); err == nil {
			return nil
		}
		msg := stderr.String()
		err = fmt.Errorf("qemu-img convert %s: %w: %s", src, err, strings.TrimSpace(msg))
		if !strings.Contains(msg, "Resource temporarily unavailable") && !strings.Contains(msg, "Cannot allocate memory") {
			return err
		}
		_ = exec.CommandContext(ctx, "sync").Run()
	}
	return err
}

// QemuImgInfo is qemu-img info --output=json of a file, with oslo's
// limits (1 GiB address space, 30 s CPU), read as the given format so a
// hostile header cannot redirect it.
type QemuImgInfo struct {
	Format      string `json:"format"`
	VirtualSize int64  `json:"virtual-size"`
	ActualSize  int64  `json:"actual-size"`
	BackingFile string `json:"backing-filename"`
}

// ImgInfo runs qemu-img info on path.
func ImgInfo(ctx context.Context, path, format string) (*QemuImgInfo, error) {
	args := []string{"info", "--output=json"}
	if format != "" {
		args = append(args, "-f", format)
	}
	args = append(args, path)
	cmd := limitedCommand(ctx, qemuImgInfoAddressSpace, qemuImgInfoCPUSeconds, "qemu-img", args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("qemu-img info %s: %w: %s", path, err, strings.TrimSpace(stderr.String()))
	}
	var info QemuImgInfo
	if err := json.Unmarshal(out, &info); err != nil {
		return nil, fmt.Errorf("qemu-img info %s: %w", path, err)
	}
	return &info, nil
}
