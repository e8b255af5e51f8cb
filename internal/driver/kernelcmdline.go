package driver

import (
	"strings"

	"github.com/openkeel/ironic/internal/model"
)

// Kernel command lines an operator or a node's owner supplies are
// checked against upstream's grammar (ironic/common/kernel_parameters.py)
// before they reach a boot loader, unless [conductor]/
// disable_kernel_parameter_parsing: a malformed line can smuggle options
// into the kernel or the boot loader's script.
//
// The grammar: parameters separated by spaces, each a key
// ([A-Za-z0-9_.-]+) or key=value, where a value is a run of printable
// ASCII other than space and '"', or such text with spaces between double
// quotes; optionally " -- " and the init arguments (printable ASCII, no
// '"'). Parameters of the first run may follow a quoted value without a
// space, as upstream's parameter_list rule allows.

// CheckKernelCommandLine reports whether s (surrounding white space
// ignored) is a kernel command line by upstream's grammar; the error is
// upstream's InvalidParameterValue.
func CheckKernelCommandLine(s string) error {
	s = strings.TrimSpace(s)
	if at, ok := parameterList(s); !ok && !initSuffixSplit(s) {
		return InvalidParameterValue("Kernel command line did not parse: \"%s\" -- unexpected character at column %d", s, at+1)
	}
	return nil
}

// SanitizeKernelCommandLine is upstream's sanitize_kernel_command_line:
// new lines, carriage returns and NULs removed, which every supplied
// command line goes through whether it was parsed or not.
func SanitizeKernelCommandLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == 0 {
			return -1
		}
		return r
	}, s)
}

// KernelAppendParams is upstream's get_kernel_append_params: the node's
// instance_info, then driver_info kernel_append_params, where %default%
// stands for def, checked (when parse) and sanitized; else def, which the
// configuration supplies.
func KernelAppendParams(n *model.Node, def string, parse bool) (string, error) {
	for _, loc := range []struct {
		name string
		m    map[string]any
	}{{"instance_info", n.InstanceInfo}, {"driver_info", n.DriverInfo}} {
		v, ok := loc.m["kernel_append_params"].(string)
		if !ok {
			continue
		}
		v = strings.ReplaceAll(v, "%default%", def)
		if parse {
			if err := CheckKernelCommandLine(v); err != nil {
				return "", InvalidParameterValue("node's %s['kernel_append_params'] contains malformed kernel command line", loc.name)
			}
		}
		return SanitizeKernelCommandLine(v), nil
	}
	return def, nil
}

func isKeyChar(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// isValueChar is the grammar's bare_value class: printable ASCII but
// space and '"'.
func isValueChar(c byte) bool { return c > ' ' && c <= '~' && c != '"' }

// isSpacedValueChar is value_with_spaces: isValueChar or a space.
func isSpacedValueChar(c byte) bool { return c == ' ' || isValueChar(c) }

// parameterList reports whether s is a parameter list, and where it
// stopped when it is not.
func parameterList(s string) (int, bool) {
	i, spaced := 0, false
	for i < len(s) {
		if s[i] == ' ' {
			for i < len(s) && s[i] == ' ' {
				i++
			}
			spaced = true
			if i == len(s) {
				return i, false
			}
		} else if i > 0 && spaced {
			// After the first run, parameters are separated by spaces.
			return i, false
		}
		end, ok := parameter(s, i)
		if !ok {
			return end, false
		}
		i = end
	}
	return i, true
}

// parameter reads a key or key=value at i and returns where it ends.
func parameter(s string, i int) (int, bool) {
	start := i
	for i < len(s) && isKeyChar(s[i]) {
		i++
	}
	if i == start {
		return i, false
	}
	if i == len(s) || s[i] != '=' {
		return i, true
	}
	i++
	if i < len(s) && s[i] == '"' {
		j := i + 1
		for j < len(s) && isSpacedValueChar(s[j]) {
			j++
		}
		if j == i+1 || j == len(s) || s[j] != '"' {
			return j, false
		}
		return j + 1, true
	}
	j := i
	for j < len(s) && isValueChar(s[j]) {
		j++
	}
	return j, j > i
}

// initSuffixSplit reports whether s is a parameter list, spaces, "--",
// spaces and init arguments.
func initSuffixSplit(s string) bool {
	for i := 1; i < len(s); i++ {
		if s[i] != ' ' || s[i-1] == ' ' {
			continue
		}
		j := i
		for j < len(s) && s[j] == ' ' {
			j++
		}
		if !strings.HasPrefix(s[j:], "-- ") {
			continue
		}
		args := s[j+3:]
		if _, ok := parameterList(s[:i]); ok && args != "" && strings.IndexFunc(args, func(r rune) bool {
			return r > 0x7f || !isSpacedValueChar(byte(r))
		}) < 0 {
			return true
		}
	}
	return false
}
