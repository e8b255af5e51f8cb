package image

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/openkeel/ironic/internal/errs"
)

// rawFormats are the formats written to disk as they are (gpt is a
// whole-disk image).
var rawFormats = []string{"raw", "gpt"}

// IsRawFormat reports whether a detected format needs no conversion.
func IsRawFormat(name string) bool { return slices.Contains(rawFormats, name) }

// Fetcher downloads images to files with checksum verification, format
// safety checks and conversion to raw (upstream's images.fetch,
// image_to_raw and image_cache._fetch).
type Fetcher struct {
	Sources *Sources
	Opts    Options
	// sem bounds concurrent downloads ([DEFAULT]/image_download_concurrency).
	sem chan struct{}
}

// NewFetcher builds a Fetcher.
func NewFetcher(sources *Sources, opts Options) *Fetcher {
	return &Fetcher{Sources: sources, Opts: opts, sem: make(chan struct{}, max(opts.DownloadConcurrency, 1))}
}

// FetchOptions describe what is expected of an image.
type FetchOptions struct {
	// ForceRaw converts the image to raw after download.
	ForceRaw bool
	// ExpectedFormat is the disk_format the image claims; empty asks the
	// image service.
	ExpectedFormat string
	// Checksum and ChecksumAlgo verify the content ("algo:value" form
	// accepted; a bare value without algorithm is md5).
	Checksum     string
	ChecksumAlgo string
	// DisableValidation skips the deep inspection (upstream's caches for
	// kernels and ramdisks).
	DisableValidation bool
	// Reclaim makes room for amount bytes in dir before a conversion to
	// raw (the cache's ReclaimSpace); nil converts without checking.
	Reclaim func(dir string, amount int64) error
}

// Download writes the image at href to path, verifying the checksum
// while streaming when it can and afterwards otherwise; path is removed
// on any failure.
func (f *Fetcher) Download(ctx context.Context, href, path string, o FetchOptions) (err error) {
	defer func() {
		if err != nil {
			os.Remove(path)
		}
	}()
	svc, err := f.Sources.For(href)
	if err != nil {
		return err
	}
	verified := false
	if fs, ok := svc.(*FileService); ok {
		if err := fs.LinkOrCopy(href, path); err != nil {
			return err
		}
	} else {
		out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return downloadFailed(href, err.Error())
		}
		vw := newVerifyingWriter(out, o.Checksum, o.ChecksumAlgo, f.Opts.AllowMD5)
		var w interface{ Write([]byte) (int, error) } = out
		if vw != nil {
			w = vw
		}
		derr := svc.Download(ctx, href, w)
		cerr := out.Close()
		if derr != nil {
			return derr
		}
		if cerr != nil {
			return downloadFailed(href, cerr.Error())
		}
		if vw != nil {
			if !vw.matches() {
				slog.Error("image checksum mismatch during transfer", "image", href)
				return errChecksum()
			}
			verified = true
		}
	}
	if !verified && !f.Opts.DisableFileChecksum && o.Checksum != "" {
		if err := ValidateChecksum(path, o.Checksum, o.ChecksumAlgo); err != nil {
			return err
		}
	}
	return nil
}

// Fetch downloads href to path, checks it and converts it to raw when
// asked (upstream's image_cache._fetch).
func (f *Fetcher) Fetch(ctx context.Context, href, path string, o FetchOptions) error {
	select {
	case f.sem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("fetch %s: %w", href, ctx.Err())
	}
	defer func() { <-f.sem }()

	tmp := path + ".part"
	if err := os.Remove(tmp); err == nil {
		slog.Warn("removed stale partial download", "path", tmp)
	}
	if err := f.Download(ctx, href, tmp, o); err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	if err := f.decompressZstd(ctx, tmp); err != nil {
		return fmt.Errorf("fetch %s: %w", href, err)
	}
	skipInspection := o.DisableValidation || f.Opts.DisableDeepInspection
	format := ""
	if !skipInspection {
		expected := o.ExpectedFormat
		if expected == "" {
			info, err := f.Sources.Show(ctx, href)
			if err != nil {
				return err
			}
			expected = info.DiskFormat
		}
		var err error
		if format, err = SafetyCheckImage(tmp, ""); err != nil {
			return err
		}
		if err := CheckFormatPermitted(f.Opts.PermittedFormats, format, expected, ""); err != nil {
			return err
		}
	}
	convert := false
	if o.ForceRaw {
		if skipInspection {
			fmtName, err := SourceFormat(href, tmp)
			if err != nil {
				return err
			}
			convert = !IsRawFormat(fmtName)
		} else {
			convert = !IsRawFormat(format)
		}
	}
	if convert {
		if err := f.roomForRaw(tmp, o.Reclaim); err != nil {
			return err
		}
		if err := f.ImageToRaw(ctx, href, path, tmp); err != nil {
			return err
		}
		ok = true
		return nil
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("fetch %s: %w", href, err)
	}
	ok = true
	return nil
}

// roomForRaw is upstream's space check before image_to_raw: room for
// the virtual size, else for the size estimated with
// [DEFAULT]/raw_image_growth_factor.
func (f *Fetcher) roomForRaw(tmp string, reclaim func(string, int64) error) error {
	if reclaim == nil {
		return nil
	}
	d, err := DetectFileFormat(tmp)
	if err != nil {
		return errs.New(errs.ClassInvalidImage, nil)
	}
	dir := filepath.Dir(tmp)
	if err := reclaim(dir, d.VirtualSize); err == nil || !errs.Is(err, errs.ClassInsufficientDiskSpace) {
		return err
	}
	estimate := min(int64(float64(d.ActualSize)*f.Opts.RawImageGrowthFactor), d.VirtualSize)
	if err := reclaim(dir, estimate); err != nil {
		if errs.Is(err, errs.ClassInsufficientDiskSpace) {
			slog.Error("not enough space for the estimated image size; consider lowering [DEFAULT]raw_image_growth_factor", "growth_factor", f.Opts.RawImageGrowthFactor)
		}
		return err
	}
	return nil
}

// SourceFormat is upstream's get_source_format.
func SourceFormat(href, path string) (string, error) {
	d, err := DetectFileFormat(path)
	if err != nil {
		slog.Error("parsing of the image failed", "image", href, "error", err)
		return "", errs.New(errs.ClassImageUnacceptable, map[string]any{"image_id": href, "reason": "parsing of the image failed."})
	}
	return d.Name, nil
}

// SafetyCheckImage is upstream's safety_check_image: the detected
// format's name, or InvalidImage when the image cannot be parsed or uses
// a feature that reaches outside the file. node names the node in logs
// ("" for the image cache).
func SafetyCheckImage(path, node string) (string, error) {
	if node == "" {
		node = "image cache"
	}
	d, err := DetectFileFormat(path)
	if err != nil {
		if !errors.Is(err, ErrImageFormat) {
			return "", err
		}
		slog.Error("Security: the image could not be parsed by the format checker", "node", node, "error", err)
		return "", errs.New(errs.ClassInvalidImage, nil)
	}
	if err := d.SafetyCheck(); err != nil {
		slog.Error("Security: the image fails safety checking", "node", node, "error", err)
		return "", errs.New(errs.ClassInvalidImage, nil)
	}
	return d.Name, nil
}

// FormatPermitted is upstream's image_format_permitted: raw permits gpt.
func FormatPermitted(permitted []string, format string) bool {
	if slices.Contains(permitted, "raw") && IsRawFormat(format) {
		return true
	}
	return slices.Contains(permitted, format)
}

// FormatMatches is upstream's image_format_matches: kernels and ramdisks
// (aki, ari) match anything, raw matches gpt.
func FormatMatches(actual, expected string) bool {
	if expected == "ari" || expected == "aki" {
		return true
	}
	if expected == "raw" && IsRawFormat(actual) {
		return true
	}
	return expected == actual
}

// CheckFormatPermitted is upstream's check_if_image_format_is_permitted:
// the format must be in [conductor]/permitted_image_formats and match the
// claimed disk_format when there is one.
func CheckFormatPermitted(permitted []string, format, expected, node string) error {
	if node == "" {
		node = "image cache"
	}
	if !FormatPermitted(permitted, format) {
		slog.Error("Security: the image format is not in [conductor]permitted_image_formats", "node", node, "format", format)
		return errs.New(errs.ClassInvalidImage, nil)
	}
	if expected != "" && !FormatMatches(format, expected) {
		slog.Error("Security: the image format does not match the expected format", "node", node, "format", format, "expected", expected)
		return errs.New(errs.ClassInvalidImage, nil)
	}
	return nil
}

// ImageToRaw is upstream's image_to_raw: inspect tmp, convert it to raw
// with qemu-img unless it is raw or an ISO, check the result is raw, and
// move it to path. tmp is gone afterwards.
func (f *Fetcher) ImageToRaw(ctx context.Context, href, path, tmp string) (err error) {
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	var format string
	if !f.Opts.DisableDeepInspection {
		if format, err = SafetyCheckImage(tmp, ""); err != nil {
			return err
		}
		if !FormatPermitted(f.Opts.PermittedFormats, format) {
			slog.Error("Security: the image format is not in [conductor]permitted_image_formats", "image", href, "format", format)
			return errs.New(errs.ClassInvalidImage, nil)
		}
	} else {
		if format, err = SourceFormat(href, tmp); err != nil {
			return err
		}
		slog.Warn("Security: image safety checking has been disabled", "image", href, "format", format)
	}
	if IsRawFormat(format) || format == "iso" {
		return os.Rename(tmp, path)
	}
	staged := path + ".converted"
	defer func() {
		if err != nil {
			os.Remove(staged)
		}
	}()
	// qemu-img's conversion can take much memory: wait for it to be free.
	if err := f.Opts.Memory.Wait(ctx); err != nil {
		return err
	}
	slog.Debug("converting image to raw", "image", href, "format", format)
	if err := ConvertImage(ctx, f.Opts, tmp, staged, format, "raw"); err != nil {
		return errs.New(errs.ClassImageConvertFailed, map[string]any{"image_id": href, "reason": err.Error()})
	}
	if err := os.Remove(tmp); err != nil {
		return fmt.Errorf("remove %s: %w", tmp, err)
	}
	newFormat, err := SourceFormat(href, staged)
	if err != nil {
		return err
	}
	if !IsRawFormat(newFormat) {
		return errs.New(errs.ClassImageConvertFailed, map[string]any{"image_id": href, "reason": "Converted to raw, but format is now " + newFormat})
	}
	return os.Rename(staged, path)
}
