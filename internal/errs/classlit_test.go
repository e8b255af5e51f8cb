package errs

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/spectest"
)

// classArg is, for each function taking a Class, the index of that
// argument. A string literal there still compiles (an untyped constant
// converts to Class), so this test is what keeps class names constants.
var classArg = map[string]int{"New": 0, "NewMessage": 0, "NewMessageKw": 0, "Is": 1, "Class": 0}

// Every call in the module that names an error class must name it with a
// Class constant: errs.New, NewMessage, NewMessageKw, Is, driver.IsClass
// and the conversion errs.Class(...) with a string literal argument are
// misspellings waiting to happen.
func TestNoClassLiterals(t *testing.T) {
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(here, "..", "..")
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "vendor" || name == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		for _, bad := range classLiterals(t, path, filepath.Dir(path) == here) {
			t.Errorf("%s: class %s is a string literal; use the errs.Class constant", bad.pos, bad.lit)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

type classLiteral struct {
	pos token.Position
	lit string
}

// classLiterals lists the literal classes of the file at path; inErrs
// says the file is this package's, whose calls are unqualified.
func classLiterals(t *testing.T, path string, inErrs bool) []classLiteral {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	errsName, driverName := importName(f, "github.com/openkeel/ironic/internal/errs"), importName(f, "github.com/openkeel/ironic/internal/driver")
	inDriver := f.Name.Name == "driver" && filepath.Base(filepath.Dir(path)) == "driver"
	var found []classLiteral
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		name := ""
		switch fn := call.Fun.(type) {
		case *ast.SelectorExpr:
			if id, ok := fn.X.(*ast.Ident); ok {
				switch {
				case errsName != "" && id.Name == errsName:
					name = fn.Sel.Name
				case driverName != "" && id.Name == driverName && fn.Sel.Name == "IsClass":
					name = "Is"
				}
			}
		case *ast.Ident:
			switch {
			case inErrs:
				name = fn.Name
			case inDriver && fn.Name == "IsClass":
				name = "Is"
			}
		}
		idx, ok := classArg[name]
		if !ok || len(call.Args) <= idx {
			return true
		}
		if lit, ok := call.Args[idx].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			found = append(found, classLiteral{fset.Position(lit.Pos()), lit.Value})
		}
		return true
	})
	return found
}

func importName(f *ast.File, path string) string {
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == path {
			if im.Name != nil {
				return im.Name.Name
			}
			return filepath.Base(path)
		}
	}
	return ""
}

// The guard must see what it guards against: a literal in each position.
func TestClassLiteralsFound(t *testing.T) {
	src := `package p

import (
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
)

var (
	a = errs.New("NodeLocked", nil)
	b = errs.NewMessage("NodeLockd", "")
	c = errs.NewMessageKw("X", "", nil)
	d = errs.Is(nil, "Conflict")
	e = driver.IsClass(nil, "Conflict")
	f = errs.Class("Conflict")
	g = errs.New(errs.ClassNodeLocked, nil)
	h = errs.Is(nil, errs.ClassConflict)
)
`
	path := filepath.Join(t.TempDir(), "p.go")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := classLiterals(t, path, false); len(got) != 6 {
		t.Errorf("found %d literals, want 6: %v", len(got), got)
	}
}

// classes_table.go must be what gen_classes.go writes from the spec today.
func TestClassTableCurrent(t *testing.T) {
	out := filepath.Join(t.TempDir(), "classes_table.go")
	cmd := exec.Command("go", "run", "gen_classes.go", "-o", out)
	cmd.Env = append(os.Environ(), "IRONIC_SPEC_DIR="+spectest.Dir(t))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen_classes: %v\n%s", err, b)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("classes_table.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("classes_table.go is stale: run go generate ./internal/errs")
	}
}
