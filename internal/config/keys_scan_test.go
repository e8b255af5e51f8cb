package config

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// stringGetters are the accessors that take an option's section and name as
// strings; with two literals they are a typed key's accessor spelt in a way
// the compiler cannot check.
var stringGetters = map[string]bool{
	"String": true, "Int": true, "Float": true, "Bool": true, "List": true, "Dict": true,
	"Duration": true, "IsSet": true, "Has": true, "Display": true,
}

// Non-test code reads options through typed keys (cfg.BoolOf(config.X));
// the string accessors remain for names built at run time only. A call of
// one with two string literals fails here, naming the key to use.
func TestNoLiteralOptionReads(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	for _, top := range []string{"cmd", "internal", "testing"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			imports := map[string]bool{}
			for _, im := range f.Imports {
				v, _ := strconv.Unquote(im.Path.Value)
				name := path.Base(v)
				if im.Name != nil {
					name = im.Name.Name
				}
				imports[name] = true
			}
			ast.Inspect(f, func(n ast.Node) bool {
				c, ok := n.(*ast.CallExpr)
				if !ok || len(c.Args) != 2 {
					return true
				}
				sel, ok := c.Fun.(*ast.SelectorExpr)
				if !ok || !stringGetters[sel.Sel.Name] {
					return true
				}
				// flag.String, slog.String and the like are not
				// configuration reads.
				if x, ok := sel.X.(*ast.Ident); ok && imports[x.Name] {
					return true
				}
				var lits [2]string
				for i, a := range c.Args {
					bl, ok := a.(*ast.BasicLit)
					if !ok || bl.Kind != token.STRING {
						return true
					}
					lits[i], _ = strconv.Unquote(bl.Value)
				}
				rel, _ := filepath.Rel(root, fset.Position(c.Pos()).Filename)
				where := filepath.ToSlash(rel) + ":" + strconv.Itoa(fset.Position(c.Pos()).Line)
				if _, known := Lookup(lits[0], lits[1]); !known {
					t.Errorf("%s: %s(%q, %q) reads an option the table does not have", where, sel.Sel.Name, lits[0], lits[1])
					return true
				}
				t.Errorf("%s: %s(%q, %q): use %sOf with the typed key of [%s]/%s (keys_gen.go)", where, sel.Sel.Name, lits[0], lits[1], sel.Sel.Name, lits[0], lits[1])
				return true
			})
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's folder")
		}
		dir = parent
	}
}
