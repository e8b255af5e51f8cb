package keystoneauth

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/spectest"
)

// notRead are the keystoneauth options of a section this package leaves
// alone, with why.
var notRead = map[string]string{
	"auth_section":   "redirects the plugin options; TestOptionsFromConfig covers it",
	"version":        "no version discovery: the catalog URL is used as given",
	"min_version":    "no version discovery",
	"max_version":    "no version discovery",
	"tenant_id":      "deprecated alias of project_id, resolved by internal/config",
	"tenant_name":    "deprecated alias of project_name, resolved by internal/config",
	"collect_timing": "timing collection is not reproduced",
	"split_loggers":  "request logging is not reproduced",
}

// Every string option keystoneauth registers in Ironic's service sections
// (as the extracted inventory lists them) reaches the session's options.
func TestSpecAuthOptionsAreRead(t *testing.T) {
	var doc struct {
		Options []struct {
			Section, Name, Dest, Origin, Type string
		} `json:"options"`
	}
	spectest.LoadJSON(t, "ironic/core/config-options.json", &doc)
	sections := []string{"cinder", "glance", "neutron", "nova", "service_catalog", "swift"}
	checked := 0
	for _, sec := range sections {
		overrides := map[string]string{}
		var want []string
		for _, o := range doc.Options {
			name := strings.ReplaceAll(o.Name, "-", "_")
			if o.Section != sec || o.Origin != "library" || notRead[name] != "" {
				continue
			}
			if _, ok := config.Lookup(sec, name); !ok {
				t.Errorf("[%s]/%s is not in the configuration table", sec, name)
				continue
			}
			// keystoneauth's plugin options are plain Opts of type str ("type").
			if o.Type != "String" && o.Type != "type" {
				continue
			}
			v := fmt.Sprintf("v-%s-%s", sec, name)
			overrides[name] = v
			want = append(want, name)
		}
		if len(want) == 0 {
			t.Fatalf("no keystoneauth string options for [%s] in the inventory", sec)
		}
		c, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{sec: overrides}})
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf("%#v", OptionsFromConfig(c, sec))
		for _, name := range want {
			if !strings.Contains(got, `"`+overrides[name]+`"`) {
				t.Errorf("[%s]/%s does not reach the session options", sec, name)
			}
			checked++
		}
	}
	if checked < len(sections)*20 {
		t.Fatalf("only %d options checked", checked)
	}
}
