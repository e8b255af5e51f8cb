package jsonrpc

import (
	"context"
	"reflect"
	"strings"

	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/rpc/ovo"
)

// method is one RPC method as the server dispatches it: its upstream
// name, the type of its keyword arguments on the wire, and how to call
// the conductor with them.
type method struct {
	name   string
	params reflect.Type // struct whose json tags are upstream's kwargs
	serve  func(ctx context.Context, h rpc.ConductorAPI, codec *ovo.Codec, params any) (any, error)
}

// def declares a method whose kwargs decode into P. A P field is a
// required kwarg unless its tag says omitempty or rpc:"optional",
// mirroring the defaults of upstream's manager signatures. serve encodes
// the objects it answers with codec.
func def[P any](name string, serve func(context.Context, rpc.ConductorAPI, *ovo.Codec, *P) (any, error)) *method {
	return &method{
		name:   name,
		params: reflect.TypeFor[P](),
		serve: func(ctx context.Context, h rpc.ConductorAPI, codec *ovo.Codec, p any) (any, error) {
			return serve(ctx, h, codec, p.(*P))
		},
	}
}

// none adapts a call that answers nothing.
func none(err error) (any, error) { return nil, err }

// methods indexes methodList by name.
var methods = func() map[string]*method {
	m := make(map[string]*method, len(methodList))
	for _, x := range methodList {
		if _, dup := m[x.name]; dup {
			panic("jsonrpc: method " + x.name + " declared twice")
		}
		m[x.name] = x
	}
	return m
}()

// kwarg is one keyword argument of a method's wire struct.
type kwarg struct {
	name     string
	required bool
}

// kwargs lists the keyword arguments of params, following embedded
// structs as encoding/json does.
func kwargs(t reflect.Type) []kwarg {
	var out []kwarg
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			out = append(out, kwargs(f.Type)...)
			continue
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		optional := strings.Contains(","+opts+",", ",omitempty,") || f.Tag.Get("rpc") == "optional"
		out = append(out, kwarg{name: name, required: !optional})
	}
	return out
}
