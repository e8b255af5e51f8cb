package container

import (
	"fmt"
	"regexp"
	"strings"
)

var templateVar = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// substitute renders a provider template. Upstream's templates use
// Jinja2 only to substitute variables; that is what is rendered here,
// and a template with Jinja2 statements or an unknown variable is
// refused rather than run half-rendered.
func substitute(text string, params map[string]string) (string, error) {
	if strings.Contains(text, "{%") {
		return "", fmt.Errorf("jinja2 statements ({%% ... %%}) are not supported; only {{ variable }} substitution is")
	}
	var bad string
	out := templateVar.ReplaceAllStringFunc(text, func(m string) string {
		name := templateVar.FindStringSubmatch(m)[1]
		v, ok := params[name]
		if !ok && bad == "" {
			bad = name
		}
		return v
	})
	if bad != "" {
		return "", fmt.Errorf("unknown template variable %q", bad)
	}
	if strings.Contains(out, "{{") {
		return "", fmt.Errorf("unsupported jinja2 expression")
	}
	return out, nil
}
