package apiutil

import "github.com/openkeel/ironic/internal/pyfmt"

// A Dict prints in its key order, as the Python dict it stands for.
var _ pyfmt.Ordered = (*Dict)(nil)

// PyRepr is Python's repr() of a decoded JSON value, as upstream's
// messages print request values (pyfmt.ReprJSON): json.Number keeps its
// literal (an integer or a float repr), a *Dict its key order; a plain map
// prints in sorted key order because Go maps have none.
func PyRepr(v any) string { return pyfmt.ReprJSON(v) }
