package conductor

import (
	"bufio"
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// concreteDriverPrefix is where the driver implementations live; the
// conductor reaches them only through the capability interfaces of
// internal/driver, so that a new driver never needs a conductor change.
const concreteDriverPrefix = "internal/driver/"

// TestConductorImportsNoConcreteDriver walks the imports of the non-test
// files of every package under internal/conductor, transitively through
// the module's own packages, and fails when one of them reaches a
// concrete driver package (agent, redfish, ipmi, pxe, fake, …). Test
// files may build concrete drivers, so they are not followed.
func TestConductorImportsNoConcreteDriver(t *testing.T) {
	root, module := moduleRoot(t)
	var roots []string
	err := filepath.WalkDir(filepath.Join(root, "internal", "conductor"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			roots = append(roots, module+"/"+filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk internal/conductor: %v", err)
	}

	// via records, for each package reached, the package that imported
	// it first, so that a failure shows the whole chain.
	via := map[string]string{}
	queue := append([]string(nil), roots...)
	for _, r := range roots {
		via[r] = ""
	}
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		dir := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(pkg, module+"/")))
		// ImportDir reads only the directory's files (no go command, no
		// network) and lists the imports of its non-test files for this
		// platform's build constraints.
		bp, err := build.Default.ImportDir(dir, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				continue
			}
			t.Fatalf("read package %s: %v", pkg, err)
		}
		for _, imp := range bp.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			if _, seen := via[imp]; seen {
				continue
			}
			via[imp] = pkg
			if strings.HasPrefix(imp, module+"/"+concreteDriverPrefix) {
				t.Errorf("the conductor imports the concrete driver package %s: %s; use a capability interface of internal/driver instead",
					imp, importChain(via, imp))
				continue
			}
			queue = append(queue, imp)
		}
	}
	if len(via) == len(roots) {
		t.Fatalf("no import of the module was followed from %v: the walk is broken", roots)
	}
}

// importChain renders how pkg was reached: root -> … -> pkg.
func importChain(via map[string]string, pkg string) string {
	chain := []string{pkg}
	for p := via[pkg]; p != ""; p = via[p] {
		chain = append([]string{p}, chain...)
	}
	return strings.Join(chain, " -> ")
}

// moduleRoot finds the directory of go.mod above the test's directory and
// the module path it declares.
func moduleRoot(t *testing.T) (dir, module string) {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("working directory: %v", err)
	}
	for {
		f, err := os.Open(filepath.Join(dir, "go.mod"))
		if err == nil {
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
					return dir, strings.Trim(strings.TrimSpace(rest), `"`)
				}
			}
			t.Fatalf("%s/go.mod declares no module", dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
