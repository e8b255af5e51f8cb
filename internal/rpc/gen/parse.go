package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// The annotation of a ConductorAPI method, one line in its doc comment:
//
//	//rpc:call <upstream method> <RPC version> <kwarg>...
//	//rpc:cast <upstream method> <RPC version> <kwarg>...
//
// with one kwarg per Go argument after ctx and topic, in order:
//
//	<name>[,<flag>...]  the argument travels as the keyword argument <name>
//	*[,<flag>...]       the argument is a struct whose json tags are the kwargs
//
// and the flags:
//
//	optional   a server may go without it (upstream's signature has a default)
//	none       the Go zero value travels as None (null); implies optional
//	since=V    sent only when not empty, and then under RPC version V
//	wire       free-form: the in-process transport passes it through the
//	           JSON encoding, so the conductor sees what a JSON-RPC server
//	           would decode
//	new        a versioned object being created: every field it carries is
//	           one of its changes (upstream's create() writes only those)
//	diff       a versioned object being updated: its changes are the fields
//	           that differ from the stored row (upstream's save() writes
//	           only those)
//
// Arguments and results of the model types in objectTypes travel as
// upstream's versioned objects (package ovo), on every transport. A last
// word adapt=<kwarg> says that upstream sends <kwarg> instead of the
// kwargs of ours: the transports convert between the two forms with the
// hand-written adapters named after the method (see jsonrpc/adapt.go).
const directive = "//rpc:"

// objectTypes are the argument and result types that travel as upstream's
// serialised versioned objects.
var objectTypes = map[string]bool{
	"*model.Node": true, "*model.Port": true, "*model.Portgroup": true, "*model.Allocation": true,
	"*model.VolumeConnector": true, "*model.VolumeTarget": true,
}

// isObject reports whether e is one of objectTypes.
func isObject(e ast.Expr) bool { return objectTypes[typeString(e, nil)] }

// method is one ConductorAPI method with its annotation.
type method struct {
	Name    string // Go name
	RPCName string // upstream's method name
	Version string // RPC version upstream's client asks for
	Cast    bool
	Params  []param // after ctx and topic
	Result  ast.Expr
	Pos     string
	// Adapt is upstream's kwarg that stands for ours ("" when upstream
	// sends the same kwargs).
	Adapt string
}

// param is one Go argument and how it travels.
type param struct {
	Name     string // Go name
	Type     ast.Expr
	Kwarg    string // "" when the argument is the kwargs struct
	Optional bool
	None     bool
	Since    string
	Wire     bool
	New      bool // a versioned object being created
	Diff     bool // a versioned object being updated
}

// object tells whether the argument travels as a versioned object.
func (p *param) object() bool { return isObject(p.Type) }

// hasWire tells whether the in-process transport re-encodes an argument
// or the result.
func (m *method) hasWire() bool {
	for _, p := range m.Params {
		if p.Wire || p.object() {
			return true
		}
	}
	return m.resultObject()
}

// resultObject tells whether the result travels as a versioned object.
func (m *method) resultObject() bool { return m.Result != nil && isObject(m.Result) }

// since returns the argument that raises the version, if any.
func (m *method) since() *param {
	for i := range m.Params {
		if m.Params[i].Since != "" {
			return &m.Params[i]
		}
	}
	return nil
}

// api is what the generator reads from package rpc.
type api struct {
	Methods    []*method
	LocalTypes map[string]bool   // type names declared in package rpc
	Imports    map[string]string // package name -> import path, of api.go
}

// parseAPI reads the ConductorAPI interface from dir/api.go and the type
// names of the whole package in dir.
func parseAPI(dir string) (*api, error) {
	fset := token.NewFileSet()
	path := filepath.Join(dir, "api.go")
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	a := &api{LocalTypes: map[string]bool{}, Imports: map[string]string{}}
	if err := a.readTypes(fset, dir); err != nil {
		return nil, err
	}
	self, err := importPath(dir)
	if err != nil {
		return nil, err
	}
	a.Imports[f.Name.Name] = self
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		a.Imports[name] = p
	}
	var iface *ast.InterfaceType
	ast.Inspect(f, func(n ast.Node) bool {
		if ts, ok := n.(*ast.TypeSpec); ok && ts.Name.Name == "ConductorAPI" {
			iface, _ = ts.Type.(*ast.InterfaceType)
		}
		return iface == nil
	})
	if iface == nil {
		return nil, fmt.Errorf("%s: no ConductorAPI interface", path)
	}
	seen := map[string]string{}
	for _, fld := range iface.Methods.List {
		ft, ok := fld.Type.(*ast.FuncType)
		if !ok || len(fld.Names) != 1 {
			return nil, fmt.Errorf("%s: ConductorAPI may hold only methods", fset.Position(fld.Pos()))
		}
		m, err := parseMethod(fld.Names[0].Name, ft, fld.Doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", fset.Position(fld.Pos()), fld.Names[0].Name, err)
		}
		if other, dup := seen[m.RPCName]; dup {
			return nil, fmt.Errorf("%s: %s: RPC method %s is already %s", fset.Position(fld.Pos()), m.Name, m.RPCName, other)
		}
		seen[m.RPCName] = m.Name
		a.Methods = append(a.Methods, m)
	}
	return a, nil
}

// importPath is the import path of the package in dir, from the module
// path of the go.mod above it.
func importPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("import path of %s: %w", dir, err)
	}
	for root := abs; ; root = filepath.Dir(root) {
		data, err := os.ReadFile(filepath.Join(root, "go.mod"))
		if err == nil {
			mod := modulePath(data)
			if mod == "" {
				return "", fmt.Errorf("%s/go.mod names no module", root)
			}
			rel, err := filepath.Rel(root, abs)
			if err != nil {
				return "", fmt.Errorf("import path of %s: %w", dir, err)
			}
			return path.Join(mod, filepath.ToSlash(rel)), nil
		}
		if filepath.Dir(root) == root {
			return "", fmt.Errorf("no go.mod above %s", abs)
		}
	}
}

// modulePath reads the module directive of a go.mod.
func modulePath(gomod []byte) string {
	for line := range strings.Lines(string(gomod)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			rest = strings.TrimSpace(rest)
			if p, err := strconv.Unquote(rest); err == nil {
				return p
			}
			return rest
		}
	}
	return ""
}

// readTypes records the types package rpc declares, so that the
// generated code of package jsonrpc qualifies them.
func (a *api) readTypes(fset *token.FileSet, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parse %s: %w", name, err)
		}
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
				for _, s := range gd.Specs {
					a.LocalTypes[s.(*ast.TypeSpec).Name.Name] = true
				}
			}
		}
	}
	return nil
}

func parseMethod(name string, ft *ast.FuncType, doc *ast.CommentGroup) (*method, error) {
	m := &method{Name: name}
	var args []param
	for _, f := range ft.Params.List {
		for _, n := range f.Names {
			args = append(args, param{Name: n.Name, Type: f.Type})
		}
	}
	if len(args) < 2 || typeString(args[0].Type, nil) != "context.Context" || args[1].Name != "topic" || typeString(args[1].Type, nil) != "string" {
		return nil, fmt.Errorf("the arguments must begin with (ctx context.Context, topic string)")
	}
	m.Params = args[2:]
	for _, p := range m.Params {
		if err := checkType(p.Type); err != nil {
			return nil, fmt.Errorf("argument %s: %w", p.Name, err)
		}
	}
	var results []ast.Expr
	if ft.Results != nil {
		for _, f := range ft.Results.List {
			for range max(1, len(f.Names)) {
				results = append(results, f.Type)
			}
		}
	}
	switch {
	case len(results) == 1 && typeString(results[0], nil) == "error":
	case len(results) == 2 && typeString(results[1], nil) == "error":
		if err := checkType(results[0]); err != nil {
			return nil, fmt.Errorf("result: %w", err)
		}
		m.Result = results[0]
	default:
		return nil, fmt.Errorf("the results must be error or (T, error)")
	}
	var line string
	if doc != nil {
		for _, c := range doc.List {
			if strings.HasPrefix(c.Text, directive) {
				if line != "" {
					return nil, fmt.Errorf("more than one %s annotation", directive)
				}
				line = strings.TrimPrefix(c.Text, directive)
			}
		}
	}
	if line == "" {
		return nil, fmt.Errorf("no %scall or %scast annotation", directive, directive)
	}
	if err := m.annotate(strings.Fields(line)); err != nil {
		return nil, fmt.Errorf("annotation %q: %w", directive+line, err)
	}
	return m, nil
}

// annotate applies the words of an annotation to m.
func (m *method) annotate(words []string) error {
	if len(words) < 3 {
		return fmt.Errorf("want call|cast, the method name, the version and the kwargs")
	}
	switch words[0] {
	case "call":
	case "cast":
		m.Cast = true
		if m.Result != nil {
			return fmt.Errorf("a cast answers nothing, but the method has a result")
		}
	default:
		return fmt.Errorf("%q is neither call nor cast", words[0])
	}
	m.RPCName, m.Version = words[1], words[2]
	if !isVersion(m.Version) {
		return fmt.Errorf("version %q is not major.minor", m.Version)
	}
	kws := words[3:]
	if n := len(kws); n > 0 {
		if v, ok := strings.CutPrefix(kws[n-1], "adapt="); ok {
			if v == "" {
				return fmt.Errorf("adapt= names no kwarg")
			}
			m.Adapt, kws = v, kws[:n-1]
		}
	}
	if len(kws) != len(m.Params) {
		return fmt.Errorf("%d kwargs for %d arguments", len(kws), len(m.Params))
	}
	for i, kw := range kws {
		p := &m.Params[i]
		parts := strings.Split(kw, ",")
		if parts[0] != "*" {
			p.Kwarg = parts[0]
		} else if len(m.Params) != 1 {
			return fmt.Errorf("* is for a method whose only argument is its kwargs struct")
		}
		for _, flag := range parts[1:] {
			switch v, ok := strings.CutPrefix(flag, "since="); {
			case flag == "optional":
				p.Optional = true
			case flag == "none":
				p.None, p.Optional = true, true
			case flag == "wire":
				p.Wire = true
			case flag == "new" || flag == "diff":
				if !p.object() {
					return fmt.Errorf("kwarg %s: %s is for a versioned object, not %s", parts[0], flag, typeString(p.Type, nil))
				}
				p.New, p.Diff = flag == "new", flag == "diff"
			case ok && isVersion(v):
				if m.since() != nil {
					return fmt.Errorf("more than one since=")
				}
				p.Since = v
			default:
				return fmt.Errorf("kwarg %s: unknown flag %q", parts[0], flag)
			}
		}
		if p.Kwarg == "" && (p.Optional || p.Since != "") {
			return fmt.Errorf("the kwargs struct carries its own optional markers")
		}
		if p.None && zeroValue(p.Type) == "nil" {
			return fmt.Errorf("kwarg %s: none is for a value type; %s already travels as None when nil", p.Kwarg, typeString(p.Type, nil))
		}
	}
	return nil
}

func isVersion(v string) bool {
	major, minor, ok := strings.Cut(v, ".")
	_, e1 := strconv.Atoi(major)
	_, e2 := strconv.Atoi(minor)
	return ok && e1 == nil && e2 == nil
}

// checkType refuses the type expressions typeString cannot print.
func checkType(e ast.Expr) error {
	switch t := e.(type) {
	case *ast.Ident:
		return nil
	case *ast.SelectorExpr:
		if _, ok := t.X.(*ast.Ident); ok {
			return nil
		}
	case *ast.StarExpr:
		return checkType(t.X)
	case *ast.ArrayType:
		if t.Len == nil {
			return checkType(t.Elt)
		}
	case *ast.MapType:
		if err := checkType(t.Key); err != nil {
			return err
		}
		return checkType(t.Value)
	case *ast.InterfaceType:
		if len(t.Methods.List) == 0 {
			return nil
		}
	}
	return fmt.Errorf("unsupported type expression %T: name the type in package rpc", e)
}

// typeString prints a type expression, qualifying the types of package
// rpc with "rpc." when local (the types declared there) is not nil.
func typeString(e ast.Expr, local map[string]bool) string {
	switch t := e.(type) {
	case *ast.Ident:
		if local[t.Name] {
			return "rpc." + t.Name
		}
		return t.Name
	case *ast.SelectorExpr:
		return typeString(t.X, nil) + "." + t.Sel.Name
	case *ast.StarExpr:
		return "*" + typeString(t.X, local)
	case *ast.ArrayType:
		return "[]" + typeString(t.Elt, local)
	case *ast.MapType:
		return "map[" + typeString(t.Key, local) + "]" + typeString(t.Value, local)
	case *ast.InterfaceType:
		if len(t.Methods.List) == 0 {
			return "any"
		}
	}
	panic(fmt.Sprintf("unsupported type expression %T passed checkType", e))
}

// zeroValue is the literal of e's zero value.
func zeroValue(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		switch id.Name {
		case "string":
			return `""`
		case "bool":
			return "false"
		case "int", "int32", "int64", "float64":
			return "0"
		case "any", "error":
			return "nil"
		}
		return typeString(e, nil) + "{}"
	}
	return "nil"
}
