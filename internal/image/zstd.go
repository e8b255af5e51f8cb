package image

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
)

// zstdMagic starts every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// decompressZstd is upstream's _handle_zstd_compression: a downloaded file
// that is zstd-compressed (OCI registries often hold disk images so) is
// decompressed in place with the zstd tool, unless [conductor]/
// disable_zstandard_decompression. A failed decompression keeps the file
// as downloaded, as upstream does; the format checks that follow judge it.
func (f *Fetcher) decompressZstd(ctx context.Context, path string) error {
	if f.Opts.DisableZstdDecompression {
		return nil
	}
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	head := make([]byte, len(zstdMagic))
	_, err = io.ReadFull(file, head)
	file.Close()
	if err != nil || !bytes.Equal(head, zstdMagic) {
		return nil //nolint:nilerr // a file shorter than the magic is not zstd
	}
	compressed := path + ".zstd"
	if err := os.Rename(path, compressed); err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, "zstd", "-d", "-q", "--rm", "-o", path, compressed).CombinedOutput(); err != nil {
		slog.ErrorContext(ctx, "Failed to decompress a zstd compressed file", "path", path, "error", err, "output", string(out))
		_ = os.Remove(path)
		return os.Rename(compressed, path)
	}
	return nil
}
