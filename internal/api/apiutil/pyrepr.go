package apiutil

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/pyfmt"
)

// PyRepr is Python's repr() of a decoded JSON value, as upstream's
// messages print request values: json.Number keeps its literal (an integer
// or a float repr), a *Dict its key order; a plain map prints in sorted key
// order because Go maps have none.
func PyRepr(v any) string {
	switch x := v.(type) {
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			f, err := x.Float64()
			if err != nil {
				return string(x)
			}
			return pyfmt.Float(f)
		}
		return string(x)
	case float64:
		// Values read back from JSON columns lost the int/float
		// distinction; integral ones were Python ints.
		if x == math.Trunc(x) && math.Abs(x) < 1e16 {
			return strconv.FormatFloat(x, 'f', 0, 64)
		}
		return pyfmt.Float(x)
	case []any:
		items := make([]string, len(x))
		for i, s := range x {
			items[i] = PyRepr(s)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case *Dict:
		items := make([]string, 0, x.Len())
		for _, k := range x.keys {
			items = append(items, pyfmt.Quote(k)+": "+PyRepr(x.vals[k]))
		}
		return "{" + strings.Join(items, ", ") + "}"
	case map[string]any:
		return PyRepr(sortedDict(x))
	}
	return pyfmt.Repr(v)
}

func sortedDict(m map[string]any) *Dict {
	d := NewDict()
	for _, k := range sortedKeys(m) {
		d.Set(k, m[k])
	}
	return d
}
