// Package errs is the one error type of the service: an Ironic exception
// class name, its HTTP code and the message upstream would produce, carried
// unchanged from store or conductor through JSON-RPC to the API, which
// renders it in upstream's fault envelope (see fault.go).
//
// The class table (classes_table.go) is generated from the spec's
// errors.json by gen_classes.go; message templates are upstream's text
// because clients read faultstring.
package errs

//go:generate go run gen_classes.go

import (
	"errors"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/pyfmt"
)

// Class is an upstream exception class name: one of ironic/common/
// exception.py (the generated Class… constants of classes_table.go), of
// the web framework (webob.go) or declared by hand in classes_extra.go.
// Constructors and Is take a Class so that a misspelt class does not
// compile; a name read off the wire is converted explicitly.
type Class string

// Error is an Ironic exception: Class is upstream's class name (e.g.
// "NodeLocked", or "webob.exc.HTTPNotFound" for the web framework's own
// exceptions), Code the HTTP status, Message the formatted text (Python's
// str(exc)), Headers extra response headers or nil.
type Error struct {
	Class   Class
	Code    int
	Message string
	Headers map[string]string

	// faultCode overrides "Client"/"Server" (ClientSideError's faultcode).
	faultCode string
	// webob is set for web framework exceptions; detail is their detail
	// argument, nil when raised without one (rendered as JSON null).
	webob  bool
	detail *string
	// cause is the failure behind an Unavailable fault, kept for logs and
	// debuginfo; clients see only Message.
	cause error
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the failure an Unavailable fault stands for, nil for
// other errors.
func (e *Error) Unwrap() error { return e.cause }

type classInfo struct {
	Name        Class
	Parent      Class
	Code        int
	Template    string
	HasTemplate bool
	Headers     map[string]string
}

// ModulePrefix is the Python module of Ironic's exceptions; JSON-RPC peers
// may send class names qualified with it.
const ModulePrefix = "ironic.common.exception."

// defaultMessage is IronicException's template, also used for errors that
// are not Ironic errors so that internals never reach the client.
const defaultMessage = "An unknown exception occurred."

var classes = buildRegistry()

func buildRegistry() map[Class]*classInfo {
	m := make(map[Class]*classInfo, len(ironicClasses)+len(webobClasses))
	for i := range ironicClasses {
		m[ironicClasses[i].Name] = &ironicClasses[i]
	}
	for i := range webobClasses {
		c := &webobClasses[i]
		m[c.class] = &classInfo{Name: c.class, Parent: c.parent, Code: c.code}
	}
	return m
}

// Known reports whether class, a name as a peer sends it (bare or
// qualified with ModulePrefix), is in the table.
func Known(class string) bool {
	_, ok := classes[Class(strings.TrimPrefix(class, ModulePrefix))]
	return ok
}

// Parent returns the parent class name of class, "" when unknown.
func Parent(class Class) Class {
	if c, ok := classes[class]; ok {
		return c.Parent
	}
	return ""
}

// New builds the error upstream raises as Class(**kw): the class template
// formatted with kw (Python %-formatting). As upstream, a "code" entry
// overrides the class code, and when kw does not fit the template (missing
// key, wrong type) the raw template is the message. An unknown class gives
// a 500 IronicException-like error that keeps the name.
func New(class Class, kw map[string]any) *Error {
	return build(class, "", kw)
}

// NewMessage is Class(message): an explicit non-empty message wins over the
// template.
func NewMessage(class Class, message string) *Error {
	return build(class, message, nil)
}

// NewMessageKw is Class(message, **kw).
func NewMessageKw(class Class, message string, kw map[string]any) *Error {
	return build(class, message, kw)
}

func build(class Class, message string, kw map[string]any) *Error {
	e := &Error{Class: class, Code: 500}
	info, ok := classes[class]
	if ok {
		e.Code = info.Code
		if info.Headers != nil {
			e.Headers = make(map[string]string, len(info.Headers))
			for k, v := range info.Headers {
				e.Headers[k] = v
			}
		}
	}
	if c, present := kw["code"]; present {
		if n, isInt := pyInt(c); isInt {
			e.Code = int(n)
		}
	}
	if message == "" {
		tmpl := defaultMessage
		if ok && info.HasTemplate {
			tmpl = info.Template
		}
		if s, fits := pyPercent(tmpl, kw); fits {
			message = s
		} else {
			message = tmpl
		}
	}
	e.Message = message
	return e
}

// FromClass rebuilds an error received over JSON-RPC from its class name
// as the peer sent it (bare or qualified with ModulePrefix) and message
// text; the code is the class's own.
func FromClass(class, message string) *Error {
	return NewMessage(WireClass(class), message)
}

// WireClass is the Class a peer named on the wire, bare or qualified with
// ModulePrefix. It is the one conversion from an untrusted string; an
// unknown name stays as sent (and builds a 500, as upstream's RPC client
// does for an exception it cannot import).
func WireClass(class string) Class {
	return Class(strings.TrimPrefix(class, ModulePrefix))
}

// Is reports whether err is (or wraps) an *Error of class or of a subclass
// of it, following the upstream class hierarchy.
func Is(err error, class Class) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	for c := e.Class; c != ""; c = Parent(c) {
		if c == class {
			return true
		}
	}
	return false
}

// As returns the *Error inside err, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// ClientSideError is upstream's ClientSideError(msg, status_code, faultcode):
// a message with an explicit status and fault code ("Client" when empty).
func ClientSideError(msg string, status int, faultCode string) *Error {
	if faultCode == "" {
		faultCode = "Client"
	}
	return &Error{Class: ClassClientSideError, Code: status, Message: msg, faultCode: faultCode}
}

// InvalidInput is upstream's InvalidInput(fieldname, value, msg).
func InvalidInput(fieldname string, value any, msg string) *Error {
	s := "Invalid input for field/attribute " + fieldname + ". Value: '" + pyfmt.Str(value) + "'. " + msg
	return &Error{Class: ClassInvalidInput, Code: 400, Message: s, faultCode: "Client"}
}

// UnknownArgument is upstream's UnknownArgument(argname, msg).
func UnknownArgument(argname, msg string) *Error {
	if msg != "" {
		msg = ": " + msg
	}
	return &Error{Class: ClassUnknownArgument, Code: 400, Message: `Unknown argument: "` + argname + `"` + msg, faultCode: "Client"}
}

// UnknownAttribute is upstream's UnknownAttribute(fieldname, attributes);
// the wording is plural for more than one attribute.
func UnknownAttribute(fieldname string, attributes []string) *Error {
	lead := "Unknown attribute for argument "
	if len(attributes) > 1 {
		lead = "Unknown attributes for argument "
	}
	return &Error{Class: ClassUnknownAttribute, Code: 400, Message: lead + fieldname + ": " + strings.Join(attributes, ", "), faultCode: "Client"}
}

// pyInt converts what Python's int() would accept from a "code" kwarg.
func pyInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case float64:
		return int64(n), true
	case string:
		i, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64)
		return i, err == nil
	}
	return 0, false
}
