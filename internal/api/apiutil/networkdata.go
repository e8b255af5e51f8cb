package apiutil

import (
	"encoding/json"
	"fmt"
	"os"
)

// NodeSchemas are the schemas that carry the network_data schema: node
// creation's, node patching's and network_data's own. Upstream builds the
// first two around the document [api]/network_data_schema names (node.py
// node_schema: network_data is null, {} or a document of that schema, whose
// definitions become the node schema's), so an operator's schema changes all
// three.
type NodeSchemas struct {
	Node, NodePatch, NetworkData *Schema
}

// EmbeddedNodeSchemas are the node schemas around upstream's own
// network-data-schema.json, embedded.
func EmbeddedNodeSchemas() *NodeSchemas {
	return &NodeSchemas{Node: MustSchema("node"), NodePatch: MustSchema("node_patch"), NetworkData: MustSchema("network_data")}
}

// LoadNodeSchemas builds the node schemas around the network_data schema in
// the JSON file file ([api]/network_data_schema naming an operator's file).
func LoadNodeSchemas(file string) (*NodeSchemas, error) {
	text, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("[api]network_data_schema: %w", err)
	}
	var nd map[string]any
	if err := json.Unmarshal(text, &nd); err != nil {
		return nil, fmt.Errorf("[api]network_data_schema %s: not a JSON object: %w", file, err)
	}
	out := &NodeSchemas{}
	if out.NetworkData, err = compileSchema("network_data", text); err != nil {
		return nil, fmt.Errorf("[api]network_data_schema %s: %w", file, err)
	}
	for _, name := range []string{"node", "node_patch"} {
		s, err := wrapNetworkData(name, nd)
		if err != nil {
			return nil, fmt.Errorf("[api]network_data_schema %s: %w", file, err)
		}
		if name == "node" {
			out.Node = s
		} else {
			out.NodePatch = s
		}
	}
	return out, nil
}

// wrapNetworkData is the embedded schema name with nd in network_data's
// third choice and nd's definitions as its own, as upstream's node_schema
// composes them.
func wrapNetworkData(name string, nd map[string]any) (*Schema, error) {
	raw, err := schemaFiles.ReadFile("schemas/" + name + ".json")
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	props, _ := doc["properties"].(map[string]any)
	field, _ := props["network_data"].(map[string]any)
	choices, _ := field["anyOf"].([]any)
	if len(choices) != 3 {
		return nil, fmt.Errorf("schema %s: network_data is not the anyOf of three upstream builds", name)
	}
	choices[2] = nd
	defs, _ := nd["definitions"].(map[string]any)
	if defs == nil {
		defs = map[string]any{}
	}
	doc["definitions"] = defs
	text, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return compileSchema(name, text)
}
