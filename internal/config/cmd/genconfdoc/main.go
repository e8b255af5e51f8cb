// Command genconfdoc writes docs/configuration.md, the reference of every
// ironic.conf option the loader knows: the option table of package config
// (upstream's sections, names, types and defaults) and, for each option,
// whether openkeel's code reads it, found by scanning the module's Go
// source.
//
//	go run ./internal/config/cmd/genconfdoc [-o docs/configuration.md]
//
// The test of this package fails when the committed file differs from
// what this command writes.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/config"
)

// docPath is the reference's place in the repository.
const docPath = "docs/configuration.md"

// upstreamRef is upstream's configuration reference, whose anchors are
// "<section>.<option>": each option links to its description there.
const upstreamRef = "https://docs.openstack.org/ironic/latest/configuration/config.html"

func main() {
	out := flag.String("o", "", "output file (default: "+docPath+" of the module)")
	flag.Parse()
	root, err := moduleRoot()
	if err != nil {
		log.Fatal(err)
	}
	doc, err := generate(root)
	if err != nil {
		log.Fatal(err)
	}
	if *out == "" {
		*out = filepath.Join(root, docPath)
	}
	if err := os.WriteFile(*out, doc, 0o644); err != nil {
		log.Fatalf("write %s: %v", *out, err)
	}
}

// moduleRoot is the folder of the go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// usage says how openkeel's code reads one option.
type usage int

const (
	unused       usage = iota
	read               // read under its own section and name
	pattern            // read under a name the code builds (e.g. enabled_<kind>_interfaces)
	interpolated       // read through $option in the default of an option that is read
)

func classify(o config.Option, uses map[use]bool) usage {
	best := unused
	for u := range uses {
		// A read whose section or name the scan cannot know at all says
		// nothing about any one option.
		if u.section == "*" || u.name == "*" {
			continue
		}
		ok, _ := path.Match(u.section, o.Section)
		if !ok {
			continue
		}
		if u.name == o.Name && u.section == o.Section {
			return read
		}
		if m, _ := path.Match(u.name, o.Name); m {
			best = pattern
		}
	}
	return best
}

// classifyAll classifies every option: by the scan, then options named as
// $option (or ${section.option}) in the default of an option that is read,
// whose value reaches the code through it ([DEFAULT]/my_ip through
// [pxe]/tftp_server), to any depth.
func classifyAll(opts []config.Option, uses map[use]bool) map[config.Name]usage {
	out := make(map[config.Name]usage, len(opts))
	for _, o := range opts {
		out[config.Name{Section: o.Section, Name: o.Name}] = classify(o, uses)
	}
	for changed := true; changed; {
		changed = false
		for _, o := range opts {
			if out[config.Name{Section: o.Section, Name: o.Name}] == unused {
				continue
			}
			for _, ref := range references(o) {
				if u, ok := out[ref]; ok && u == unused {
					out[ref] = interpolated
					changed = true
				}
			}
		}
	}
	return out
}

// references are the options a default names as $name, ${name} or
// ${section.name}; a bare name is looked up in the option's own section,
// then in DEFAULT, as the loader does.
func references(o config.Option) []config.Name {
	var texts []string
	switch d := o.Default.(type) {
	case string:
		texts = []string{d}
	case []string:
		texts = d
	}
	var out []config.Name
	for _, t := range texts {
		for _, m := range refPattern.FindAllStringSubmatch(strings.ReplaceAll(t, "$$", ""), -1) {
			name := m[1] + m[2]
			if sec, opt, ok := strings.Cut(name, "."); ok {
				out = append(out, config.Name{Section: sec, Name: opt})
				continue
			}
			if _, ok := config.Lookup(o.Section, name); ok {
				out = append(out, config.Name{Section: o.Section, Name: name})
			} else {
				out = append(out, config.Name{Section: "DEFAULT", Name: name})
			}
		}
	}
	return out
}

var refPattern = regexp.MustCompile(`\$(?:\{([A-Za-z_][A-Za-z0-9_.]*)\}|([A-Za-z_][A-Za-z0-9_]*))`)

func generate(root string) ([]byte, error) {
	uses, err := scanUses(root)
	if err != nil {
		return nil, err
	}
	opts := config.Options()
	bySection := map[string][]config.Option{}
	usages := classifyAll(opts, uses)
	counts := map[usage]int{}
	notApplicable := 0
	for _, o := range opts {
		bySection[o.Section] = append(bySection[o.Section], o)
		u := usages[config.Name{Section: o.Section, Name: o.Name}]
		counts[u]++
		if _, ok := config.UnreadReason(o.Section, o.Name); ok && u == unused {
			notApplicable++
		}
	}
	sections := mapsKeys(bySection)
	slices.Sort(sections)
	// DEFAULT first, as in ironic.conf.
	if i := slices.Index(sections, "DEFAULT"); i > 0 {
		sections = append([]string{"DEFAULT"}, slices.Delete(sections, i, i+1)...)
	}

	var b bytes.Buffer
	b.WriteString(`# Configuration reference

<!-- Generated by go run ./internal/config/cmd/genconfdoc; do not edit. -->

openkeel-ironic reads upstream Ironic's ` + "`ironic.conf`" + `: the same sections,
option names, types and defaults (oslo.config's, including the defaults
Ironic sets when it registers library options). Files are read in order
(` + "`--config-file`" + `, then the ` + "`*.conf`" + ` files of each ` + "`--config-dir`" + ` in
lexical order); a later value wins, ` + "`$option`" + ` and ` + "`${section.option}`" + `
are interpolated and ` + "`$$`" + ` is a literal ` + "`$`" + `. Every option below is
accepted and its value checked (type, bounds, choices) at start-up. A
section or option the table does not know is ignored, as oslo.config
does, but not silently: the services log a warning for each at start-up,
naming the closest known section or option (` + "`[api]/prot`" + `: did you mean
` + "`[api]/port`" + `?), and ` + "`ironic status upgrade check`" + ` lists them as a
warning.

The **Used** column says whether openkeel's code reads the option:

- **yes**: read under this section and name;
- **yes (pattern)**: read under a name the code builds at run time, such
  as ` + "`enabled_<kind>_interfaces`" + `;
- **yes (through $option)**: named as ` + "`$option`" + ` in the default of an option
  that is read, such as ` + "`my_ip`" + ` in ` + "`[pxe]/tftp_server`" + `;
- **not applicable**: what it configures does not exist in openkeel
  (osprofiler, Python WSGI workers, memcached token caches…), with the
  reason.

An option that is not read is still accepted and checked, so existing
files keep working; when a file sets one to a value other than its
default, the services log a warning naming it and
` + "`ironic status upgrade check`" + ` lists it. The reasons come from one table in the code
(` + "`internal/config/unread.go`" + `), and a test fails on an option that is
neither read nor listed there.

The column is found by scanning the Go source (` + "`cmd/`" + `, ` + "`internal/`" + `), so
it changes with the code; regenerate this file with
` + "`go run ./internal/config/cmd/genconfdoc`" + `. What an option means is
described in upstream's configuration reference, which each option's
name links to; where openkeel differs, see [operators.md](operators.md).
Sections named ` + "`openkeel_*`" + ` are openkeel's own, for what upstream has no
option for; their options are described here and in operators.md.

Defaults: *None* means the option has no value unless set; *(machine)*
means the default is computed on the running machine (its host name, IP
addresses or the binary's folder).

`)
	fmt.Fprintf(&b, "%d options in %d sections: %d read by openkeel, %d read under a built name, %d read through another option's default; %d not applicable; %d neither read nor listed.\n\n",
		len(opts), len(sections), counts[read], counts[pattern], counts[interpolated], notApplicable, counts[unused]-notApplicable)
	b.WriteString("Sections:")
	for i, s := range sections {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(&b, "%s [%s](#%s)", sep, s, anchor(s))
	}
	b.WriteString(".\n")
	for _, s := range sections {
		fmt.Fprintf(&b, "\n## [%s]\n\n| Option | Type | Default | Used | Notes |\n|---|---|---|---|---|\n", s)
		for _, o := range bySection[s] {
			fmt.Fprintf(&b, "| [`%s`](%s) | %s | %s | %s | %s |\n", o.Name, link(o), typeText(o), defaultText(o), usageText(o, usages[config.Name{Section: o.Section, Name: o.Name}]), notes(o))
		}
	}
	return b.Bytes(), nil
}

// ours reports an option of openkeel's own sections, which upstream's
// reference does not describe.
func ours(o config.Option) bool { return strings.HasPrefix(o.Section, "openkeel_") }

// link is where an option is described: upstream's reference, or for ours
// the section of operators.md that has the same heading "[section]".
func link(o config.Option) string {
	if ours(o) {
		return "operators.md#" + anchor(o.Section)
	}
	return upstreamRef + "#" + o.Section + "." + o.Name
}

// anchor is the GitHub heading anchor of "## [section]".
func anchor(section string) string {
	return strings.ToLower(section)
}

func typeText(o config.Option) string {
	t := o.Type.String()
	if o.Item != 0 {
		t += " of " + o.Item.String()
	}
	return t
}

func defaultText(o config.Option) string {
	if config.MachineDefault(o.Section, o.Name) {
		return "*(machine)*"
	}
	if o.Default == nil {
		return "*None*"
	}
	switch v := o.Default.(type) {
	case []string:
		if len(v) == 0 {
			return "*empty*"
		}
	case map[string]string:
		if len(v) == 0 {
			return "*empty*"
		}
	}
	s := config.FormatValue(o.Default)
	if s == "" {
		return "`\"\"`"
	}
	return "`" + cell(s) + "`"
}

func usageText(o config.Option, u usage) string {
	switch u {
	case read:
		return "yes"
	case pattern:
		return "yes (pattern)"
	case interpolated:
		return "yes (through $option)"
	}
	r, ok := config.UnreadReason(o.Section, o.Name)
	if !ok {
		return "no"
	}
	return "not applicable: " + cell(r.Reason)
}

func notes(o config.Option) string {
	var parts []string
	if o.Help != "" {
		parts = append(parts, cell(strings.TrimSuffix(o.Help, ".")))
	}
	if len(o.Choices) > 0 {
		parts = append(parts, "one of "+codeList(o.Choices))
	}
	if len(o.ItemChoices) > 0 {
		parts = append(parts, "items: "+codeList(o.ItemChoices))
	}
	if o.Min != nil {
		parts = append(parts, "min "+num(*o.Min))
	}
	if o.Max != nil {
		parts = append(parts, "max "+num(*o.Max))
	}
	if len(o.Schemes) > 0 {
		parts = append(parts, "schemes "+codeList(o.Schemes))
	}
	if o.Secret {
		parts = append(parts, "secret (masked in logs)")
	}
	if len(o.Deprecated) > 0 {
		names := make([]string, len(o.Deprecated))
		for i, d := range o.Deprecated {
			names[i] = d.String()
		}
		parts = append(parts, "formerly "+codeList(names))
	}
	return strings.Join(parts, "; ")
}

func codeList(items []string) string {
	out := make([]string, len(items))
	for i, s := range items {
		if s == "" {
			s = `""`
		}
		out[i] = "`" + cell(s) + "`"
	}
	return strings.Join(out, ", ")
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// cell keeps a value from breaking the table row.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "`", "'").Replace(s)
}
