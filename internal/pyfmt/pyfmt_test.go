package pyfmt

import (
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
