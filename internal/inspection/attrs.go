package inspection

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
)

// editJSON applies fn to the JSON object form of v (a node or a port)
// and decodes the result back into v, so that paths name the fields as
// the API and database do.
func editJSON(v any, fn func(m map[string]any) error) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if err := fn(m); err != nil {
		return err
	}
	raw, err = json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	// A fresh value, as decoding into the old one would merge maps and
	// keep deleted keys.
	fresh := reflect.New(reflect.TypeOf(v).Elem())
	if err := json.Unmarshal(raw, fresh.Interface()); err != nil {
		return fmt.Errorf("cannot store value: %w", err)
	}
	reflect.ValueOf(v).Elem().Set(fresh.Elem())
	return nil
}

func attrSet(m map[string]any, parts []string, value any) error {
	if len(parts) == 1 {
		if _, ok := m[parts[0]]; !ok {
			return fmt.Errorf("object has no attribute '%s'", parts[0])
		}
		m[parts[0]] = value
		return nil
	}
	cur, err := attrContainer(m, parts, true)
	if err != nil {
		return err
	}
	cur[parts[len(parts)-1]] = value
	return nil
}

// attrContainer walks to the dict holding the last part, creating
// intermediate dicts when create is set.
func attrContainer(m map[string]any, parts []string, create bool) (map[string]any, error) {
	base, ok := m[parts[0]]
	if !ok {
		return nil, fmt.Errorf("object has no attribute '%s'", parts[0])
	}
	cur, ok := base.(map[string]any)
	if !ok {
		if base != nil || !create {
			return nil, fmt.Errorf("'%s' is not a dictionary", parts[0])
		}
		cur = map[string]any{}
		m[parts[0]] = cur
	}
	for _, p := range parts[1 : len(parts)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			if _, exists := cur[p]; exists || !create {
				return nil, fmt.Errorf("'%s' is not a dictionary", p)
			}
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	return cur, nil
}

func attrExtend(m map[string]any, parts []string, value any, unique bool, path string) error {
	var holder map[string]any
	key := parts[len(parts)-1]
	if len(parts) == 1 {
		holder = m
	} else {
		c, err := attrContainer(m, parts, true)
		if err != nil {
			return err
		}
		holder = c
	}
	cur, exists := holder[key]
	list, ok := cur.([]any)
	if exists && cur != nil && !ok {
		return fmt.Errorf("Cannot extend non-list attribute %s with value %s", path, pyRepr(value))
	}
	if !unique || !inList(list, value) {
		list = append(list, value)
	}
	holder[key] = list
	return nil
}

func attrDel(m map[string]any, parts []string) error {
	if len(parts) == 1 {
		if _, ok := m[parts[0]]; !ok {
			return fmt.Errorf("object has no attribute '%s'", parts[0])
		}
		m[parts[0]] = nil
		return nil
	}
	cur, err := attrContainer(m, parts, false)
	if err != nil {
		return err
	}
	k := parts[len(parts)-1]
	if _, ok := cur[k]; !ok {
		return fmt.Errorf("'%s'", k)
	}
	delete(cur, k)
	return nil
}

func setAttribute(_ context.Context, env *actionEnv, a map[string]any) error {
	path := pyStr(a["path"])
	if err := editJSON(env.t.Node(), func(m map[string]any) error { return attrSet(m, normalizePath(path), a["value"]) }); err != nil {
		return actionFailure("Failed to set attribute %s with value %s: %s", path, pyStr(a["value"]), err)
	}
	return nil
}

func extendAttribute(_ context.Context, env *actionEnv, a map[string]any) error {
	path := pyStr(a["path"])
	unique, _ := a["unique"].(bool)
	if err := editJSON(env.t.Node(), func(m map[string]any) error {
		return attrExtend(m, normalizePath(path), a["value"], unique, path)
	}); err != nil {
		return actionFailure("Failed to extend attribute %s: %s", path, err)
	}
	return nil
}

func delAttribute(_ context.Context, env *actionEnv, a map[string]any) error {
	path := pyStr(a["path"])
	if err := editJSON(env.t.Node(), func(m map[string]any) error { return attrDel(m, normalizePath(path)) }); err != nil {
		return actionFailure("Failed to delete attribute at %s: %s", path, err)
	}
	return nil
}

// portAttr is set-, extend- and del-port-attribute: the port is one of
// the node's, by UUID, saved after the change.
func portAttr(kind string) func(ctx context.Context, env *actionEnv, a map[string]any) error {
	return func(ctx context.Context, env *actionEnv, a map[string]any) error {
		id := pyStr(a["port_id"])
		ports, err := env.t.Ports(ctx)
		if err != nil {
			return fmt.Errorf("list ports: %w", err)
		}
		for _, p := range ports {
			if p.UUID != id {
				continue
			}
			path := pyStr(a["path"])
			parts := normalizePath(path)
			err := editJSON(p, func(m map[string]any) error {
				switch kind {
				case "set":
					return attrSet(m, parts, a["value"])
				case "extend":
					u, _ := a["unique"].(bool)
					return attrExtend(m, parts, a["value"], u, path)
				}
				return attrDel(m, parts)
			})
			if err == nil {
				err = env.t.UpdatePort(ctx, p)
			}
			if err != nil {
				switch kind {
				case "set":
					return actionFailure("Failed to set attribute %s for port %s: %s", path, id, err)
				case "extend":
					return actionFailure("Failed to extend attribute %s for port %s: %s", path, id, err)
				}
				return actionFailure("Failed to delete attribute %s for port %s: %s", path, id, strings.TrimSpace(err.Error()))
			}
			return nil
		}
		return errs.New(errs.ClassPortNotFound, map[string]any{"port": id})
	}
}
