// Package wire is a differential harness: a corpus of scenarios, each a
// sequence of HTTP requests with the answer upstream Ironic gives to each,
// replayed against this service so that every difference a client could
// see fails the test (wire_test.go).
//
// The corpus has three parts:
//
//   - corpus/<scenario>.yaml: the requests, written by hand. A scenario
//     starts from an empty database and creates what it needs. A step may
//     carry an expect: block, an answer written by hand from upstream
//     master's source (source: names the file), which wins over the
//     recording: master changed some answers on purpose after 21.4, and
//     versions above 1.82 cannot be recorded at all. A scenario with a
//     source: of its own is written wholly by hand and never recorded.
//   - recorded/<scenario>.yaml: upstream 21.4's answers, written by the
//     recorder (record.sh), never by hand.
//   - known_differences.yaml: the steps where this service still answers
//     otherwise, each with its reason.
//
// Answers are compared after normalisation (normalise.go), so that only
// what a client can see counts: generated UUIDs, timestamps, the server's
// address and the order of JSON object keys do not.
package wire

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Scenario is one corpus file: requests replayed in order from an empty
// database.
type Scenario struct {
	// Name is the file name without .yaml.
	Name        string `yaml:"-"`
	Description string `yaml:"description"`
	// Source, when set, says every answer of the scenario is written by
	// hand from upstream master ("master ironic/api/controllers/v1/runbook.py"):
	// its requests need versions 21.4 does not have, so it is not recorded.
	Source string `yaml:"source,omitempty"`
	Steps  []Step `yaml:"steps"`
}

// Step is one request and, optionally, its hand-written answer.
type Step struct {
	ID     string `yaml:"id"`
	Method string `yaml:"method,omitempty"`
	// Path is sent as written (after templating): malformed escapes and
	// doubled slashes reach the server unchanged.
	Path string `yaml:"path,omitempty"`
	// Version is sent as X-OpenStack-Ironic-API-Version; none is sent
	// when it is empty.
	Version string            `yaml:"version,omitempty"`
	Headers map[string]string `yaml:"headers,omitempty"`
	// Body is sent as JSON, with Content-Type: application/json unless
	// Headers name another.
	Body any `yaml:"body,omitempty"`
	// RawBody is sent verbatim (null, form data, broken JSON); the
	// Content-Type is application/json unless Headers name another.
	RawBody *string `yaml:"raw_body,omitempty"`
	// Raw is the whole request, sent verbatim after templating, with each
	// line ending turned into CRLF up to the blank line that ends the
	// head. It serves what Method, Path and Headers cannot say: another
	// protocol version, odd framing. {{host}} is the server's host:port.
	Raw string `yaml:"raw,omitempty"`
	// Bind names values of the answer's JSON body (dotted paths, list
	// indexes as numbers: "nodes.0.uuid") for later steps' {{name}}; a
	// UUID bound so shows as {{name}} in every normalised answer.
	Bind map[string]string `yaml:"bind,omitempty"`
	// Wait repeats the request until each field (a dotted path) of the
	// answer's JSON body has its value (a string, or the JSON text of
	// another value: "null", "true"), for states the conductor reaches in
	// the background.
	Wait map[string]string `yaml:"wait,omitempty"`
	// Opaque are dotted paths of values that differ on every run (a hash
	// of a random salt): only their presence and type are compared.
	Opaque []string `yaml:"opaque,omitempty"`
	// Expect is the answer written by hand from master's source.
	Expect *Expect `yaml:"expect,omitempty"`
}

// Expect is a hand-written answer.
type Expect struct {
	// Source names master's file the answer was read from.
	Source string `yaml:"source"`
	// Match is "subset" when the body lists only some of the fields the
	// answer must hold; otherwise the body is the whole answer.
	Match string `yaml:"match,omitempty"`
	// Amend says the answer is the recording with these changes: a
	// status that is not zero replaces the recorded one, headers replace
	// or add to the recorded ones ("" removes one), a body replaces the
	// recorded body. It keeps an expectation to what master changed.
	Amend bool `yaml:"amend,omitempty"`
	// Faultstring, with Amend, replaces the recorded error's faultstring.
	Faultstring string `yaml:"faultstring,omitempty"`
	// Set, with Amend, sets values in the recorded JSON body by dotted
	// path ("next", "firmware.result"); a null value removes the key.
	Set      map[string]any `yaml:"set,omitempty"`
	Response `yaml:",inline"`
}

// Response is an answer as a client sees it, normalised.
type Response struct {
	Status int `yaml:"status"`
	// Headers are the ones clients read (see clientHeaders), with
	// canonical names.
	Headers map[string]string `yaml:"headers,omitempty"`
	// Body is the normalised JSON (indented, keys sorted) or the text.
	Body string `yaml:"body,omitempty"`
}

// Recording is recorded/<scenario>.yaml.
type Recording struct {
	// Upstream names the service that answered.
	Upstream string         `yaml:"upstream"`
	Steps    []RecordedStep `yaml:"steps"`
}

// RecordedStep is upstream's answer to one step.
type RecordedStep struct {
	ID       string `yaml:"id"`
	Response `yaml:",inline"`
}

// LoadCorpus reads every scenario below dir/corpus, sorted by name.
func LoadCorpus(dir string) ([]*Scenario, error) {
	files, err := filepath.Glob(filepath.Join(dir, "corpus", "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no scenario in %s", filepath.Join(dir, "corpus"))
	}
	sort.Strings(files)
	var out []*Scenario
	for _, f := range files {
		sc, err := loadScenario(f)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

func loadScenario(path string) (*Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var sc Scenario
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&sc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sc.Name = strings.TrimSuffix(filepath.Base(path), ".yaml")
	if err := sc.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &sc, nil
}

func (sc *Scenario) check() error {
	if len(sc.Steps) == 0 {
		return errors.New("no steps")
	}
	seen := map[string]bool{}
	for _, st := range sc.Steps {
		switch {
		case st.ID == "":
			return errors.New("a step without id")
		case seen[st.ID]:
			return fmt.Errorf("step id %s repeats", st.ID)
		case st.Raw == "" && (st.Method == "" || st.Path == ""):
			return fmt.Errorf("step %s: method and path, or raw, are required", st.ID)
		case st.Raw != "" && (st.Method != "" || st.Path != "" || st.Body != nil || st.RawBody != nil):
			return fmt.Errorf("step %s: raw excludes method, path and bodies", st.ID)
		case st.Body != nil && st.RawBody != nil:
			return fmt.Errorf("step %s: body and raw_body exclude each other", st.ID)
		case sc.Source != "" && st.Expect == nil:
			return fmt.Errorf("step %s: a hand-written scenario needs expect on every step", st.ID)
		case st.Expect != nil && st.Expect.Source == "":
			return fmt.Errorf("step %s: expect needs a source", st.ID)
		case sc.Source != "" && st.Expect.Amend:
			return fmt.Errorf("step %s: a hand-written scenario has no recording to amend", st.ID)
		case st.Expect != nil && (st.Expect.Faultstring != "" || st.Expect.Set != nil) && !st.Expect.Amend:
			return fmt.Errorf("step %s: faultstring and set amend a recording", st.ID)
		case st.Expect != nil && st.Expect.Match != "" && st.Expect.Match != "subset":
			return fmt.Errorf("step %s: match is subset or nothing", st.ID)
		}
		seen[st.ID] = true
	}
	return nil
}

// LoadRecording reads dir/recorded/<name>.yaml; a missing file is an
// empty recording.
func LoadRecording(dir, name string) (*Recording, error) {
	b, err := os.ReadFile(RecordingPath(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return &Recording{}, nil
	}
	if err != nil {
		return nil, err
	}
	var r Recording
	if err := yaml.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", RecordingPath(dir, name), err)
	}
	return &r, nil
}

// RecordingPath is where the recording of scenario name lives.
func RecordingPath(dir, name string) string {
	return filepath.Join(dir, "recorded", name+".yaml")
}

// Save writes the recording.
func (r *Recording) Save(path string) error {
	b, err := yaml.Marshal(r)
	if err != nil {
		return err
	}
	header := "# Written by test/wire/record.sh from upstream's answers: do not edit.\n"
	return os.WriteFile(path, append([]byte(header), b...), 0o644)
}

// Step returns the recorded answer of step id.
func (r *Recording) Step(id string) (Response, bool) {
	for _, s := range r.Steps {
		if s.ID == id {
			return s.Response, true
		}
	}
	return Response{}, false
}
