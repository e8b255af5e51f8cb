package driver

import (
	"fmt"
	"slices"
	"strings"
)

// FormatKernelParams renders the ramdisk parameters a deploy interface
// hands to BootInterface.PrepareRamdisk as kernel command-line words:
// key=value, a bare key for a nil value, in key order so that the PXE
// configuration or the ISO's command line is the same for the same
// parameters. Every boot interface appends them the same way.
func FormatKernelParams(params map[string]any) string {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if params[k] == nil {
			parts = append(parts, k)
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%v", k, params[k]))
	}
	return strings.Join(parts, " ")
}

// KernelParamsDict is how upstream turns a configured kernel parameter
// string into ramdisk parameters (prepare_managed_inspection): with
// parse, the line must meet the grammar (CheckKernelCommandLine), the
// first occurrence of a key wins and the init arguments after " -- " are
// dropped (KernelCommandLine.parse().as_parameter_set()); without it,
// the words are split as a shell would (parse_kernel_params) and a later
// key replaces an earlier one. A bare key maps to nil, which
// FormatKernelParams renders bare. A parsed value with spaces keeps its
// quotes so that the rendered command line still reads as one parameter.
func KernelParamsDict(s string, parse bool) (map[string]any, error) {
	out := map[string]any{}
	if parse {
		if err := CheckKernelCommandLine(s); err != nil {
			return nil, err
		}
	}
	words, err := splitKernelWords(strings.TrimSpace(s), !parse)
	if err != nil {
		return nil, err
	}
	for _, w := range words {
		if parse && w == "--" {
			break
		}
		k, v, hasValue := strings.Cut(w, "=")
		if parse {
			if _, seen := out[k]; seen {
				continue
			}
		}
		if !hasValue || (parse && v == "") {
			out[k] = nil
			continue
		}
		out[k] = v
	}
	return out, nil
}

// splitKernelWords splits at spaces outside double (and, for shell
// splitting, single) quotes; stripQuotes drops the quotes as a shell
// does. An unclosed quote is upstream's InvalidParameterValue.
func splitKernelWords(s string, stripQuotes bool) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		quote byte
		in    bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
				if !stripQuotes {
					cur.WriteByte(c)
					// The grammar lets a parameter follow a quoted
					// value without a space.
					words, in = append(words, cur.String()), false
					cur.Reset()
				}
				continue
			}
			cur.WriteByte(c)
		case c == '"' || (stripQuotes && c == '\''):
			quote, in = c, true
			if !stripQuotes {
				cur.WriteByte(c)
			}
		case c == ' ' || c == '\t':
			if in {
				words, in = append(words, cur.String()), false
				cur.Reset()
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, InvalidParameterValue("Kernel command line %q has an unclosed quotation", s)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}
