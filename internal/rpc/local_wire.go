package rpc

import (
	"encoding/json"
	"fmt"
)

// The API decodes bodies with json.Number so that integers keep their
// spelling; over JSON-RPC the conductor then sees what the wire carries
// (float64 numbers). The in-process transport sends the free-form
// arguments through the same encoding, so that drivers, steps and
// inspection hooks see the same values in every deployment mode.

// wire returns v as a JSON-RPC server would decode it.
func wire[T any](v T) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err != nil {
		return out, fmt.Errorf("encode RPC arguments: %w", err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return out, fmt.Errorf("decode RPC arguments: %w", err)
	}
	return out, nil
}
