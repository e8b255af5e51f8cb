package model

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The column is byte-compatible: the view writes the values it is given
// under upstream's keys and deletes keys, so what a node decoded from the
// database encodes back to is unchanged by reads.
func TestInternalInfoJSON(t *testing.T) {
	var n Node
	if err := json.Unmarshal([]byte(`{"driver_internal_info":{"clean_step_index":2,"agent_url":"http://a:9999","clean_steps":[{"step":"s","interface":"deploy"}],"cleaning_reboot":true}}`), &n); err != nil {
		t.Fatal(err)
	}
	ii := n.InternalInfo()
	if got, ok := ii.Int(DIICleanStepIndex); !ok || got != 2 {
		t.Errorf("Int(clean_step_index) = %v, %v; want 2, true", got, ok)
	}
	if _, ok := ii.Get(DIICleanStepIndex).(float64); !ok {
		t.Errorf("clean_step_index read as %T; want float64 as decoded", ii.Get(DIICleanStepIndex))
	}
	if got := ii.AgentURL(); got != "http://a:9999" {
		t.Errorf("AgentURL() = %q", got)
	}
	if got := ii.Steps(DIICleanSteps); len(got) != 1 || got[0]["step"] != "s" {
		t.Errorf("Steps(clean_steps) = %v", got)
	}
	ii.RemoveAsyncStepFlags()
	ii.SetAgentToken("tok")
	ii.Set(DIIDeploySteps, nil)
	ii.WipeAgentTokenAndURL()
	out, err := json.Marshal(n.DriverInternalInfo)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"clean_step_index":2,"clean_steps":[{"interface":"deploy","step":"s"}],"deploy_steps":null}`
	if string(out) != want {
		t.Errorf("column = %s\nwant     %s", out, want)
	}
}

func TestInternalInfoNilMap(t *testing.T) {
	var n Node
	ii := n.InternalInfo()
	if ii.AgentToken() != "" || ii.HasAgentToken() || ii.BoolOr(DIIStepsValidated, true) != true {
		t.Error("reads of a node without driver_internal_info are not the zero values")
	}
	ii.Delete(DIIAgentURL) // no map: nothing to do, no panic
	if n.DriverInternalInfo != nil {
		t.Error("a deletion created the map")
	}
	ii.SetAgentURL("http://b:9999")
	if !reflect.DeepEqual(n.DriverInternalInfo, map[string]any{"agent_url": "http://b:9999"}) {
		t.Errorf("DriverInternalInfo = %v", n.DriverInternalInfo)
	}
}

// TestNoRawDriverInternalInfo fails when non-test code outside this
// package reads or writes keys of DriverInternalInfo instead of going
// through InternalInfo and the DII* keys: it indexes the map or deletes
// from it, or hands the map itself on where its keys get read out of
// sight (see rawUse). Whole-map uses (rendering, copying, storing the
// column) are not key reads and pass.
func TestNoRawDriverInternalInfo(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "internal/model" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(node ast.Node) bool {
			if what := rawUse(node); what != "" {
				found = append(found, fset.Position(node.Pos()).String()+": "+what)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(found)
	for _, f := range found {
		t.Errorf("%s; use Node.InternalInfo() and the model.DII* keys", f)
	}
}

// rawUse says how node reaches keys of a DriverInternalInfo map behind
// InternalInfo's back, "" when it does not: the map indexed or deleted
// from; bound to a variable or returned, so that its keys are read
// through the alias; or passed to a call along with a key.
func rawUse(node ast.Node) string {
	switch x := node.(type) {
	case *ast.IndexExpr:
		if isDII(x.X) {
			return "driver_internal_info indexed directly"
		}
	case *ast.CallExpr:
		if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "delete" && len(x.Args) > 0 && isDII(x.Args[0]) {
			return "key deleted from driver_internal_info directly"
		}
		for _, a := range x.Args {
			if isDII(a) && slices.ContainsFunc(x.Args, isKey) {
				return "driver_internal_info passed to a call with a key"
			}
		}
	case *ast.AssignStmt:
		for i, r := range x.Rhs {
			if _, ok := x.Lhs[min(i, len(x.Lhs)-1)].(*ast.Ident); ok && isDII(r) {
				return "driver_internal_info bound to a variable"
			}
		}
	case *ast.ValueSpec:
		if slices.ContainsFunc(x.Values, isDII) {
			return "driver_internal_info bound to a variable"
		}
	case *ast.ReturnStmt:
		if slices.ContainsFunc(x.Results, isDII) {
			return "driver_internal_info returned"
		}
	}
	return ""
}

// isDII reports whether e is a DriverInternalInfo field itself.
func isDII(e ast.Expr) bool {
	sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "DriverInternalInfo"
}

// isKey reports whether e looks like a key: a string literal or a DII*
// constant.
func isKey(e ast.Expr) bool {
	switch k := ast.Unparen(e).(type) {
	case *ast.BasicLit:
		return k.Kind == token.STRING
	case *ast.SelectorExpr:
		return strings.HasPrefix(k.Sel.Name, "DII")
	case *ast.Ident:
		return strings.HasPrefix(k.Name, "DII")
	}
	return false
}
