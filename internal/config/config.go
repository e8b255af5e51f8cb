// Package config loads ironic.conf the way oslo.config does: the same
// sections and option names, types, defaults, deprecated names, $option
// interpolation, repeated --config-file and --config-dir with later files
// winning.
//
// The option table (options_gen.go) is generated from the upstream option
// inventory; library options Ironic reads are in libopts.go. Every value is
// parsed and checked at Load, so a bad value stops the service at start
// with the section and option named.
package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// LoadOptions says where configuration comes from.
type LoadOptions struct {
	// Files are read in order (--config-file, repeatable); later files win.
	Files []string
	// Dirs are read after Files (--config-dir, repeatable): every *.conf of
	// each directory in lexical order.
	Dirs []string
	// Overrides replace table defaults but lose to any file value:
	// section -> option -> value as it would be written in a file.
	Overrides map[string]map[string]string
	// Unknown, when set, is told about every section or option that no
	// table entry knows (name is "" for a whole section) as the files are
	// read; Config.Unknown lists them afterwards either way.
	Unknown func(section, name, file string)
}

// Config holds the resolved value of every option of the table.
type Config struct {
	values  map[Name]any
	set     map[Name]bool
	sources []string
	unknown []Unknown
	// ineffective are the options set in a file, away from their
	// default, that no code reads (unread.go).
	ineffective []Ineffective
}

// Load reads the configuration files and resolves every option.
func Load(opts LoadOptions) (*Config, error) {
	paths := append([]string(nil), opts.Files...)
	for _, d := range opts.Dirs {
		matches, err := confFiles(d)
		if err != nil {
			return nil, err
		}
		paths = append(paths, matches...)
	}
	files := make([]*parsedFile, 0, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("config file: %w", err)
		}
		f, err := parseINI(p, data)
		if err != nil {
			return nil, fmt.Errorf("config file: %w", err)
		}
		files = append(files, f)
	}
	// Listed rather than logged here: the caller's logger is configured
	// from this very configuration, so it reports them once it exists.
	unknown := findUnknown(files)
	if opts.Unknown != nil {
		for _, u := range unknown {
			opts.Unknown(u.Section, u.Option, u.File)
		}
	}

	overrides := map[Name]string{}
	for sec, kv := range opts.Overrides {
		for name, v := range kv {
			n := Name{sec, name}
			if _, ok := registry.byName[n]; !ok {
				return nil, fmt.Errorf("override of unknown option %s", n)
			}
			overrides[n] = v
		}
	}
	r := &resolver{files: files, overrides: overrides, values: map[Name]any{}, set: map[Name]bool{}, busy: map[Name]bool{}}
	for _, o := range registry.ordered {
		if _, err := r.get(o); err != nil {
			return nil, err
		}
	}
	return &Config{values: r.values, set: r.set, sources: paths, unknown: unknown, ineffective: findIneffective(r)}, nil
}

// confFiles lists the *.conf files of a directory in lexical order.
func confFiles(dir string) ([]string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("config dir: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("config dir %s: %w", dir, fs.ErrInvalid)
	}
	m, err := filepath.Glob(filepath.Join(dir, "*.conf"))
	if err != nil {
		return nil, fmt.Errorf("config dir %s: %w", dir, err)
	}
	sort.Strings(m)
	return m, nil
}

// resolver computes option values on demand, so that interpolation can
// refer to options in any order; busy detects reference cycles.
type resolver struct {
	files     []*parsedFile
	overrides map[Name]string
	values    map[Name]any
	set       map[Name]bool
	busy      map[Name]bool
}

// ValueError reports an invalid option value.
type ValueError struct {
	Option Name
	Err    error
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("invalid value for option %s: %v", e.Option, e.Err)
}

func (e *ValueError) Unwrap() error { return e.Err }

func (r *resolver) get(o *Option) (any, error) {
	n := Name{o.Section, o.Name}
	if v, ok := r.values[n]; ok {
		return v, nil
	}
	if r.busy[n] {
		return nil, &ValueError{n, errors.New("interpolation refers back to this option")}
	}
	r.busy[n] = true
	defer delete(r.busy, n)
	v, err := r.compute(o)
	if err != nil {
		var ve *ValueError
		if errors.As(err, &ve) {
			return nil, err
		}
		return nil, &ValueError{n, err}
	}
	r.values[n] = v
	return v, nil
}

func (r *resolver) compute(o *Option) (any, error) {
	n := Name{o.Section, o.Name}
	if raw, ok := r.fileValues(o); ok {
		r.set[n] = true
		return r.convert(o, raw)
	}
	if s, ok := r.overrides[n]; ok {
		return r.convert(o, []string{s})
	}
	return r.defaultValue(o)
}

func isMulti(o *Option) bool { return o.Type == TypeMultiString || o.Type == TypeMultiDict }

// fileValues finds the raw strings of an option in the files. As in
// oslo.config, the last file that holds the option under any of its names
// wins, and within a file the current name beats deprecated ones and the
// last assignment counts; multi-valued options gather every assignment, in
// file order.
func (r *resolver) fileValues(o *Option) ([]string, bool) {
	names := append([]Name{{o.Section, o.Name}}, o.Deprecated...)
	if isMulti(o) {
		var all []string
		found := false
		for _, f := range r.files {
			for _, n := range names {
				if vs, ok := f.sections[n.Section][n.Name]; ok {
					all = append(all, vs...)
					found = true
				}
			}
		}
		return all, found
	}
	for i := len(r.files) - 1; i >= 0; i-- {
		for _, n := range names {
			if vs, ok := r.files[i].sections[n.Section][n.Name]; ok {
				return vs[len(vs)-1:], true
			}
		}
	}
	return nil, false
}

// convert interpolates and parses raw strings; multi-valued options merge
// one value per string.
func (r *resolver) convert(o *Option, raw []string) (any, error) {
	if !isMulti(o) {
		s, err := r.interpolate(o.Section, raw[0])
		if err != nil {
			return nil, err
		}
		return parseValue(o, s)
	}
	strs := []string{}
	dict := map[string]string{}
	for _, one := range raw {
		s, err := r.interpolate(o.Section, one)
		if err != nil {
			return nil, err
		}
		v, err := parseValue(o, s)
		if err != nil {
			return nil, err
		}
		switch v := v.(type) {
		case []string:
			strs = append(strs, v...)
		case map[string]string:
			for k, x := range v {
				dict[k] = x
			}
		}
	}
	if o.Type == TypeMultiDict {
		return dict, nil
	}
	return strs, nil
}

// defaultValue interpolates a table default and checks it like a file
// value, so that a default built from $options is validated too.
func (r *resolver) defaultValue(o *Option) (any, error) {
	switch d := o.Default.(type) {
	case nil:
		return nil, nil
	case string:
		s, err := r.interpolate(o.Section, d)
		if err != nil {
			return nil, err
		}
		return parseValue(o, s)
	case []string:
		out := make([]string, len(d))
		for i, item := range d {
			s, err := r.interpolate(o.Section, item)
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	case map[string]string:
		out := make(map[string]string, len(d))
		for k, v := range d {
			ks, err := r.interpolate(o.Section, k)
			if err != nil {
				return nil, err
			}
			vs, err := r.interpolate(o.Section, v)
			if err != nil {
				return nil, err
			}
			out[ks] = vs
		}
		return out, nil
	}
	return o.Default, nil
}

// interpolate expands $name, ${name} and ${section.name} like oslo.config
// (Python string.Template): a bare name is looked up in the option's own
// section, then in DEFAULT; "$$" and "\$" give a literal "$"; a "$" not
// followed by a name is left alone; an unknown name is an error.
func (r *resolver) interpolate(section, s string) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	s = strings.ReplaceAll(s, `\$`, "$$")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		next := s[i+1]
		var key string
		switch {
		case next == '$':
			b.WriteByte('$')
			i++
			continue
		case next == '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 || !isIdent(s[i+2:i+2+end]) {
				b.WriteByte(c)
				continue
			}
			key = s[i+2 : i+2+end]
			i += 2 + end
		case isIdentStart(next):
			j := i + 1
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			key = s[i+1 : j]
			i = j - 1
		default:
			b.WriteByte(c)
			continue
		}
		v, err := r.lookupRef(section, key)
		if err != nil {
			return "", err
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentChar(c byte) bool {
	return isIdentStart(c) || c == '.' || (c >= '0' && c <= '9')
}

func isIdent(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return true
}

func (r *resolver) lookupRef(section, key string) (string, error) {
	candidates := []Name{{section, key}, {"DEFAULT", key}}
	if sec, name, ok := strings.Cut(key, "."); ok {
		candidates = []Name{{normalizeSection(sec), name}, {"DEFAULT", key}}
	}
	for _, n := range candidates {
		o, ok := registry.byName[n]
		if !ok {
			continue
		}
		v, err := r.get(o)
		if err != nil {
			return "", err
		}
		return formatValue(v), nil
	}
	return "", fmt.Errorf("cannot substitute $%s: no such option", key)
}

// formatValue renders a value for interpolation and display; None is empty
// as in oslo.config.
func formatValue(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		if v {
			return "True"
		}
		return "False"
	case []string:
		return strings.Join(v, ",")
	case map[string]string:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ":" + v[k]
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v)
}

// Sources returns the files read, in the order they were applied.
func (c *Config) Sources() []string { return append([]string(nil), c.sources...) }

// IsSet reports whether a file gave the option a value (under its current
// or a deprecated name).
func (c *Config) IsSet(section, name string) bool {
	c.option(section, name)
	return c.set[Name{section, name}]
}

// Has reports whether the option has a value at all; options whose
// upstream default is None have none until a file or override sets them.
func (c *Config) Has(section, name string) bool {
	c.option(section, name)
	return c.values[Name{section, name}] != nil
}

// option returns the table entry; asking for an option that is not in the
// table is a programming error.
func (c *Config) option(section, name string) *Option {
	o, ok := registry.byName[Name{section, name}]
	if !ok {
		panic(fmt.Sprintf("config: no option %s in the table", Name{section, name}))
	}
	return o
}

func (c *Config) typed(section, name string, want ...Type) any {
	o := c.option(section, name)
	for _, t := range want {
		if o.Type == t {
			return c.values[Name{section, name}]
		}
	}
	panic(fmt.Sprintf("config: option %s is a %v, not a %v", Name{section, name}, o.Type, want[0]))
}

// String returns a string-valued option (string, IP, host, URI); "" when
// it has no value.
func (c *Config) String(section, name string) string {
	v, _ := c.typed(section, name, TypeString, TypeIP, TypeHostAddress, TypeHostDomain, TypeURI).(string)
	return v
}

// Int returns an integer option (integer, port, octal); 0 when it has no
// value (see Has).
func (c *Config) Int(section, name string) int {
	v, _ := c.typed(section, name, TypeInt, TypePort, TypeOctal).(int)
	return v
}

// Float returns a float option; 0 when it has no value.
func (c *Config) Float(section, name string) float64 {
	v, _ := c.typed(section, name, TypeFloat).(float64)
	return v
}

// Bool returns a boolean option.
func (c *Config) Bool(section, name string) bool {
	v, _ := c.typed(section, name, TypeBool).(bool)
	return v
}

// List returns a list or multi-valued string option; nil when it has no
// value. The slice is a copy.
func (c *Config) List(section, name string) []string {
	v, _ := c.typed(section, name, TypeList, TypeMultiString).([]string)
	if v == nil {
		return nil
	}
	return append([]string{}, v...)
}

// Dict returns a dict option; for a repeated (multi) dict option, the
// assignments merged in file order. The map is a copy.
func (c *Config) Dict(section, name string) map[string]string {
	v, _ := c.typed(section, name, TypeDict, TypeMultiDict).(map[string]string)
	out := make(map[string]string, len(v))
	for k, x := range v {
		out[k] = x
	}
	return out
}

// Duration returns an integer option counted in seconds.
func (c *Config) Duration(section, name string) time.Duration {
	return time.Duration(c.Int(section, name)) * time.Second
}

// Display returns the value as text for logs, with secrets masked.
func (c *Config) Display(section, name string) string {
	o := c.option(section, name)
	v := c.values[Name{section, name}]
	if o.Secret && v != nil {
		return "****"
	}
	if v == nil {
		return "None"
	}
	return formatValue(v)
}

// Dump writes every option as "[section] name = value", secrets masked,
// for the start-up log.
func (c *Config) Dump(w io.Writer) error {
	for _, o := range registry.ordered {
		if _, err := fmt.Fprintf(w, "[%s] %s = %s\n", o.Section, o.Name, c.Display(o.Section, o.Name)); err != nil {
			return fmt.Errorf("dump configuration: %w", err)
		}
	}
	return nil
}
