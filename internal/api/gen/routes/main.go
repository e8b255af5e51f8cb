// Command routes writes internal/api/routes_table.go from the spec's
// ironic/api/routes.json and the hand-kept input in local.go.
//
// routes.json is read at generation time only: the spec stays outside the
// product, and the committed table is what ships. The table is checked
// against routes.json by internal/api's TestRouteTable and against this
// generator by TestTableCurrent.
//
// Run with `go generate ./internal/api` (from that folder: go run ./gen/routes).
// The spec folder is IRONIC_SPEC_DIR, else ../shared/spec beside the module
// root.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
)

func main() {
	out := flag.String("o", "routes_table.go", "the table to write")
	minorGo := flag.String("minor", filepath.Join("microversion", "minor.go"), "the microversion constants")
	flag.Parse()

	spec, err := specDir()
	if err != nil {
		log.Fatal(err)
	}
	routes, err := os.ReadFile(filepath.Join(spec, "ironic", "api", "routes.json"))
	if err != nil {
		log.Fatalf("read routes.json: %v", err)
	}
	minors, err := os.ReadFile(*minorGo)
	if err != nil {
		log.Fatalf("read microversion constants: %v", err)
	}
	code, err := generate(routes, minors, localRoutes(), signatures())
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, code, 0o644); err != nil {
		log.Fatalf("write %s: %v", *out, err)
	}
}

func specDir() (string, error) {
	if d := os.Getenv("IRONIC_SPEC_DIR"); d != "" {
		return d, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "spec"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found; set IRONIC_SPEC_DIR")
		}
		dir = parent
	}
}
