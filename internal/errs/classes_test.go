package errs

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/spectest"
)

type specException struct {
	Name         string            `json:"name"`
	Parent       string            `json:"parent"`
	Code         int               `json:"code"`
	Template     *string           `json:"message_template"`
	Placeholders []string          `json:"placeholders"`
	Headers      map[string]string `json:"headers"`
}

func loadExceptions(t *testing.T) []specException {
	t.Helper()
	var doc struct {
		Count      int             `json:"count"`
		Exceptions []specException `json:"exceptions"`
	}
	spectest.LoadJSON(t, "ironic/api/errors.json", &doc)
	if len(doc.Exceptions) != doc.Count {
		t.Fatalf("errors.json lists %d classes, count says %d", len(doc.Exceptions), doc.Count)
	}
	return doc.Exceptions
}

func TestClassTableMatchesSpec(t *testing.T) {
	specs := loadExceptions(t)
	if len(ironicClasses) != len(specs) {
		t.Errorf("table has %d classes, errors.json %d", len(ironicClasses), len(specs))
	}
	for _, s := range specs {
		c, ok := classes[Class(s.Name)]
		if !ok {
			t.Errorf("%s: missing from table", s.Name)
			continue
		}
		if string(c.Parent) != s.Parent || c.Code != s.Code {
			t.Errorf("%s: parent/code %s/%d, spec %s/%d", s.Name, c.Parent, c.Code, s.Parent, s.Code)
		}
		if (s.Template != nil) != c.HasTemplate || (s.Template != nil && *s.Template != c.Template) {
			t.Errorf("%s: template %q (has=%t), spec %v", s.Name, c.Template, c.HasTemplate, s.Template)
		}
		if fmt.Sprint(c.Headers) != fmt.Sprint(s.Headers) && len(c.Headers)+len(s.Headers) > 0 {
			t.Errorf("%s: headers %v, spec %v", s.Name, c.Headers, s.Headers)
		}
	}
}

// Every template formatted with all of its placeholders must equal the
// template with each placeholder substituted, and with one placeholder
// missing must fall back to the raw template, as oslo's IronicException.
func TestEveryTemplateFormats(t *testing.T) {
	for _, s := range loadExceptions(t) {
		if s.Template == nil {
			continue
		}
		kw := map[string]any{}
		want := *s.Template
		for _, p := range s.Placeholders {
			if strings.Contains(want, "%("+p+")d") {
				kw[p] = 42
				want = strings.ReplaceAll(want, "%("+p+")d", "42")
			} else {
				kw[p] = "<" + p + ">"
				want = strings.ReplaceAll(want, "%("+p+")s", "<"+p+">")
			}
		}
		e := New(Class(s.Name), kw)
		if e.Message != want || e.Code != s.Code || string(e.Class) != s.Name {
			t.Errorf("%s: got %d %q, want %d %q", s.Name, e.Code, e.Message, s.Code, want)
		}
		if len(s.Placeholders) > 0 {
			delete(kw, s.Placeholders[0])
			if got := New(Class(s.Name), kw).Message; got != *s.Template {
				t.Errorf("%s missing %s: got %q, want raw template", s.Name, s.Placeholders[0], got)
			}
		}
	}
}

func TestMessageFormatting(t *testing.T) {
	cases := []struct {
		name  string
		class Class
		kw    map[string]any
		want  string
		code  int
	}{
		{"node locked", "NodeLocked", map[string]any{"node": "n1", "host": "c1"},
			"Node n1 is locked by host c1, please retry after the current operation is completed.", 409},
		{"extra kwargs ignored", "NodeNotFound", map[string]any{"node": "n1", "other": 1}, "Node n1 could not be found.", 404},
		{"None value", "NodeNotFound", map[string]any{"node": nil}, "Node None could not be found.", 404},
		{"list value", "NodeNotFound", map[string]any{"node": []any{"a", "b'", nil, true, 1.5}},
			`Node ['a', "b'", None, True, 1.5] could not be found.`, 404},
		{"float value", "NodeNotFound", map[string]any{"node": 1234567.0}, "Node 1234567.0 could not be found.", 404},
		{"d with float truncates", "InsufficientDiskSpace", map[string]any{"path": "/p", "required": 10.9, "actual": 3},
			"Disk volume where '/p' is located doesn't have enough disk space. Required 10 MiB, only 3 MiB available space present.", 500},
		{"d with string is raw template", "InsufficientDiskSpace", map[string]any{"path": "/p", "required": "10", "actual": 3},
			"Disk volume where '%(path)s' is located doesn't have enough disk space. Required %(required)d MiB, only %(actual)d MiB available space present.", 500},
		{"code kwarg overrides", "NodeNotFound", map[string]any{"node": "n", "code": 410}, "Node n could not be found.", 410},
		{"no template class", "KeystoneFailure", nil, "An unknown exception occurred.", 500},
		{"unknown class", "NoSuchClass", nil, "An unknown exception occurred.", 500},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := New(c.class, c.kw)
			if e.Message != c.want || e.Code != c.code {
				t.Errorf("got %d %q, want %d %q", e.Code, e.Message, c.code, c.want)
			}
		})
	}
}

func TestPyPercent(t *testing.T) {
	cases := []struct {
		tmpl string
		kw   map[string]any
		want string
		ok   bool
	}{
		{"100%% of %(a)s", map[string]any{"a": "x"}, "100% of x", true},
		{"%(a)5s|%(a)-5s|%(b)d", map[string]any{"a": "x", "b": 2.9}, "    x|x    |2", true},
		{"%(a)r", map[string]any{"a": `it's "q"`}, `'it\'s "q"'`, true},
		{"%(a)s", map[string]any{"a": 1e16}, "1e+16", true},
		{"%(a)s", map[string]any{"a": 1e-5}, "1e-05", true},
		{"%(a)s", map[string]any{"a": errors.New("boom")}, "boom", true},
		{"%(b)d", map[string]any{"b": true}, "1", true},
		{"%(a)x", map[string]any{"a": 1}, "", false},
		{"%s", map[string]any{}, "", false},
		{"trailing %", nil, "", false},
	}
	for _, c := range cases {
		got, ok := pyPercent(c.tmpl, c.kw)
		if got != c.want || ok != c.ok {
			t.Errorf("pyPercent(%q) = %q %t, want %q %t", c.tmpl, got, ok, c.want, c.ok)
		}
	}
}

func TestExplicitMessageAndFromClass(t *testing.T) {
	if e := NewMessage(ClassInvalidParameterValue, "bad thing"); e.Message != "bad thing" || e.Code != 400 {
		t.Errorf("NewMessage: %+v", e)
	}
	if e := NewMessageKw(ClassNodeLocked, "", map[string]any{"node": "a", "host": "b"}); !strings.HasPrefix(e.Message, "Node a is locked") {
		t.Errorf("empty message must use the template: %q", e.Message)
	}
	e := FromClass(ModulePrefix+"NodeLocked", "Node x is locked by host y, please retry after the current operation is completed.")
	if e.Class != ClassNodeLocked || e.Code != 409 || !Is(e, ClassConflict) {
		t.Errorf("FromClass: %+v", e)
	}
	if e := FromClass("Unauthorized", "no"); e.Headers["WWW-Authenticate"] != `Basic realm="Baremetal API"` {
		t.Errorf("class headers not carried: %v", e.Headers)
	}
	if !Known("NodeLocked") || !Known(ModulePrefix+"NodeLocked") || Known("Nope") {
		t.Error("Known")
	}
}

func TestIsFollowsHierarchy(t *testing.T) {
	err := fmt.Errorf("get node: %w", New(ClassDuplicateNodeOnLookup, map[string]any{"node": "n"}))
	for _, class := range []Class{ClassDuplicateNodeOnLookup, ClassNodeNotFound, ClassNotFound, ClassIronicException} {
		if !Is(err, class) {
			t.Errorf("Is(%s) = false", class)
		}
	}
	if Is(err, ClassConflict) || Is(errors.New("plain"), ClassNotFound) {
		t.Error("Is matched an unrelated class")
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != 404 {
		t.Error("errors.As through wrapping")
	}
	if !Is(Abort(404), ClassWebobHTTPClientError) {
		t.Error("webob hierarchy")
	}
}

func TestClientSideErrors(t *testing.T) {
	cases := []struct {
		e    *Error
		want string
	}{
		{InvalidInput("a.b", 5, "bad"), "Invalid input for field/attribute a.b. Value: '5'. bad"},
		{UnknownArgument("x", ""), `Unknown argument: "x"`},
		{UnknownArgument("x", "why"), `Unknown argument: "x": why`},
		{UnknownAttribute("node", []string{"a"}), "Unknown attribute for argument node: a"},
		{UnknownAttribute("node", []string{"a", "b"}), "Unknown attributes for argument node: a, b"},
	}
	for _, c := range cases {
		if c.e.Message != c.want || c.e.Code != 400 {
			t.Errorf("got %d %q, want 400 %q", c.e.Code, c.e.Message, c.want)
		}
	}
}

func TestHelpers(t *testing.T) {
	cases := []struct {
		e     *Error
		class Class
		code  int
		msg   string
	}{
		{NodeLocked("n", "h"), "NodeLocked", 409, "Node n is locked by host h, please retry after the current operation is completed."},
		{NodeNotFound("n"), "NodeNotFound", 404, "Node n could not be found."},
		{InvalidParameterValue("bad"), "InvalidParameterValue", 400, "bad"},
		{MissingParameterValue("gone"), "MissingParameterValue", 400, "gone"},
		{InvalidStateRequested("deploy", "n", "active"), "InvalidStateRequested", 400, `The requested action "deploy" can not be performed on node "n" while it is in state "active".`},
		{NodeInMaintenance("power", "n"), "NodeInMaintenance", 400, "The power operation can't be performed on node n because it's in maintenance mode."},
		{NotAcceptable(), "NotAcceptable", 406, "Request not acceptable."},
		{TemporaryFailure(), "TemporaryFailure", 503, "Resource temporarily unavailable, please retry."},
		{NoFreeConductorWorker(), "NoFreeConductorWorker", 503, "Requested action cannot be performed due to lack of free conductor workers."},
	}
	for _, c := range cases {
		if c.e.Class != c.class || c.e.Code != c.code || c.e.Message != c.msg {
			t.Errorf("%s: got %s %d %q, want %d %q", c.class, c.e.Class, c.e.Code, c.e.Message, c.code, c.msg)
		}
	}
}
