package pyfmt

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
)

// The expected texts are what CPython 3.11 prints for the same values.
func TestRepr(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{nil, "None"},
		{true, "True"},
		{false, "False"},
		{"abc", "'abc'"},
		{"it's", `"it's"`},
		{`say "hi" it's`, `'say "hi" it\'s'`},
		{"a\tb\nc\\", `'a\tb\nc\\'`},
		{"\x01\x7f", `'\x01\x7f'`},
		{"\u00a0", `'\xa0'`},
		{"é", "'é'"},
		{"\u200b", `'\u200b'`},
		{3, "3"},
		{int64(-7), "-7"},
		{1.0, "1.0"},
		{0.1, "0.1"},
		{1e16, "1e+16"},
		{1.5e-5, "1.5e-05"},
		{0.0001, "0.0001"},
		{123456789012345.6, "123456789012345.6"},
		{math.Inf(1), "inf"},
		{math.NaN(), "nan"},
		{[]string{"a", "b"}, "['a', 'b']"},
		{[]any{"a", 1, nil, true}, "['a', 1, None, True]"},
		{map[string]any{"b": 1, "a": "x"}, "{'a': 'x', 'b': 1}"},
		{map[string]string{"k": "v"}, "{'k': 'v'}"},
	}
	for _, c := range cases {
		if got := Repr(c.in); got != c.want {
			t.Errorf("Repr(%#v) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestStr(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{"plain", "plain"},
		{nil, "None"},
		{errors.New("boom"), "boom"},
		{[]string{"x"}, "['x']"},
		{2.5, "2.5"},
		{false, "False"},
	}
	for _, c := range cases {
		if got := Str(c.in); got != c.want {
			t.Errorf("Str(%#v) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestInt(t *testing.T) {
	cases := []struct {
		in   string
		want int
		ok   bool
	}{
		{"10", 10, true},
		{" 42\n", 42, true},
		{"+5", 5, true},
		{"-3", -3, true},
		{"1_000", 1000, true},
		{"1__0", 0, false},
		{"_1", 0, false},
		{"1_", 0, false},
		{"", 0, false},
		{"-", 0, false},
		{"1.5", 0, false},
		{"0x10", 0, false},
		{"abc", 0, false},
		{"99999999999999999999999", 0, false},
	}
	for _, c := range cases {
		got, ok := Int(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("Int(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestJSONValues(t *testing.T) {
	cases := []struct {
		in        any
		str, repr string
	}{
		{float64(3), "3", "3"},
		{2.5, "2.5", "2.5"},
		{"s", "s", "'s'"},
		{[]any{float64(1), "a", 1.5}, "[1, 'a', 1.5]", "[1, 'a', 1.5]"},
		{map[string]any{"n": float64(10), "b": false}, "{'b': False, 'n': 10}", "{'b': False, 'n': 10}"},
		{nil, "None", "None"},
	}
	for _, c := range cases {
		if got := StrJSON(c.in); got != c.str {
			t.Errorf("StrJSON(%#v) = %s, want %s", c.in, got, c.str)
		}
		if got := ReprJSON(c.in); got != c.repr {
			t.Errorf("ReprJSON(%#v) = %s, want %s", c.in, got, c.repr)
		}
	}
}

func TestTruthy(t *testing.T) {
	for _, v := range []any{nil, false, "", float64(0), 0, []any{}, map[string]any{}} {
		if Truthy(v) {
			t.Errorf("Truthy(%#v) = true", v)
		}
	}
	for _, v := range []any{true, "x", 0.5, 1, []any{nil}, map[string]any{"": nil}, struct{}{}} {
		if !Truthy(v) {
			t.Errorf("Truthy(%#v) = false", v)
		}
	}
}

// The edges are where a hand-written encoder goes wrong: 0x7e is the last
// literal byte and DEL (0x7f) is escaped although it is ASCII; U+FFFF is the
// last single unit and U+10000 the first surrogate pair.
func TestAppendJSONString(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", `""`},
		{" ~", `" ~"`},
		{"\x7f", `"\u007f"`},
		{"\u0080", `"\u0080"`},
		{"\x00\x1f", `"\u0000\u001f"`},
		{"\uffff", `"\uffff"`},
		{"\U00010000", `"\ud800\udc00"`},
		{"\U0010ffff", `"\udbff\udfff"`},
		{"<>&/\u2028", `"<>&/\u2028"`},
		{"\"\\\b\f\n\r\t", `"\"\\\b\f\n\r\t"`},
		{"é", `"\u00e9"`},
		{"\x00\x1f\x7f<>&\u2028\U0001F600é\"\\/\b\f\n\r\t", `"\u0000\u001f\u007f<>&\u2028\ud83d\ude00\u00e9\"\\/\b\f\n\r\t"`},
		// Go strings may hold bytes that are not UTF-8; Python would have
		// decoded them to U+FFFD before encoding.
		{"a\xffb", `"a\ufffdb"`},
	}
	for _, c := range cases {
		if got := string(AppendJSONString(nil, c.in)); got != c.want {
			t.Errorf("AppendJSONString(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	if got := string(AppendJSONString([]byte("x: "), "y")); got != `x: "y"` {
		t.Errorf("appending to a prefix: %s", got)
	}
}

// orderedDict is an Ordered as the API's apiutil.Dict is one: keys in
// insertion order.
type orderedDict struct {
	keys []string
	vals map[string]any
}

func (d orderedDict) Keys() []string { return d.keys }

func (d orderedDict) Get(k string) (any, bool) {
	v, ok := d.vals[k]
	return v, ok
}

// ReprJSON prints request values in the API's messages (decoded with
// UseNumber, key order kept) and stored JSON values in the drivers'; the
// expected texts are CPython's repr of the same JSON as json.loads
// decodes it.
func TestReprJSON(t *testing.T) {
	cases := []struct {
		name string
		in   any
		want string
	}{
		{"int number", json.Number("10"), "10"},
		{"negative int number", json.Number("-3"), "-3"},
		{"float number", json.Number("1.50"), "1.5"},
		{"exponent number", json.Number("1e3"), "1000.0"},
		{"big float number", json.Number("1e16"), "1e+16"},
		{"integral float64", float64(7), "7"},
		{"large integral float64", 1e16, "1e+16"},
		{"fractional float64", 1234567.5, "1234567.5"},
		{"small float64", 1.5e-5, "1.5e-05"},
		{"string", "it's", `"it's"`},
		{"non-printable", "a\u00a0b", `'a\xa0b'`},
		{"list", []any{json.Number("1"), "a", nil, true}, "[1, 'a', None, True]"},
		{"string list", []string{"x", "y"}, "['x', 'y']"},
		{"map sorted", map[string]any{"b": float64(1), "a": []any{}}, "{'a': [], 'b': 1}"},
		{"string map", map[string]string{"k": "v"}, "{'k': 'v'}"},
		{"ordered", orderedDict{keys: []string{"z", "a"}, vals: map[string]any{"z": json.Number("2.0"), "a": map[string]any{"y": nil, "x": false}}},
			"{'z': 2.0, 'a': {'x': False, 'y': None}}"},
		{"ordered nested in list", []any{orderedDict{keys: []string{"b", "a"}, vals: map[string]any{"a": "1", "b": "2"}}}, "[{'b': '2', 'a': '1'}]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ReprJSON(c.in); got != c.want {
				t.Errorf("ReprJSON(%#v) = %s, want %s", c.in, got, c.want)
			}
		})
	}
}

// The conductor prints step dicts with their keys in the order upstream
// builds them; keys it does not name follow, sorted, at every depth.
func TestReprJSONKeysFirst(t *testing.T) {
	step := []string{"interface", "step", "args", "priority"}
	cases := []struct {
		name  string
		in    any
		first []string
		want  string
	}{
		{"step dict", map[string]any{"priority": float64(10), "zeta": 1, "args": map[string]any{}, "step": "erase_devices", "interface": "deploy"}, step,
			"{'interface': 'deploy', 'step': 'erase_devices', 'args': {}, 'priority': 10, 'zeta': 1}"},
		{"nested args", map[string]any{"step": "s", "args": map[string]any{"b": 2.5, "priority": "p", "a": []any{float64(1)}}}, step,
			"{'step': 's', 'args': {'priority': 'p', 'a': [1], 'b': 2.5}}"},
		{"list of steps", []any{map[string]any{"step": "b", "interface": "bios"}, map[string]any{}}, step,
			"[{'interface': 'bios', 'step': 'b'}, {}]"},
		{"scalar", "x", step, "'x'"},
		{"no order given", map[string]any{"step": 1, "interface": 2}, nil, "{'interface': 2, 'step': 1}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ReprJSONKeysFirst(c.in, c.first...); got != c.want {
				t.Errorf("ReprJSONKeysFirst(%#v, %q) = %s, want %s", c.in, c.first, got, c.want)
			}
		})
	}
}

func TestTuple(t *testing.T) {
	cases := []struct {
		name string
		in   []string
		want string
	}{
		{"empty", nil, "()"},
		{"one", []string{"a"}, "('a',)"},
		{"two", []string{"available", "it's"}, `('available', "it's")`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Tuple(c.in); got != c.want {
				t.Errorf("Tuple(%q) = %s, want %s", c.in, got, c.want)
			}
		})
	}
}
