package inspection_test

import (
	"encoding/json"
	"testing"

	"github.com/openkeel/ironic/internal/inspection"
)

// rootDisks are IPA-reported block devices: a 465.76 GiB SATA disk, an
// exactly 1 TiB SSD and a 894.25 GiB NVMe drive without a vendor.
const rootDisks = `{"disks": [
 {"name": "/dev/sda", "size": 500107862016, "model": "QEMU HARDDISK", "serial": "S1", "vendor": "ATA", "wwn": null, "rotational": true, "hctl": "0:0:0:0", "by_path": "/dev/disk/by-path/pci-0000:00:1f.2-ata-1"},
 {"name": "/dev/sdb", "size": 1099511627776, "model": "Samsung SSD 860", "serial": "S3Z9NB0K123", "vendor": "ATA", "wwn": "0x5002538e40000001", "rotational": false, "hctl": "1:0:0:0"},
 {"name": "/dev/nvme0n1", "size": 960197124096, "model": "SAMSUNG MZQL2960HCJR-00A07", "serial": "S64FNE0R800001", "vendor": null, "wwn": "eui.36344630528000010025384100000001", "rotational": false}
]}`

// TestRootDeviceHints checks hint matching as upstream's
// match_root_device_hints and oslo.utils specs_matcher decide it.
func TestRootDeviceHints(t *testing.T) {
	picked := func(name string, localGB int) map[string]string {
		return map[string]string{"root_disk": "name=" + name, "local_gb": jsonOf(localGB)}
	}
	invalid := func(hints, msg string) string {
		return "Failed to inspect hardware. Reason: No disks could be found using root device hints " + hints + " for node " + nodeUUID + " because they failed to validate. Error: " + msg
	}
	none := "Failed to inspect hardware. Reason: No disks satisfied root device hints for node " + nodeUUID
	cases := []struct {
		hints   string
		skip    string
		want    map[string]string
		wantErr string
	}{
		{hints: `{"size": 1024}`, want: picked("/dev/sdb", 1023)},
		// Sizes compare in fractional GiB: 465 is not 465.76.
		{hints: `{"size": 465}`, wantErr: none},
		{hints: `{"size": ">= 900"}`, want: picked("/dev/sdb", 1023)},
		{hints: `{"size": "<range-in> [ 800 1000 ]"}`, want: picked("/dev/nvme0n1", 893)},
		{hints: `{"size": "<range-in> ( 894 895 )"}`, want: picked("/dev/nvme0n1", 893)},
		{hints: `{"model": "samsung ssd 860"}`, want: picked("/dev/sdb", 1023)},
		{hints: `{"model": "<in> samsung"}`, want: picked("/dev/sdb", 1023)},
		{hints: `{"serial": "<or> s64fne0r800001 <or> S1"}`, want: picked("/dev/sda", 464)},
		{hints: `{"rotational": false}`, want: picked("/dev/sdb", 1023)},
		{hints: `{"rotational": "no", "size": "< 1000"}`, want: picked("/dev/nvme0n1", 893)},
		{hints: `{"wwn": "0x5002538E40000001"}`, want: picked("/dev/sdb", 1023)},
		{hints: `{"vendor": "ata", "rotational": false}`, want: picked("/dev/sdb", 1023)},
		{hints: `{"name": "/dev/nvme0n1"}`, want: picked("/dev/nvme0n1", 893)},
		{hints: `{"hctl": "1:0:0:0"}`, want: picked("/dev/sdb", 1023)},
		{hints: `{"by_path": "/dev/disk/by-path/pci-0000:00:1f.2-ata-1"}`, want: picked("/dev/sda", 464)},
		{hints: `{"vendor": "s!= ata"}`, want: picked("/dev/nvme0n1", 893)},
		{hints: `{"model": "s>= samsung"}`, want: picked("/dev/sdb", 1023)},
		// A missing attribute compares as the text "none".
		{hints: `{"size": ">= 100", "wwn": "none"}`, want: picked("/dev/sda", 464)},
		{hints: `{"wwn": "abc"}`, wantErr: none},
		{hints: `{"size": "== 1024", "model": "qemu harddisk"}`, wantErr: none},
		{hints: `{"rotational": false}`, skip: `[{"name": "/dev/sdb"}]`, want: picked("/dev/nvme0n1", 893)},
		{hints: `{"size": "foo"}`, wantErr: invalid("{'size': 'foo'}", `Root device hint "size" is not an integer value. Current value: foo`)},
		{hints: `{"size": "<range-in> [800 1000]"}`, wantErr: invalid("{'size': '<range-in> [800 1000]'}", `Root device hint "size" is not an integer value. Current value: <range-in> [800 1000]`)},
		{hints: `{"colour": "red", "size": 1}`, wantErr: invalid("{'colour': 'red', 'size': 1}", `The hints "colour" are invalid. Valid hints are: "size, model, wwn, serial, vendor, wwn_with_extension, wwn_vendor_extension, name, rotational, hctl, by_path"`)},
		{hints: `{"size": 0}`, wantErr: invalid("{'size': 0}", `Root device hint "size" should be a positive integer. Current value: 0`)},
		{hints: `{"rotational": "maybe"}`, wantErr: invalid("{'rotational': 'maybe'}", `Root device hint "rotational" is not a Boolean value. Current value: maybe`)},
		{hints: `{"model": 5}`, wantErr: invalid("{'model': 5}", `Root device hint "model" is not a string value. Hint expression: 5`)},
		{hints: `{"serial": ""}`, wantErr: invalid("{'serial': ''}", `Root device hint "serial" expression is empty`)},
		{hints: `{"size": "<in> 10"}`, wantErr: invalid("{'size': '<in> 10'}", `argument of type 'float' is not iterable`)},
		{hints: `{"model": "> 5"}`, wantErr: invalid("{'model': '> 5'}", `could not convert string to float: 'qemu%20harddisk'`)},
		{hints: `{"size": "<range-in> ( 895 894 )"}`, wantErr: invalid("{'size': '<range-in> ( 895 894 )'}", `<range-in> operator's first argument has to be smaller or equal to the second argument EG"range_in  ( 10 20 ] "`)},
		{hints: `{"size": "<range-in> { 800 1000 ]"}`, wantErr: invalid("{'size': '<range-in> { 800 1000 ]'}", `The first element should be an opening bracket ("(" or "[")`)},
		{hints: `{"size": "<all-in> 1"}`, wantErr: invalid("{'size': '<all-in> 1'}", `malformed node or string: 465.7617416381836`)},
	}
	for _, c := range cases {
		t.Run(c.hints+c.skip, func(t *testing.T) {
			tg := newTarget()
			tg.node.Properties["root_device"] = decodeValue(t, c.hints)
			if c.skip != "" {
				tg.node.Properties["skip_block_devices"] = decodeValue(t, c.skip)
			}
			pd := map[string]any{"root_disk": map[string]any{"name": "/dev/sda", "size": 500107862016.0}}
			err := runHooks(t, tg, "root-device", inspection.DefaultHookOptions(), decode(t, rootDisks), pd)
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("error =\n%v\nwant\n%s", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			disk, _ := pd["root_disk"].(map[string]any)
			got := map[string]string{"root_disk": "name=" + disk["name"].(string), "local_gb": jsonOf(pd["local_gb"])}
			if got["root_disk"] != c.want["root_disk"] || got["local_gb"] != c.want["local_gb"] {
				t.Errorf("got %v, want %v", got, c.want)
			}
			if jsonOf(tg.node.Properties["local_gb"]) != c.want["local_gb"] {
				t.Errorf("local_gb property = %v", tg.node.Properties["local_gb"])
			}
		})
	}
}

func TestRootDeviceWithoutHints(t *testing.T) {
	runCases(t, []hookCase{
		{name: "ramdisk root disk", hooks: "root-device", inv: rootDisks, pd: `{"root_disk": {"name": "/dev/sdb", "size": 1099511627776}}`,
			wantProps: `{"local_gb":1023}`, wantPD: map[string]string{"local_gb": "1023"}},
		{name: "no spacing", hooks: "root-device", opts: func(o *inspection.HookOptions) { o.DiskPartitioningSpacing = false },
			inv: rootDisks, pd: `{"root_disk": {"name": "/dev/sdb", "size": 1099511627776}}`, wantProps: `{"local_gb":1024}`},
		{name: "smaller than a GiB is not reduced", hooks: "root-device", inv: `{}`, pd: `{"root_disk": {"name": "/dev/sdz", "size": 1048576}}`,
			wantProps: `{"local_gb":0}`, wantPD: map[string]string{"local_gb": "0"}},
		{name: "diskless", hooks: "root-device", inv: `{}`, pd: `{}`, wantProps: `{"local_gb":0}`, wantPD: map[string]string{"local_gb": "0", "root_disk": ""}},
		{name: "root disk without size", hooks: "root-device", inv: `{}`, pd: `{"root_disk": {"name": "/dev/sdz"}}`, wantProps: `{}`,
			wantErr: unexpected("KeyError", nodeUUID, "'size'")},
		{name: "hints without disks", hooks: "root-device", props: map[string]any{"root_device": map[string]any{"size": 1.0}}, inv: `{}`, pd: `{}`,
			wantErr: unexpected("KeyError", nodeUUID, "'disks'")},
		{name: "invalid skip hint", hooks: "root-device", inv: rootDisks, pd: `{}`,
			props:   map[string]any{"root_device": map[string]any{"size": 1024.0}, "skip_block_devices": []any{map[string]any{"size": "big"}}},
			wantErr: unexpected("ValueError", nodeUUID, `Root device hint "size" is not an integer value. Current value: big`)},
	})
}

func decodeValue(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
