// Command gen writes the RPC layers of package rpc from its one
// definition, the annotated ConductorAPI interface in rpc/api.go (the
// annotation is described in parse.go): the JSON-RPC client methods and
// server method table (package jsonrpc), the in-process transport's casts
// and wire re-encoding (package rpc), and the recording fake with one
// round-trip case per method for jsonrpc's tests.
//
// Run from internal/rpc by go generate; -dir names another rpc folder.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
)

func main() {
	dir := flag.String("dir", ".", "the internal/rpc folder")
	flag.Parse()
	files, err := generate(*dir)
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range files {
		path := filepath.Join(*dir, f.path)
		if err := os.WriteFile(path, f.data, 0o644); err != nil {
			log.Fatalf("write %s: %v", path, err)
		}
	}
}

// file is one generated file, its path relative to the rpc folder.
type file struct {
	path string
	data []byte
}

// generate returns every generated file of the rpc folder dir.
func generate(dir string) ([]file, error) {
	a, err := parseAPI(dir)
	if err != nil {
		return nil, err
	}
	var out []file
	for _, g := range []struct {
		path string
		gen  func() ([]byte, error)
	}{
		{"local_gen.go", a.local},
		{"jsonrpc/client_gen.go", a.client},
		{"jsonrpc/methods_gen.go", a.server},
		{"jsonrpc/fake_gen_test.go", a.fake},
	} {
		data, err := g.gen()
		if err != nil {
			return nil, fmt.Errorf("generate %s: %w", g.path, err)
		}
		out = append(out, file{g.path, data})
	}
	return out, nil
}
