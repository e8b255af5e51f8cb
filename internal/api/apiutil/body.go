package apiutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/openkeel/ironic/internal/api/middleware"
)

// DecodeBody reads and checks a JSON request body as upstream's
// method.body does (middleware.ReadBody and Unmarshal: size and depth
// limits, Python's messages for bad JSON, an empty body is {}) and
// returns it with objects as *Dict, so messages that print the body show
// the client's key order. Numbers are json.Number.
func DecodeBody(r *http.Request) (any, error) {
	raw, err := middleware.ReadBody(r)
	if err != nil {
		return nil, err
	}
	return DecodeOrdered(raw)
}

// DecodeOrdered decodes raw (checked as DecodeBody does) keeping key order.
func DecodeOrdered(raw []byte) (any, error) {
	var probe any
	if err := middleware.Unmarshal(raw, &probe); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return NewDict(), nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, fmt.Errorf("decode body: %w", err)
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			d := NewDict()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				// Python's json keeps the last of repeated keys at the
				// position of the first.
				d.Set(kt.(string), v)
			}
			_, err := dec.Token()
			return d, err
		case '[':
			out := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
			_, err := dec.Token()
			return out, err
		}
	}
	return tok, nil
}

// Plain converts *Dict values (at any depth) into map[string]any.
func Plain(v any) any {
	switch x := v.(type) {
	case *Dict:
		m := make(map[string]any, x.Len())
		for _, k := range x.keys {
			m[k] = Plain(x.vals[k])
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = Plain(c)
		}
		return out
	}
	return v
}

// DecodeObject is the JSON object of r's body checked against the schema
// name under arg: the body as sent (objects in their key order, for
// messages) and as a plain map.
func DecodeObject(r *http.Request, name, arg string) (*Dict, map[string]any, error) {
	body, err := DecodeBody(r)
	if err != nil {
		return nil, nil, err
	}
	if err := MustSchema(name).ValidateBody(arg, body); err != nil {
		return nil, nil, err
	}
	return body.(*Dict), Plain(body).(map[string]any), nil
}
