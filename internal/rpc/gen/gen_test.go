package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedFilesAreCurrent regenerates the RPC layers in memory: a
// committed file that differs means api.go (or the generator) changed
// without `go generate ./internal/rpc/...`.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	files, err := generate("..")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 {
		t.Fatalf("generated %d files, want 4", len(files))
	}
	for _, f := range files {
		committed, err := os.ReadFile(filepath.Join("..", f.path))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(committed, f.data) {
			t.Errorf("internal/rpc/%s is not current: run go generate ./internal/rpc/...", f.path)
		}
	}
}

// TestGeneratedMethods checks what the generator read from api.go against
// a few methods whose wire shape is known from upstream's rpcapi.py.
func TestGeneratedMethods(t *testing.T) {
	a, err := parseAPI("..")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*method{}
	for _, m := range a.Methods {
		byName[m.Name] = m
	}
	cases := []struct {
		name, rpcName, version string
		cast                   bool
		kwargs                 string
	}{
		{"ChangeNodePowerState", "change_node_power_state", "1.39", false, "node_id new_state timeout?none"},
		{"DoNodeDeploy", "do_node_deploy", "1.22", false, "node_id rebuild? configdrive?wire deploy_steps>1.52wire"},
		{"ContinueNodeDeploy", "continue_node_deploy", "1.45", true, "node_id"},
		{"Heartbeat", "heartbeat", "1.54", false, "*"},
		{"GetRAIDLogicalDiskProperties", "get_raid_logical_disk_properties", "1.30", false, "driver_name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := byName[tc.name]
			if m == nil {
				t.Fatal("not read")
			}
			var kws []string
			for _, p := range m.Params {
				kw := p.Kwarg
				if kw == "" {
					kw = "*"
				}
				if p.Optional {
					kw += "?"
				}
				if p.None {
					kw += "none"
				}
				if p.Since != "" {
					kw += ">" + p.Since
				}
				if p.Wire {
					kw += "wire"
				}
				kws = append(kws, kw)
			}
			if m.RPCName != tc.rpcName || m.Version != tc.version || m.Cast != tc.cast || strings.Join(kws, " ") != tc.kwargs {
				t.Errorf("read %s %s cast=%v %q, want %s %s cast=%v %q", m.RPCName, m.Version, m.Cast, strings.Join(kws, " "), tc.rpcName, tc.version, tc.cast, tc.kwargs)
			}
		})
	}
}

// TestBadAnnotations checks that a mistake in api.go stops the generator
// with the method named, rather than generating a wrong wire.
func TestBadAnnotations(t *testing.T) {
	cases := []struct {
		name, methods, want string
	}{
		{"missing", "\tInjectNMI(ctx context.Context, topic, nodeID string) error\n", "InjectNMI: no //rpc:call or //rpc:cast annotation"},
		{"too few kwargs", "\t//rpc:call set_boot_device 1.17 node_id device\n\tSetBootDevice(ctx context.Context, topic, nodeID, device string, persistent bool) error\n", "2 kwargs for 3 arguments"},
		{"unknown flag", "\t//rpc:call inject_nmi 1.40 node_id,optinal\n\tInjectNMI(ctx context.Context, topic, nodeID string) error\n", `unknown flag "optinal"`},
		{"bad version", "\t//rpc:call inject_nmi 1,40 node_id\n\tInjectNMI(ctx context.Context, topic, nodeID string) error\n", `version "1,40"`},
		{"cast with result", "\t//rpc:cast vif_list 1.38 node_id\n\tVifList(ctx context.Context, topic, nodeID string) ([]string, error)\n", "a cast answers nothing"},
		{"no topic", "\t//rpc:call inject_nmi 1.40 node_id\n\tInjectNMI(ctx context.Context, nodeID string) error\n", "(ctx context.Context, topic string)"},
		{"none on a map", "\t//rpc:call vif_attach 1.38 node_id vif_info,none\n\tVifAttach(ctx context.Context, topic, nodeID string, vifInfo map[string]any) error\n", "none is for a value type"},
		{"unnamed struct", "\t//rpc:call inject_nmi 1.40 node_id\n\tInjectNMI(ctx context.Context, topic string, node struct{ ID string }) error\n", "argument node: unsupported type expression *ast.StructType"},
		{"duplicate", "\t//rpc:call inject_nmi 1.40 node_id\n\tInjectNMI(ctx context.Context, topic, nodeID string) error\n\t//rpc:call inject_nmi 1.40 node_id\n\tInjectNMI2(ctx context.Context, topic, nodeID string) error\n", "RPC method inject_nmi is already InjectNMI"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := generate(writeAPI(t, tc.methods))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// Off by one the other way round is reported too.
	if _, err := generate(writeAPI(t, "\t//rpc:call inject_nmi 1.40 node_id force\n\tInjectNMI(ctx context.Context, topic, nodeID string) error\n")); err == nil || !strings.Contains(err.Error(), "2 kwargs for 1 arguments") {
		t.Errorf("extra kwarg: %v", err)
	}
}

// TestNewTypeNeedsASample checks that a method with a type the fake has
// no sample for names the file to extend.
func TestNewTypeNeedsASample(t *testing.T) {
	_, err := generate(writeAPI(t, "\t//rpc:call get_thing 1.63 node_id\n\tGetThing(ctx context.Context, topic, nodeID string) (map[int]bool, error)\n"))
	if err == nil || !strings.Contains(err.Error(), "no sample value for type map[int]bool: add one to internal/rpc/gen/samples.go") {
		t.Errorf("error %v", err)
	}
}

// writeAPI writes a module holding an rpc package whose ConductorAPI has
// the given methods, and returns the package's folder.
func writeAPI(t *testing.T, methods string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "rpc")
	if err := os.MkdirAll(filepath.Join(dir, "jsonrpc"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package rpc\n\nimport \"context\"\n\ntype ConductorAPI interface {\n" + methods + "}\n"
	for name, data := range map[string]string{
		filepath.Join(root, "go.mod"): "module example.com/m\n\ngo 1.26\n",
		filepath.Join(dir, "api.go"):  src,
	} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestNewMethodReachesEveryLayer adds one annotated method to a copy of
// api.go: the client, the server table, the in-process transport (for a
// cast) and the fake all get it, from that one line of definition.
func TestNewMethodReachesEveryLayer(t *testing.T) {
	src, err := os.ReadFile("../api.go")
	if err != nil {
		t.Fatal(err)
	}
	const added = "\t//rpc:cast continue_node_inspect 1.63 node_id force,optional\n\tContinueNodeInspect(ctx context.Context, topic, nodeID string, force bool) error\n"
	text := strings.Replace(string(src), "type ConductorAPI interface {\n", "type ConductorAPI interface {\n"+added, 1)
	if text == string(src) {
		t.Fatal("no ConductorAPI in api.go")
	}
	dir := writeAPI(t, "")
	if err := os.WriteFile(filepath.Join(dir, "api.go"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"local_gen.go":             {`l.cast(ctx, "continue_node_inspect", l.ConductorAPI.ContinueNodeInspect(ctx, topic, nodeID, force))`},
		"jsonrpc/client_gen.go":    {`c.cast(ctx, topic, "continue_node_inspect", "1.63", continueNodeInspectParams{NodeID: nodeID, Force: force})`},
		"jsonrpc/methods_gen.go":   {"Force  bool   `json:\"force\" rpc:\"optional\"`", `def("continue_node_inspect", func(ctx context.Context, h rpc.ConductorAPI, codec *ovo.Codec, p *continueNodeInspectParams) (any, error) {`},
		"jsonrpc/fake_gen_test.go": {`return f.record(ctx, "ContinueNodeInspect", nodeID, force)`, `return nil, c.ContinueNodeInspect(ctx, topic, "nodeID-value", true)`},
	}
	for _, f := range files {
		for _, w := range want[f.path] {
			if !strings.Contains(string(f.data), w) {
				t.Errorf("%s lacks %s", f.path, w)
			}
		}
	}
}

// TestObjectsTravelAsVersionedObjects checks the generated code of the
// methods carrying objects: created ones name every field as changed,
// updated ones the fields that differ from the stored row, results come
// back through ovo.Obj, the in-process transport re-encodes both ways,
// and update_node goes to its adapter under a pin.
func TestObjectsTravelAsVersionedObjects(t *testing.T) {
	files, err := generate("..")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"jsonrpc/client_gen.go": {
			`nodeObjParams{NodeObj: ovo.WrapNew(c.codec, node)}`,
			`portChanges, err := c.changesOf(ctx, port)`,
			`portObjParams{PortObj: ovo.Wrap(c.codec, port, portChanges...)}`,
			`portParams{Port: ovo.Wrap(c.codec, port)}`,
			"var out ovo.Obj[model.Allocation]",
			"if c.codec.Pinned() {\n\t\treturn c.adaptUpdateNode(ctx, topic, nodeID, upd, resetInterfaces)",
		},
		"jsonrpc/methods_gen.go": {
			"NodeObj ovo.Obj[model.Node] `json:\"node_obj\"`",
			"NodeObj json.RawMessage `json:\"node_obj,omitempty\"`",
			"NodeID          string            `json:\"node_id\" rpc:\"optional\"`",
			"if err := p.adapt(); err != nil {",
			"out, err := h.CreateNode(ctx, \"\", p.NodeObj.V)\n\t\treturn ovo.Wrap(codec, out), err",
		},
		"local_gen.go": {"nodeWire, err := wireObject(node)", "return wireObject(out)"},
	}
	for _, f := range files {
		for _, w := range want[f.path] {
			if !strings.Contains(string(f.data), w) {
				t.Errorf("%s lacks %s", f.path, w)
			}
		}
	}
}
