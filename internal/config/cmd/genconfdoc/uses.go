package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// getters are the methods of *config.Config that read an option's value
// (section, name).
var getters = map[string]bool{
	"String": true, "Int": true, "Float": true, "Bool": true, "List": true,
	"Dict": true, "Duration": true, "Display": true, "IsSet": true, "Has": true,
}

// alt is one value an argument may take: a parameter of the enclosing
// function (param >= 0), or a glob pattern where "*" stands for what the
// scan cannot know.
type alt struct {
	param int
	pat   string
}

// term is every value an argument may take.
type term []alt

func lit(s string) term { return term{{param: -1, pat: s}} }

var unknown = lit("*")

// concat is the values of a + b; a parameter inside a concatenation is
// not followed.
func concat(a, b term) term {
	var out term
	for _, x := range a {
		for _, y := range b {
			xs, ys := x.pat, y.pat
			if x.param >= 0 {
				xs = "*"
			}
			if y.param >= 0 {
				ys = "*"
			}
			out = append(out, alt{param: -1, pat: xs + ys})
		}
	}
	return out
}

// use is one option read, as patterns: section and name.
type use struct{ section, name string }

// funcKey names a function: package folder and name (methods by name).
type funcKey struct{ pkg, name string }

// template is a read a function makes whose section or name come from its
// parameters; a call with known arguments turns it into a use.
type template struct{ section, name alt }

// call is a call site of a function that may have templates.
type call struct {
	callee funcKey
	args   []term
	caller funcKey
}

// scanner finds the options the module's code reads. It follows string
// constants, concatenations, range loops over literal lists and
// parameters through any number of helper functions; what it cannot
// know is a "*" in a pattern.
type scanner struct {
	uses      map[use]bool
	templates map[funcKey][]template
	calls     []call
	consts    map[string]map[string][]string // package → name → values
	// keys are the typed option keys of package config (keys_gen.go):
	// identifier → option. Naming a key anywhere counts as reading it.
	keys map[string]use
}

// scanUses parses the non-test Go files of root's cmd and internal trees,
// leaving out internal/config (the table itself, not a reader of it).
func scanUses(root string) (map[use]bool, error) {
	s := &scanner{uses: map[use]bool{}, templates: map[funcKey][]template{}, consts: map[string]map[string][]string{}}
	fset := token.NewFileSet()
	keys, err := typedKeys(fset, filepath.Join(root, "internal", "config", "keys_gen.go"))
	if err != nil {
		return nil, err
	}
	s.keys = keys
	files := map[string][]*ast.File{}
	for _, top := range []string{"cmd", "internal"} {
		if _, err := os.Stat(filepath.Join(root, top)); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if rel == "internal/config" || strings.HasPrefix(rel, "internal/config/") || d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				return fmt.Errorf("parse %s: %w", rel, err)
			}
			files[path.Dir(rel)] = append(files[path.Dir(rel)], f)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for pkg, fs := range files {
		s.consts[pkg] = collectConsts(fs)
	}
	pkgs := mapsKeys(files)
	slices.Sort(pkgs)
	for _, pkg := range pkgs {
		for _, f := range files[pkg] {
			s.scanFile(pkg, f)
		}
	}
	s.propagate()
	return s.uses, nil
}

// typedKeys reads the generated keys: Name = XOpt{Name{"section", "name"}}.
// A tree without the file (a test's) has no keys.
func typedKeys(fset *token.FileSet, file string) (map[string]use, error) {
	keys := map[string]use{}
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if errors.Is(err, fs.ErrNotExist) {
		return keys, nil
	}
	if err != nil {
		return nil, fmt.Errorf("parse typed keys: %w", err)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || len(vs.Values) != 1 {
			return true
		}
		outer, ok := vs.Values[0].(*ast.CompositeLit)
		if !ok || len(outer.Elts) != 1 {
			return true
		}
		inner, ok := outer.Elts[0].(*ast.CompositeLit)
		if !ok || len(inner.Elts) != 2 {
			return true
		}
		var sn [2]string
		for i, el := range inner.Elts {
			bl, ok := el.(*ast.BasicLit)
			if !ok || bl.Kind != token.STRING {
				return true
			}
			sn[i], _ = strconv.Unquote(bl.Value)
		}
		keys[vs.Names[0].Name] = use{sn[0], sn[1]}
		return true
	})
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s declares no typed keys", file)
	}
	return keys, nil
}

func mapsKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// collectConsts gathers string constants and package-level string slices
// of literals, wherever declared; a name declared twice keeps every value.
func collectConsts(files []*ast.File) map[string][]string {
	out := map[string][]string{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			gd, ok := n.(*ast.GenDecl)
			if !ok || (gd.Tok != token.CONST && gd.Tok != token.VAR) {
				return true
			}
			for _, spec := range gd.Specs {
				vs, ok := spec.(*ast.ValueSpec)
				if !ok || len(vs.Names) != len(vs.Values) {
					continue
				}
				for i, name := range vs.Names {
					switch v := vs.Values[i].(type) {
					case *ast.BasicLit:
						if s, err := strconv.Unquote(v.Value); err == nil && v.Kind == token.STRING {
							out[name.Name] = append(out[name.Name], s)
						}
					case *ast.CompositeLit:
						for _, e := range v.Elts {
							if bl, ok := e.(*ast.BasicLit); ok && bl.Kind == token.STRING {
								if s, err := strconv.Unquote(bl.Value); err == nil {
									out[name.Name] = append(out[name.Name], s)
								}
							}
						}
					}
				}
			}
			return true
		})
	}
	return out
}

// env is what names mean inside one function body.
type env struct {
	pkg     string
	fn      funcKey
	params  map[string]int
	locals  map[string]term
	imports map[string]string // name → package folder (module packages only)
}

func (s *scanner) scanFile(pkg string, f *ast.File) {
	imports := map[string]string{}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		rest, ok := strings.CutPrefix(p, "github.com/openkeel/ironic/")
		if !ok {
			continue
		}
		name := path.Base(rest)
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = rest
	}
	// Typed keys are read wherever they are named: in a call, a table or
	// an argument to a helper.
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && imports[x.Name] == "internal/config" {
			if u, ok := s.keys[sel.Sel.Name]; ok {
				s.uses[u] = true
			}
		}
		return true
	})
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		s.scanFunc(&env{pkg: pkg, fn: funcKey{pkg, fd.Name.Name}, imports: imports}, fd.Type, fd.Body)
	}
}

// scanFunc records the reads and calls of one function body; a function
// literal bound to a name (name := func…) is a function of that name.
func (s *scanner) scanFunc(e *env, ft *ast.FuncType, body *ast.BlockStmt) {
	e.params, e.locals = map[string]int{}, map[string]term{}
	i := 0
	for _, field := range ft.Params.List {
		if len(field.Names) == 0 {
			i++
		}
		for _, n := range field.Names {
			e.params[n.Name] = i
			i++
		}
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				id, ok := lhs.(*ast.Ident)
				if !ok || i >= len(n.Rhs) || len(n.Lhs) != len(n.Rhs) {
					continue
				}
				if fl, ok := n.Rhs[i].(*ast.FuncLit); ok {
					inner := &env{pkg: e.pkg, fn: funcKey{e.pkg, id.Name}, imports: e.imports}
					s.scanFunc(inner, fl.Type, fl.Body)
					continue
				}
				if _, isParam := e.params[id.Name]; !isParam {
					e.locals[id.Name] = append(e.locals[id.Name], s.eval(e, n.Rhs[i])...)
				}
			}
		case *ast.RangeStmt:
			if id, ok := n.Value.(*ast.Ident); ok {
				e.locals[id.Name] = append(e.locals[id.Name], s.elements(e, n.X)...)
			}
		case *ast.FuncLit:
			// Bound literals were scanned above; others (callbacks) read
			// in the enclosing function's terms.
			return true
		case *ast.CallExpr:
			s.scanCall(e, n)
		}
		return true
	})
}

// elements is what a range loop's value takes.
func (s *scanner) elements(e *env, x ast.Expr) term {
	switch x := x.(type) {
	case *ast.CompositeLit:
		var out term
		for _, el := range x.Elts {
			out = append(out, s.eval(e, el)...)
		}
		return out
	case *ast.Ident:
		if vals, ok := s.consts[e.pkg][x.Name]; ok {
			var out term
			for _, v := range vals {
				out = append(out, lit(v)...)
			}
			return out
		}
	}
	return unknown
}

func (s *scanner) scanCall(e *env, c *ast.CallExpr) {
	var callee funcKey
	switch fn := c.Fun.(type) {
	case *ast.Ident:
		callee = funcKey{e.pkg, fn.Name}
	case *ast.SelectorExpr:
		if len(c.Args) == 2 && getters[fn.Sel.Name] {
			s.read(e, s.eval(e, c.Args[0]), s.eval(e, c.Args[1]))
			return
		}
		if x, ok := fn.X.(*ast.Ident); ok && e.imports[x.Name] != "" {
			callee = funcKey{e.imports[x.Name], fn.Sel.Name}
		} else {
			callee = funcKey{e.pkg, fn.Sel.Name}
		}
	default:
		return
	}
	args := make([]term, len(c.Args))
	for i, a := range c.Args {
		args[i] = s.eval(e, a)
	}
	s.calls = append(s.calls, call{callee: callee, args: args, caller: e.fn})
}

// read records a getter call's section and name in the function's terms.
func (s *scanner) read(e *env, section, name term) {
	for _, sa := range section {
		for _, na := range name {
			s.addRead(e.fn, sa, na)
		}
	}
}

// addRead records one combination: a use when both are known patterns, a
// template of fn when either is a parameter. It reports whether it added
// something new.
func (s *scanner) addRead(fn funcKey, section, name alt) bool {
	if section.param < 0 && name.param < 0 {
		u := use{section.pat, name.pat}
		if s.uses[u] {
			return false
		}
		s.uses[u] = true
		return true
	}
	tpl := template{section, name}
	if slices.Contains(s.templates[fn], tpl) {
		return false
	}
	s.templates[fn] = append(s.templates[fn], tpl)
	return true
}

func (s *scanner) eval(e *env, x ast.Expr) term {
	switch x := x.(type) {
	case *ast.BasicLit:
		if v, err := strconv.Unquote(x.Value); err == nil && x.Kind == token.STRING {
			return lit(v)
		}
	case *ast.ParenExpr:
		return s.eval(e, x.X)
	case *ast.BinaryExpr:
		if x.Op == token.ADD {
			return concat(s.eval(e, x.X), s.eval(e, x.Y))
		}
	case *ast.CallExpr:
		// A conversion such as string(kind).
		if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "string" && len(x.Args) == 1 {
			return s.eval(e, x.Args[0])
		}
	case *ast.Ident:
		if i, ok := e.params[x.Name]; ok {
			return term{{param: i}}
		}
		if t, ok := e.locals[x.Name]; ok {
			return t
		}
		if vals, ok := s.consts[e.pkg][x.Name]; ok && len(vals) > 0 {
			var out term
			for _, v := range vals {
				out = append(out, lit(v)...)
			}
			return out
		}
	case *ast.SelectorExpr:
		if pkg, ok := x.X.(*ast.Ident); ok && e.imports[pkg.Name] != "" {
			if vals, ok := s.consts[e.imports[pkg.Name]][x.Sel.Name]; ok {
				var out term
				for _, v := range vals {
					out = append(out, lit(v)...)
				}
				return out
			}
		}
	}
	return unknown
}

// propagate applies templates at their call sites until nothing changes:
// a helper's parameters become the caller's arguments.
func (s *scanner) propagate() {
	for changed := true; changed; {
		changed = false
		for _, c := range s.calls {
			for _, tpl := range s.templates[c.callee] {
				for _, sa := range subst(tpl.section, c.args) {
					for _, na := range subst(tpl.name, c.args) {
						if s.addRead(c.caller, sa, na) {
							changed = true
						}
					}
				}
			}
		}
	}
}

func subst(a alt, args []term) term {
	if a.param < 0 {
		return term{a}
	}
	if a.param >= len(args) {
		return unknown
	}
	return args[a.param]
}
