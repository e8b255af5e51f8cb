package main

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/redfishbmc"
)

// A lab machine's agent is configured from the ISO's kernel parameters
// and the emulator's ramdisk settings; the inspection data goes to a
// file only when the ISO asks for inspection, and the token never
// reaches the command line.
func TestLabAgentArgs(t *testing.T) {
	inventory := map[string]any{"disks": []any{map[string]any{"name": "/dev/sda"}}}
	for _, tc := range []struct {
		name    string
		params  map[string]string
		config  redfishbmc.RamdiskConfig
		want    []string
		inspect bool
	}{
		{
			name:   "defaults",
			params: map[string]string{"ipa-api-url": "http://127.0.0.1:6385", "ipa-agent-token": "s3cret"},
			want:   []string{"-api-url http://127.0.0.1:6385", "-mac 52:54:00:12:34:57,52:54:00:12:34:58", "-boot-delay 3s", "-heartbeat-interval 5s"},
		},
		{
			name: "inspection and delays",
			params: map[string]string{"ipa-api-url": "http://127.0.0.1:6385", "ipa-agent-token": "s3cret",
				"ipa-inspection-callback-url": "http://127.0.0.1:6385/v1/continue_inspection"},
			config: redfishbmc.RamdiskConfig{BootDelay: redfishbmc.Duration(2 * time.Second),
				HeartbeatInterval: redfishbmc.Duration(time.Second), PowerOffDelay: redfishbmc.Duration(time.Second)},
			want: []string{"-boot-delay 2s", "-heartbeat-interval 1s", "-power-off-delay 1s",
				"-inspection-callback-url http://127.0.0.1:6385/v1/continue_inspection"},
			inspect: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := redfishbmc.Ramdisk{SystemID: "lab-0", Params: tc.params, Config: tc.config, Inventory: inventory,
				MACs: []string{"52:54:00:12:34:57", "52:54:00:12:34:58"}}
			args, err := labAgentArgs(r, dir)
			if err != nil {
				t.Fatal(err)
			}
			line := strings.Join(args, " ")
			if !strings.HasPrefix(line, "lab agent ") || strings.Contains(line, "s3cret") {
				t.Fatalf("arguments %q", line)
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("arguments %q lack %q", line, w)
				}
			}
			i := slices.Index(args, "-inspection-data")
			if (i >= 0) != tc.inspect {
				t.Fatalf("inspection data in %q: %v, want %v", line, i >= 0, tc.inspect)
			}
			if !tc.inspect {
				return
			}
			raw, err := os.ReadFile(args[i+1])
			if err != nil {
				t.Fatal(err)
			}
			var data struct {
				Inventory  map[string]any `json:"inventory"`
				PluginData map[string]any `json:"plugin_data"`
			}
			if err := json.Unmarshal(raw, &data); err != nil {
				t.Fatal(err)
			}
			root, _ := data.PluginData["root_disk"].(map[string]any)
			if data.PluginData["boot_interface"] != "52:54:00:12:34:57" || root["name"] != "/dev/sda" || data.Inventory["disks"] == nil {
				t.Fatalf("inspection data %s", raw)
			}
		})
	}
}
