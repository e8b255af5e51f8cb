package image

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// jinjaVar is a Jinja variable substitution, {{ name }}; jinjaTag any other
// Jinja construct.
var (
	jinjaVar = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)
	jinjaTag = regexp.MustCompile(`\{%|\{#|\{\{`)
)

// bootConfig is the boot loader configuration of an ISO: the operator's
// template file ([DEFAULT]/isolinux_config_template or
// grub_config_template) rendered with vars, or builtin (upstream's own
// template, rendered) when file is "". Upstream renders these with Jinja;
// its templates only substitute variables, and so do operators' in
// practice: variables render here as Jinja does (an undefined one is
// empty, one trailing newline is dropped), and a template using Jinja's
// statements or filters is refused rather than written out unrendered.
func bootConfig(file string, vars map[string]string, builtin string) ([]byte, error) {
	if file == "" {
		return []byte(builtin), nil
	}
	text, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("boot configuration template: %w", err)
	}
	out := jinjaVar.ReplaceAllStringFunc(strings.TrimSuffix(string(text), "\n"), func(m string) string {
		return vars[jinjaVar.FindStringSubmatch(m)[1]]
	})
	if loc := jinjaTag.FindStringIndex(out); loc != nil {
		return nil, fmt.Errorf("boot configuration template %s: only {{ variable }} substitutions are supported, found %q", file, out[loc[0]:min(loc[0]+20, len(out))])
	}
	return []byte(out), nil
}
