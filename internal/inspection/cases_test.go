package inspection_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/openkeel/ironic/internal/inspection"
)

// hookCase runs hooks over an inventory and plugin data and checks the
// node properties, the plugin data keys named in wantPD, and the error.
type hookCase struct {
	name  string
	hooks string
	opts  func(o *inspection.HookOptions)
	setup func(tg *memTarget)
	props map[string]any
	inv   string
	pd    string
	// wantProps is the JSON of the node's properties afterwards.
	wantProps string
	// wantPD maps plugin data keys to their JSON afterwards ("" = absent).
	wantPD map[string]string
	// wantErr is the exact error text, "" for success.
	wantErr string
	check   func(t *testing.T, tg *memTarget)
}

func runCases(t *testing.T, cases []hookCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg := newTarget()
			for k, v := range c.props {
				tg.node.Properties[k] = v
			}
			if c.setup != nil {
				c.setup(tg)
			}
			o := inspection.DefaultHookOptions()
			if c.opts != nil {
				c.opts(&o)
			}
			names, err := inspection.ParseHooks(c.hooks, "ramdisk-error,validate-interfaces,ports,architecture")
			if err != nil {
				t.Fatalf("parse hooks: %v", err)
			}
			pd := decode(t, c.pd)
			err = inspection.RunHooks(context.Background(), tg, names, o, decode(t, c.inv), pd)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != c.wantErr {
				t.Fatalf("error =\n%s\nwant\n%s", got, c.wantErr)
			}
			if c.wantProps != "" {
				props, _ := json.Marshal(tg.node.Properties)
				if string(props) != c.wantProps {
					t.Errorf("properties =\n%s\nwant\n%s", props, c.wantProps)
				}
			}
			for k, want := range c.wantPD {
				v, ok := pd[k]
				gotJSON := ""
				if ok {
					b, _ := json.Marshal(v)
					gotJSON = string(b)
				}
				if gotJSON != want {
					t.Errorf("plugin_data[%s] =\n%s\nwant\n%s", k, gotJSON, want)
				}
			}
			if c.check != nil {
				c.check(t, tg)
			}
		})
	}
}

// unexpected is upstream's text for an exception a hook let escape.
func unexpected(class, node, msg string) string {
	return "Failed to inspect hardware. Reason: Unexpected exception " + class + " during processing for node: " + node + ". Error: " + msg
}

const nodeUUID = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
