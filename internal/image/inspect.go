package image

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
)

// The format inspector reads only the headers of a disk image to name
// its format and refuse the features qemu-img would follow to other files
// (backing files, external data files, VMDK extents), as oslo.utils'
// imageutils.format_inspector does. Each inspector answers for the whole
// file at once (the file is at hand), which gives the answers the
// streaming original gives after reading to the end.

// ErrImageFormat is oslo's ImageFormatError: the content cannot be parsed
// or matches several formats.
var ErrImageFormat = errors.New("image format error")

// Detected is the result of format detection.
type Detected struct {
	// Name is qemu-img's name of the format: raw, qcow2, vmdk, vhd,
	// vhdx, vdi, qed, iso, gpt or luks.
	Name string
	// VirtualSize is the size of the disk the image describes, 0 when
	// unknown.
	VirtualSize int64
	// ActualSize is the size of the file.
	ActualSize int64
	safety     func() error
}

// SafetyCheck runs the format's checks; the error lists what failed.
func (d *Detected) SafetyCheck() error {
	if d.safety == nil {
		return nil
	}
	return d.safety()
}

// inspection is one inspector's verdict on a file.
type inspection struct {
	name     string
	match    bool
	complete bool
	// broken is a parse error: the inspector gave up (it may still
	// match on its magic, and then fails its safety check).
	broken      error
	virtualSize int64
	checks      []namedCheck
}

type namedCheck struct {
	name string
	fn   func() error
}

func (in *inspection) safety() error {
	if !in.complete {
		return fmt.Errorf("%w: Incomplete file cannot be safety checked", ErrImageFormat)
	}
	if !in.match {
		return fmt.Errorf("%w: Unable to safety check format %s because content does not match", ErrImageFormat, in.name)
	}
	var failures []string
	for _, c := range in.checks {
		if err := c.fn(); err != nil {
			failures = append(failures, c.name+": "+err.Error())
		}
	}
	if failures != nil {
		return fmt.Errorf("safety checks failed: %s", strings.Join(failures, "; "))
	}
	return nil
}

// region reads length bytes at off; complete is false when the file ends
// before.
func region(r io.ReaderAt, size, off, length int64) ([]byte, bool) {
	if off >= size {
		return nil, false
	}
	n := min(length, size-off)
	buf := make([]byte, n)
	got, _ := r.ReadAt(buf, off)
	buf = buf[:got]
	return buf, int64(got) == length
}

// DetectFileFormat is ironic's detect_file_format: the one format the
// content matches, raw when none; ISO+GPT (a hybrid bootable ISO) is an
// ISO; any other multiple match is an error.
func DetectFileFormat(path string) (*Detected, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", path, err)
	}
	return detect(f, st.Size())
}

func detect(r io.ReaderAt, size int64) (*Detected, error) {
	var matches []*inspection
	for _, insp := range inspectors {
		if in := insp(r, size); in.match {
			matches = append(matches, in)
		}
	}
	sort.Slice(matches, func(i, j int) bool { return matches[i].name < matches[j].name })
	if len(matches) == 2 && matches[0].name == "gpt" && matches[1].name == "iso" {
		matches = matches[1:]
	}
	switch len(matches) {
	case 0:
		return &Detected{Name: "raw", VirtualSize: size, ActualSize: size}, nil
	case 1:
		m := matches[0]
		return &Detected{Name: m.name, VirtualSize: m.virtualSize, ActualSize: size, safety: m.safety}, nil
	}
	names := make([]string, len(matches))
	for i, m := range matches {
		names[i] = m.name
	}
	return nil, fmt.Errorf("%w: Multiple formats detected: %s", ErrImageFormat, strings.Join(names, ","))
}

var inspectors = []func(io.ReaderAt, int64) *inspection{
	inspectQcow2, inspectQED, inspectVHD, inspectVHDX, inspectVMDK, inspectVDI, inspectISO, inspectGPT, inspectLUKS,
}

func violation(msg string) error { return errors.New(msg) }

func inspectQcow2(r io.ReaderAt, size int64) *inspection {
	hdr, ok := region(r, size, 0, 512)
	in := &inspection{name: "qcow2", complete: ok}
	if !ok || !bytes.HasPrefix(hdr, []byte("QFI\xfb")) {
		return in
	}
	in.match = true
	version := binary.BigEndian.Uint32(hdr[4:8])
	in.virtualSize = int64(binary.BigEndian.Uint64(hdr[24:32]))
	features := hdr[0x48 : 0x48+8]
	in.checks = []namedCheck{
		{"backing_file", func() error {
			if binary.BigEndian.Uint64(hdr[8:16]) != 0 {
				return violation("Image has a backing file")
			}
			return nil
		}},
		{"data_file", func() error {
			// Incompatible feature bit 2: external data file.
			if features[7]&0x04 != 0 {
				return violation("Image has data_file set")
			}
			return nil
		}},
		{"unknown_features", func() error {
			switch version {
			case 2:
				return nil
			case 3:
			default:
				return violation("Unsupported qcow2 version")
			}
			// Bits 0-3 are the known incompatible features.
			for i := 0; i < 7; i++ {
				if features[i] != 0 {
					return violation("Unknown QCOW2 features found")
				}
			}
			if features[7]&^0x0f != 0 {
				return violation("Unknown QCOW2 features found")
			}
			return nil
		}},
	}
	return in
}

func inspectQED(r io.ReaderAt, size int64) *inspection {
	hdr, ok := region(r, size, 0, 512)
	in := &inspection{name: "qed", complete: ok}
	in.match = ok && bytes.HasPrefix(hdr, []byte("QED\x00"))
	in.checks = []namedCheck{{"banned", func() error { return violation("This file format is not allowed") }}}
	return in
}

func inspectVHD(r io.ReaderAt, size int64) *inspection {
	hdr, ok := region(r, size, 0, 512)
	in := &inspection{name: "vhd", complete: ok}
	in.match = bytes.HasPrefix(hdr, []byte("conectix"))
	if in.match && ok {
		in.virtualSize = int64(binary.BigEndian.Uint64(hdr[40:48]))
	}
	return in
}

const (
	vhdxMetaRegion      = "8B7CA206-4790-4B9A-B8FE-575F050F886E"
	vhdxVirtualDiskSize = "2FA54224-CD1B-4876-B211-5DBED83BF4B8"
)

func msGUID(b []byte) string {
	return fmt.Sprintf("%08X-%04X-%04X-%02X%02X-%02X%02X%02X%02X%02X%02X",
		binary.LittleEndian.Uint32(b[0:4]), binary.LittleEndian.Uint16(b[4:6]), binary.LittleEndian.Uint16(b[6:8]),
		b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
}

func inspectVHDX(r io.ReaderAt, size int64) *inspection {
	ident, identOK := region(r, size, 0, 32)
	in := &inspection{name: "vhdx"}
	in.match = bytes.HasPrefix(ident, []byte("vhdxfile"))
	hdr, hdrOK := region(r, size, 192*1024, 64*1024)
	in.complete = identOK && hdrOK
	if !in.complete {
		return in
	}
	if binary.LittleEndian.Uint32(hdr[0:4]) != 0x69676572 {
		in.broken = fmt.Errorf("%w: Region signature not found", ErrImageFormat)
		return in
	}
	count := binary.LittleEndian.Uint32(hdr[8:12])
	if count >= 2048 {
		in.broken = fmt.Errorf("%w: Region count is %d (limit 2047)", ErrImageFormat, count)
		return in
	}
	for i := uint32(0); i < count; i++ {
		e := hdr[16+i*32 : 16+i*32+32]
		if msGUID(e[:16]) != vhdxMetaRegion {
			continue
		}
		metaOff := int64(binary.LittleEndian.Uint64(e[16:24]))
		meta, ok := region(r, size, metaOff, 2048*32)
		if !ok {
			in.complete = false
			return in
		}
		if string(meta[:8]) != "metadata" {
			in.broken = fmt.Errorf("%w: Invalid signature for metadata region", ErrImageFormat)
			return in
		}
		n := binary.LittleEndian.Uint16(meta[10:12])
		if n >= 2048 {
			in.broken = fmt.Errorf("%w: Metadata item count is %d (limit 2047)", ErrImageFormat, n)
			return in
		}
		for j := 0; j < int(n); j++ {
			me := meta[32+j*32 : 32+j*32+32]
			if msGUID(me[:16]) != vhdxVirtualDiskSize {
				continue
			}
			itemOff := int64(binary.LittleEndian.Uint32(me[16:20]))
			itemLen := min(int64(binary.LittleEndian.Uint32(me[20:24])), 32*2048)
			vds, ok := region(r, size, metaOff+itemOff, itemLen)
			if !ok {
				in.complete = false
				return in
			}
			if len(vds) >= 8 {
				in.virtualSize = int64(binary.LittleEndian.Uint64(vds[:8]))
			}
			break
		}
		break
	}
	return in
}

func inspectVDI(r io.ReaderAt, size int64) *inspection {
	hdr, ok := region(r, size, 0, 512)
	in := &inspection{name: "vdi", complete: ok}
	if ok && binary.LittleEndian.Uint32(hdr[0x40:0x44]) == 0xbeda107f {
		in.match = true
		in.virtualSize = int64(binary.LittleEndian.Uint64(hdr[0x170:0x178]))
	}
	return in
}

func inspectISO(r io.ReaderAt, size int64) *inspection {
	hdr, ok := region(r, size, 32*1024, 2*1024)
	in := &inspection{name: "iso", complete: ok}
	if !ok {
		return in
	}
	sig := string(hdr[1:6])
	if sig == "CD001" || sig == "NSR02" || sig == "NSR03" {
		in.match = true
		blockSize := int64(binary.LittleEndian.Uint16(hdr[128:130]))
		blocks := int64(binary.LittleEndian.Uint32(hdr[80:84]))
		in.virtualSize = blocks * blockSize
	}
	return in
}

func inspectGPT(r io.ReaderAt, size int64) *inspection {
	mbr, ok := region(r, size, 0, 512)
	in := &inspection{name: "gpt", complete: ok}
	if !ok {
		return in
	}
	// A FAT file system's boot sector carries the same signature; two
	// FATs on a fixed disk tell it apart.
	isFAT := mbr[0x10] == 2 && mbr[0x15] == 0xf8
	in.match = binary.LittleEndian.Uint16(mbr[510:512]) == 0xaa55 && !isFAT
	in.virtualSize = size
	in.checks = []namedCheck{{"mbr", func() error { return checkMBR(mbr) }}}
	return in
}

func checkMBR(mbr []byte) error {
	var valid []int
	foundGPT := false
	for i := 0; i < 4; i++ {
		pte := mbr[446+16*i : 446+16*i+16]
		boot, ostype := pte[0], pte[4]
		if boot != 0x00 && boot != 0x80 {
			return violation(fmt.Sprintf("MBR PTE %d has invalid boot flag", i))
		}
		if ostype != 0 {
			valid = append(valid, i)
		}
		if ostype == 0xee {
			foundGPT = true
			if pte[1] != 0 || pte[2] != 2 || pte[3] != 0 {
				return violation("GPT MBR has invalid start CHS")
			}
			if binary.LittleEndian.Uint32(pte[8:12]) != 1 {
				return violation("GPT MBR has invalid start LBA")
			}
		}
	}
	if foundGPT && !slices.Equal(valid, []int{0}) {
		return violation("GPT MBR defines invalid extra partitions")
	}
	if len(valid) == 0 {
		return violation("GPT MBR has no partitions defined")
	}
	return nil
}

func inspectLUKS(r io.ReaderAt, size int64) *inspection {
	hdr, ok := region(r, size, 0, 592)
	in := &inspection{name: "luks", complete: ok}
	in.match = bytes.HasPrefix(hdr, []byte("LUKS\xba\xbe"))
	if in.match && ok {
		version := binary.BigEndian.Uint16(hdr[6:8])
		in.checks = []namedCheck{{"version", func() error {
			if version != 1 {
				return violation(fmt.Sprintf("LUKS version %d is not supported", version))
			}
			return nil
		}}}
	}
	return in
}

const (
	vmdkDescOffset  = 0x200
	vmdkDescMaxSize = (1 << 20) - 1
	vmdkGDAtEnd     = 0xffffffffffffffff
	// firstChunk is how much ironic's detection reads at once; a
	// text-only VMDK descriptor is judged on it.
	firstChunk = 4096
)

type vmdkSparseHeader struct {
	sig             []byte
	ver             uint32
	descSec, descNr uint64
	gdOffset        uint64
}

func parseVMDKSparse(b []byte) vmdkSparseHeader {
	le := binary.LittleEndian
	return vmdkSparseHeader{
		sig: b[0:4], ver: le.Uint32(b[4:8]),
		descSec: le.Uint64(b[28:36]), descNr: le.Uint64(b[36:44]),
		gdOffset: le.Uint64(b[56:64]),
	}
}

func isPyPrintableOrSpace(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
		if (c >= 0x20 && c < 0x7f) || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f) {
			continue
		}
		return false
	}
	return true
}

func inspectVMDK(r io.ReaderAt, size int64) *inspection {
	in := &inspection{name: "vmdk"}
	hdr, _ := region(r, size, 0, 512)
	var desc []byte
	var sparse *vmdkSparseHeader
	var footer []byte
	switch {
	case len(hdr) < 64:
		// Too short for a sparse header; the header region stays and
		// does not start with KDMV.
		in.complete = false
		return in
	case string(hdr[:4]) == "KDMV":
		in.match = true
		h := parseVMDKSparse(hdr)
		sparse = &h
		in.complete = true
		if h.ver < 1 || h.ver > 3 {
			in.broken = fmt.Errorf("%w: Unsupported format version", ErrImageFormat)
			break
		}
		if h.descSec*512 != vmdkDescOffset {
			in.broken = fmt.Errorf("%w: Wrong descriptor location", ErrImageFormat)
			break
		}
		if h.gdOffset == vmdkGDAtEnd {
			footer, _ = region(r, size, max(size-1536, 0), min(1536, size))
			if len(footer) < 1536 {
				in.complete = false
			}
		}
		descSize := min(int64(h.descNr)*512, vmdkDescMaxSize)
		d, ok := region(r, size, vmdkDescOffset, descSize)
		if !ok {
			in.complete = false
		}
		desc = d
	case isPyPrintableOrSpace(hdr):
		first, _ := region(r, size, 0, firstChunk)
		desc = first
		in.complete = true
	default:
		in.complete = true
		in.broken = fmt.Errorf("%w: Signature KDMV not found", ErrImageFormat)
		return in
	}
	descText, vmdkType, parsed := parseVMDKDescriptor(desc, in.broken == nil)
	if sparse == nil {
		in.match = parsed && vmdkType != "formatnotfound"
	}
	if parsed && (vmdkType == "monolithicsparse" || vmdkType == "streamoptimized") && len(hdr) >= 20 {
		in.virtualSize = int64(binary.LittleEndian.Uint64(hdr[12:20])) * 512
	}
	in.checks = []namedCheck{{"descriptor", func() error { return checkVMDKDescriptor(descText, vmdkType, parsed) }}}
	if sparse != nil && footer != nil {
		h := *sparse
		in.checks = append(in.checks, namedCheck{"footer", func() error { return checkVMDKFooter(h, footer) }})
	}
	return in
}

func parseVMDKDescriptor(desc []byte, ok bool) (text, vmdkType string, parsed bool) {
	if !ok || desc == nil {
		return "", "", false
	}
	if i := bytes.IndexByte(desc, 0); i >= 0 {
		desc = desc[:i]
	}
	for _, c := range desc {
		if c >= 0x80 {
			return "", "", false
		}
	}
	text = strings.ToLower(string(desc))
	const key = `createtype="`
	i := strings.Index(text, key)
	if i < 0 {
		return text, "formatnotfound", true
	}
	start := i + len(key)
	end := strings.Index(text[start:], `"`)
	if end < 0 || end >= 64 {
		// Python's find gives -1 and a negative span, which is < 64:
		// the type is then text[start:-1].
		if end < 0 {
			if len(text)-1 >= start {
				return text, text[start : len(text)-1], true
			}
			return text, "", true
		}
		return text, "formatnotfound", true
	}
	return text, text[start : start+end], true
}

func checkVMDKDescriptor(text, vmdkType string, parsed bool) error {
	if !parsed || text == "" {
		return violation("No descriptor found")
	}
	if vmdkType != "monolithicsparse" && vmdkType != "streamoptimized" {
		return violation("Unsupported subformat")
	}
	var extents []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "ddb"):
		case strings.Contains(line, "=") && !strings.Contains(strings.SplitN(line, "=", 2)[0], " "):
		case slices.Contains([]string{"rw", "rdonly", "noaccess"}, strings.SplitN(line, " ", 2)[0]):
			extents = append(extents, line)
		default:
			return violation("Invalid VMDK descriptor data")
		}
	}
	for _, e := range extents {
		if strings.Contains(e, "/") {
			return violation("Invalid extent filenames found")
		}
	}
	if len(extents) == 0 {
		return violation("No extents found")
	}
	return nil
}

func checkVMDKFooter(h vmdkSparseHeader, footer []byte) error {
	f := parseVMDKSparse(footer[512:1024])
	switch {
	case !bytes.Equal(h.sig, f.sig):
		return violation("Header and footer signature do not match")
	case h.ver != f.ver:
		return violation("Header and footer versions do not match")
	case h.descSec != f.descSec || h.descNr != f.descNr:
		return violation("Footer specifies a different descriptor than header")
	case f.gdOffset == vmdkGDAtEnd:
		return violation("Footer indicates another footer")
	}
	zero := make([]byte, 496)
	le := binary.LittleEndian
	m := footer[:512]
	if le.Uint32(m[8:12]) != 0 || le.Uint32(m[12:16]) != 3 || !bytes.Equal(m[16:], zero) {
		return violation("Footer marker is invalid")
	}
	e := footer[1024:1536]
	if le.Uint64(e[0:8]) != 0 || le.Uint32(e[8:12]) != 0 || le.Uint32(e[12:16]) != 0 || !bytes.Equal(e[16:], zero) {
		return violation("End-of-stream marker is invalid")
	}
	return nil
}
