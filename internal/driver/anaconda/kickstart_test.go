package anaconda

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
)

// upstreamTemplate is upstream's ks.cfg.template as Debian's python3-ironic
// installs it, the reference our template is checked against.
const upstreamTemplate = "/usr/lib/python3/dist-packages/ironic/drivers/modules/ks.cfg.template"

// renderUpstream renders upstream's template with Jinja2 (Debian's
// python3-jinja2) once per ks_options, in one interpreter.
func renderUpstream(t *testing.T, ks []Kickstart) []string {
	t.Helper()
	if _, err := os.Stat(upstreamTemplate); err != nil {
		t.Skip("upstream's template is not installed (Debian python3-ironic)")
	}
	var opts []map[string]string
	for _, k := range ks {
		opts = append(opts, k.options())
	}
	arg, err := json.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	script := `import json, sys, jinja2
env = jinja2.Environment(loader=jinja2.FileSystemLoader("/"), undefined=jinja2.StrictUndefined)
tmpl = env.get_template(sys.argv[1])
json.dump([tmpl.render(ks_options=o) for o in json.loads(sys.argv[2])], sys.stdout)`
	out, err := exec.Command("python3", "-c", script, upstreamTemplate, string(arg)).CombinedOutput()
	if err != nil {
		t.Skipf("python3 with jinja2 is not available: %v %s", err, out)
	}
	var rendered []string
	if err := json.Unmarshal(out, &rendered); err != nil {
		t.Fatalf("upstream rendering: %v: %s", err, out)
	}
	return rendered
}

// directives drops comments and blank lines: what anaconda reads.
func directives(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimRight(l, " "); l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// Our default template renders, for every combination of the flags, the
// same kickstart directives as upstream's template does with Jinja2.
func TestDefaultTemplateMatchesUpstreamContract(t *testing.T) {
	cd := "\n%post\nDIRPATH=`/usr/bin/dirname /x`\n%end\n"
	cases := []Kickstart{
		{LiveimgURL: "http://10.0.0.1:8080/img.tar.gz", AgentToken: "tok-1", HeartbeatURL: "http://10.0.0.1:6385/v1/heartbeat/u-1"},
		{LiveimgURL: "http://mirror/os/", IsSourceAPath: true, InsecureHeartbeat: true, AgentToken: "tok-2", HeartbeatURL: "https://api/v1/heartbeat/u-2", ConfigDrive: cd},
		{LiveimgURL: "http://img", InsecureHeartbeat: true, AgentToken: "tok-3", HeartbeatURL: "https://api/v1/heartbeat/u-3"},
	}
	upstream := renderUpstream(t, cases)
	for i, k := range cases {
		ours, err := Render(defaultTemplate, k)
		if err != nil {
			t.Fatal(err)
		}
		want := directives(upstream[i])
		got := directives(string(ours))
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("options %+v: ours\n%s\nupstream\n%s", k, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

var curlRe = regexp.MustCompile(`^/usr/bin/curl (--insecure )?.*-H 'X-OpenStack-Ironic-API-Version: 1.72' -d '(\{.*\})' (\S+)$`)

// The rendered kickstart's contract, checked without upstream at hand:
// it installs from the image URL, and sends start in %pre, error in
// %onerror and end as the last %post, each with the token, an empty
// callback URL and the heartbeat URL; --insecure only when asked.
func TestRenderedKickstartHeartbeats(t *testing.T) {
	k := Kickstart{LiveimgURL: "http://10.0.0.1:8080/img.tar.gz", AgentToken: "s3cr3t", HeartbeatURL: "http://10.0.0.1:6385/v1/heartbeat/u-1",
		ConfigDrive: "%post\necho cd\n%end"}
	out, err := Render(defaultTemplate, k)
	if err != nil {
		t.Fatal(err)
	}
	lines := directives(string(out))
	if !containsLine(lines, "liveimg --url "+k.LiveimgURL) || containsLine(lines, "url --url "+k.LiveimgURL) {
		t.Errorf("image directive:\n%s", out)
	}
	var statuses []string
	section := ""
	for _, l := range lines {
		if strings.HasPrefix(l, "%") && l != "%end" {
			section = strings.Fields(l)[0]
		}
		m := curlRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if m[1] != "" {
			t.Errorf("--insecure without insecure_heartbeat: %s", l)
		}
		var body map[string]string
		if err := json.Unmarshal([]byte(m[2]), &body); err != nil {
			t.Fatalf("heartbeat body %s: %v", m[2], err)
		}
		if body["agent_token"] != k.AgentToken || body["callback_url"] != "" || m[3] != k.HeartbeatURL {
			t.Errorf("heartbeat %s", l)
		}
		statuses = append(statuses, section+":"+body["agent_status"])
	}
	if got := strings.Join(statuses, ","); got != "%pre:start,%onerror:error,%post:end" {
		t.Errorf("heartbeats %s", got)
	}
	if last := lines[len(lines)-2]; !strings.Contains(last, `"agent_status": "end"`) {
		t.Errorf("the end heartbeat is not the last command: %s", last)
	}
	if !strings.Contains(string(out), "%post\necho cd\n%end") {
		t.Errorf("config drive sections missing:\n%s", out)
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

// ValidateTemplate answers upstream's InvalidKickstartTemplate texts.
func TestValidateTemplate(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"default", defaultTemplate, ""},
		{"unknown variable", "liveimg --url {{ .ks_options.liveimg_url }} {{ .ks_options.root_password }}",
			"The kickstart template includes a variable that is not a valid kickstart option. Rendering the template returned  render kickstart template: template: ks.cfg:1:58: executing \"ks.cfg\" at <.ks_options.root_password>: map has no entry for key \"root_password\". The valid options are liveimg_url,agent_token,config_drive,heartbeat_url."},
		{"missing heartbeat", "liveimg --url {{ .ks_options.liveimg_url }}\n# {{ .ks_options.agent_token }}",
			"Following required kickstart option variables are missing from the kickstart template: heartbeat_url."},
		{"missing all", "text", "Following required kickstart option variables are missing from the kickstart template: liveimg_url,agent_token,heartbeat_url."},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ValidateTemplate(c.text)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			e, ok := errs.As(err)
			if !ok || e.Class != errs.ClassInvalidKickstartTemplate || e.Message != c.want {
				t.Fatalf("got %v, want InvalidKickstartTemplate %q", err, c.want)
			}
		})
	}
}
