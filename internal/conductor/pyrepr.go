package conductor

import "github.com/openkeel/ironic/internal/pyfmt"

// Several upstream messages interpolate Python values (a step dict, a tuple
// of states); clients show last_error and fault strings verbatim, so they
// are rendered as Python's repr() would.

// stepKeyOrder is the order keys of a step dict appear in when upstream
// builds or copies it: the user's JSON order is lost in a Go map, so the
// usual one is assumed.
var stepKeyOrder = []string{"interface", "step", "args", "priority", "abortable", "argsinfo", "requires_ramdisk"}

// pyRepr renders v as Python's repr(), maps in step-dict key order.
func pyRepr(v any) string { return pyfmt.ReprJSONKeysFirst(v, stepKeyOrder...) }

// pyTuple renders a tuple of strings.
func pyTuple(items []string) string { return pyfmt.Tuple(items) }
