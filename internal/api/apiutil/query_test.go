package apiutil

import (
	"net/url"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
)

func TestUnexpectedArgs(t *testing.T) {
	if err := UnexpectedArgs(map[string]any{"a": 1, "b": nil}, []string{"a", "b", "c"}); err != nil {
		t.Errorf("allowed names: %v", err)
	}
	err := UnexpectedArgs(url.Values{"z": nil, "a": nil, "m": nil}, []string{"a"})
	if !errs.Is(err, errs.ClassInvalidParameterValue) || err.Error() != "Unexpected arguments: m, z" {
		t.Errorf("query names: %v", err)
	}
}

func TestStringArg(t *testing.T) {
	args := map[string]any{"s": "x", "null": nil, "n": float64(3), "l": []any{"a", "b"}}
	for _, name := range []string{"null", "missing"} {
		if got, err := StringArg(args, name); got != nil || err != nil {
			t.Errorf("%s: %v, %v", name, got, err)
		}
	}
	if got, err := StringArg(args, "s"); err != nil || got == nil || *got != "x" {
		t.Errorf("s: %v, %v", got, err)
	}
	for name, want := range map[string]string{"n": "Expected string for n: 3", "l": "Expected string for l: ['a', 'b']"} {
		_, err := StringArg(args, name)
		if !errs.Is(err, errs.ClassInvalidParameterValue) || err.Error() != want {
			t.Errorf("%s: %v, want %s", name, err, want)
		}
	}
}
