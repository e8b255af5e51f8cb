// Package policy is Ironic's authorization engine: the oslo.policy rule
// language (parsed once into a tree, evaluated without allocating), the
// default rules Ironic registers, their deprecated predecessors, and
// operator overrides from a YAML/JSON policy file that is reloaded when it
// changes.
package policy

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/pyfmt"
	"gopkg.in/yaml.v3"
)

// DefaultCheckInterval is how often, at most, Enforce looks at the policy
// files' modification times. oslo.policy stats them on every check; once a
// second is as good for operators and keeps the hot path free of syscalls.
const DefaultCheckInterval = time.Second

// Options configure an Enforcer; OptionsFromConfig fills them from
// ironic.conf.
type Options struct {
	// PolicyFile is [oslo_policy]/policy_file; a relative path is searched
	// in SearchDirs. A file that does not exist means no overrides.
	PolicyFile string
	// PolicyDirs is [oslo_policy]/policy_dirs: every file of these
	// directories (searched like PolicyFile) is applied after PolicyFile,
	// in name order.
	PolicyDirs []string
	// SearchDirs are where relative paths are looked for, in order (oslo
	// config's find_file: config dirs, the directories of the config
	// files, then ~/.ironic, ~, /etc/ironic, /etc).
	SearchDirs []string
	// EnforceScope makes a token whose scope is not among a rule's
	// scope_types fail (InvalidScope) before the rule is evaluated.
	EnforceScope bool
	// EnforceNewDefaults drops the deprecated check strings; when false a
	// default with a deprecated rule accepts either, as oslo.policy does.
	EnforceNewDefaults bool
	// DefaultRule is [oslo_policy]/policy_default_rule: the rule used for
	// names no rule defines, when a rule of that name exists.
	DefaultRule string
	// CheckInterval bounds how often file changes are looked for: zero
	// means DefaultCheckInterval, negative never (Reload only).
	CheckInterval time.Duration
	// Defaults are the registered rules; nil means Ironic's.
	Defaults []Default
	// Logger receives parse and load problems; nil is slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// OptionsFromConfig reads the [oslo_policy] options and derives the search
// path from the configuration files that were loaded.
func OptionsFromConfig(c *config.Config) Options {
	var dirs []string
	src := c.Sources()
	for i := len(src) - 1; i >= 0; i-- {
		dirs = append(dirs, filepath.Dir(src[i]))
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".ironic"), home)
	}
	dirs = append(dirs, "/etc/ironic", "/etc")
	return Options{
		PolicyFile:         c.StringOf(config.OsloPolicyPolicyFile),
		PolicyDirs:         c.ListOf(config.OsloPolicyPolicyDirs),
		SearchDirs:         dirs,
		EnforceScope:       c.BoolOf(config.OsloPolicyEnforceScope),
		EnforceNewDefaults: c.BoolOf(config.OsloPolicyEnforceNewDefaults),
		DefaultRule:        c.StringOf(config.OsloPolicyPolicyDefaultRule),
	}
}

// Enforcer decides whether credentials may use a rule on a target. It is
// safe for concurrent use; a reload swaps the whole rule set atomically.
type Enforcer struct {
	opts     Options
	interval int64
	log      *slog.Logger
	now      func() time.Time

	registered map[string]*registered

	set       atomic.Pointer[ruleSet]
	lastCheck atomic.Int64

	mu    sync.Mutex // serialises reloads
	state []fileStamp
}

type registered struct {
	def        Default
	check      *Rule
	deprecated *Rule
}

// ruleSet is one immutable generation of effective rules.
type ruleSet struct {
	rules       map[string]*Rule
	defaultRule string
}

func (rs *ruleSet) rule(name string) *Rule {
	if r, ok := rs.rules[name]; ok {
		return r
	}
	// oslo.policy's Rules.__missing__: fall back to the default rule when
	// it is itself defined.
	if rs.defaultRule != "" {
		return rs.rules[rs.defaultRule]
	}
	return nil
}

type fileStamp struct {
	path  string
	mtime time.Time
	size  int64
}

// New builds an Enforcer and loads the policy files. A policy file that
// exists but cannot be read or decoded is an error here; later, a bad
// reload is logged and the previous rules stay in force.
func New(opts Options) (*Enforcer, error) {
	e := &Enforcer{opts: opts, log: opts.Logger, now: opts.Now}
	if e.log == nil {
		e.log = slog.Default()
	}
	if e.now == nil {
		e.now = time.Now
	}
	switch {
	case opts.CheckInterval == 0:
		e.interval = int64(DefaultCheckInterval)
	case opts.CheckInterval < 0:
		e.interval = -1
	default:
		e.interval = int64(opts.CheckInterval)
	}
	defs := opts.Defaults
	if defs == nil {
		defs = ironicDefaults
	}
	e.registered = make(map[string]*registered, len(defs))
	for _, d := range defs {
		if _, dup := e.registered[d.Name]; dup {
			return nil, fmt.Errorf("policy %s is already registered", d.Name)
		}
		check, err := Parse(d.CheckStr)
		if err != nil {
			return nil, fmt.Errorf("default policy %s: %w", d.Name, err)
		}
		reg := &registered{def: d, check: check}
		if d.Deprecated != nil {
			if reg.deprecated, err = Parse(d.Deprecated.CheckStr); err != nil {
				return nil, fmt.Errorf("deprecated rule of policy %s: %w", d.Name, err)
			}
		}
		e.registered[d.Name] = reg
	}
	if err := e.Reload(); err != nil {
		return nil, err
	}
	e.lastCheck.Store(e.now().UnixNano())
	return e, nil
}

// Reload reads the policy files now, whether or not they changed.
func (e *Enforcer) Reload() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	stamps, paths := e.sources()
	rs, err := e.build(paths)
	e.state = stamps
	if err != nil {
		return err
	}
	e.set.Store(rs)
	return nil
}

// maybeReload rebuilds the rules when a policy file changed, looking at
// most once per interval; one caller does the looking, the others go on
// with the current rules.
func (e *Enforcer) maybeReload() {
	if e.interval < 0 {
		return
	}
	now := e.now().UnixNano()
	last := e.lastCheck.Load()
	if now-last < e.interval || !e.lastCheck.CompareAndSwap(last, now) {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	stamps, paths := e.sources()
	if sameStamps(stamps, e.state) {
		return
	}
	e.state = stamps
	rs, err := e.build(paths)
	if err != nil {
		e.log.Error("policy reload failed; keeping the previous rules", "error", err)
		return
	}
	e.log.Info("policy files reloaded", "files", paths)
	e.set.Store(rs)
}

func sameStamps(a, b []fileStamp) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].path != b[i].path || !a[i].mtime.Equal(b[i].mtime) || a[i].size != b[i].size {
			return false
		}
	}
	return true
}

// find locates a path as oslo.config's find_file does: absolute paths as
// they are, relative ones in the first search dir that has them.
func (e *Enforcer) find(p string) (string, bool) {
	if p == "" {
		return "", false
	}
	if filepath.IsAbs(p) {
		_, err := os.Stat(p)
		return p, err == nil
	}
	for _, d := range e.opts.SearchDirs {
		c := filepath.Join(d, p)
		if _, err := os.Stat(c); err == nil {
			abs, err := filepath.Abs(c)
			if err != nil {
				return c, true
			}
			return abs, true
		}
	}
	return "", false
}

// sources lists the policy files in application order with their stamps.
func (e *Enforcer) sources() ([]fileStamp, []string) {
	var paths []string
	if p, ok := e.find(e.opts.PolicyFile); ok {
		paths = append(paths, p)
	}
	for _, d := range e.opts.PolicyDirs {
		dir, ok := e.find(d)
		if !ok {
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			e.log.Warn("policy directory unreadable", "dir", dir, "error", err)
			continue
		}
		names := make([]string, 0, len(entries))
		for _, ent := range entries {
			if ent.IsDir() || strings.HasPrefix(ent.Name(), ".") {
				continue
			}
			names = append(names, ent.Name())
		}
		sort.Strings(names)
		for _, n := range names {
			paths = append(paths, filepath.Join(dir, n))
		}
	}
	stamps := make([]fileStamp, 0, len(paths))
	for _, p := range paths {
		st := fileStamp{path: p}
		if fi, err := os.Stat(p); err == nil {
			st.mtime, st.size = fi.ModTime(), fi.Size()
		}
		stamps = append(stamps, st)
	}
	return stamps, paths
}

// build computes the effective rules: file rules win; each registered
// default not overridden gets its check, combined with its deprecated
// rule as oslo.policy's _handle_deprecated_rule does.
func (e *Enforcer) build(paths []string) (*ruleSet, error) {
	fileRules := map[string]*Rule{}
	for _, p := range paths {
		rules, err := e.loadFile(p)
		if err != nil {
			return nil, err
		}
		for name, r := range rules {
			fileRules[name] = r
		}
	}
	rs := &ruleSet{rules: make(map[string]*Rule, len(e.registered)+len(fileRules)), defaultRule: e.opts.DefaultRule}
	for name, r := range fileRules {
		rs.rules[name] = r
	}
	for name, reg := range e.registered {
		if _, overridden := fileRules[name]; overridden {
			continue
		}
		rs.rules[name] = e.effectiveDefault(reg, fileRules)
	}
	return rs, nil
}

func (e *Enforcer) effectiveDefault(reg *registered, fileRules map[string]*Rule) *Rule {
	d := reg.def
	if d.Deprecated == nil {
		return reg.check
	}
	// A renamed rule whose old name an operator still overrides keeps the
	// operator's check, unless it is the default old check or points to
	// the new name.
	if d.Deprecated.Name != d.Name {
		if fr, ok := fileRules[d.Deprecated.Name]; ok {
			if !fr.Equal(reg.deprecated) && fr.String() != "rule:"+d.Name {
				return fr
			}
		}
	}
	if !e.opts.EnforceNewDefaults && d.Deprecated.CheckStr != d.CheckStr {
		return &Rule{root: &node{kind: kindOr, children: []*node{reg.check.root, reg.deprecated.root}}}
	}
	return reg.check
}

// loadFile reads one policy file: a YAML (or JSON) mapping of rule names to
// check strings, or to oslo.policy's legacy list-of-lists form. A file that
// vanished since it was listed counts as empty, as upstream.
func (e *Enforcer) loadFile(path string) (map[string]*Rule, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("policy file %s: %w", path, err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("policy file %s: %w", path, err)
	}
	out := make(map[string]*Rule, len(doc))
	for name, v := range doc {
		r, err := ruleFromValue(v)
		if r == nil {
			return nil, fmt.Errorf("policy file %s: rule %q: %w", path, name, err)
		}
		if err != nil {
			e.log.Warn("policy rule not understood; it fails closed", "file", path, "rule", name, "error", err)
		}
		out[name] = r
	}
	return out, nil
}

// ruleFromValue parses a file value; a nil rule means the value has no
// meaning at all (not a string or list).
func ruleFromValue(v any) (*Rule, error) {
	switch x := v.(type) {
	case string:
		return Parse(x)
	case nil:
		// An empty YAML value is Python's None, which oslo.policy parses
		// as an empty list rule: always.
		return &Rule{root: trueNode}, nil
	case []any:
		return parseListRule(x)
	}
	return nil, fmt.Errorf("check must be a string or a list, not %T", v)
}

// parseListRule is oslo.policy's legacy syntax: an outer list OR'ed, inner
// lists AND'ed, empty outer list = always.
func parseListRule(outer []any) (*Rule, error) {
	if len(outer) == 0 {
		return &Rule{root: trueNode}, nil
	}
	var errList []error
	var ors []*node
	for _, inner := range outer {
		var items []any
		switch x := inner.(type) {
		case string:
			items = []any{x}
		case []any:
			items = x
		default:
			return nil, fmt.Errorf("list rule item must be a string or a list, not %T", inner)
		}
		if len(items) == 0 {
			continue
		}
		ands := make([]*node, 0, len(items))
		for _, it := range items {
			s, ok := it.(string)
			if !ok {
				return nil, fmt.Errorf("list rule check must be a string, not %T", it)
			}
			ands = append(ands, parseCheck(s, &errList))
		}
		if len(ands) == 1 {
			ors = append(ors, ands[0])
		} else {
			ors = append(ors, &node{kind: kindAnd, children: ands})
		}
	}
	switch len(ors) {
	case 0:
		return &Rule{root: falseNode}, errors.Join(errList...)
	case 1:
		return &Rule{root: ors[0]}, errors.Join(errList...)
	}
	return &Rule{root: &node{kind: kindOr, children: ors}}, errors.Join(errList...)
}

var noCredentials Credentials

// Enforce reports whether creds may use rule on target (oslo.policy's
// enforce). Unknown rules fail closed (or use the default rule when one is
// defined); with EnforceScope a token of the wrong scope fails.
func (e *Enforcer) Enforce(rule string, target Target, creds *Credentials) bool {
	ok, _ := e.enforce(rule, target, creds)
	return ok
}

// enforce returns the decision and, when scope stopped it, the registered
// rule that did.
func (e *Enforcer) enforce(rule string, target Target, creds *Credentials) (bool, *registered) {
	e.maybeReload()
	if creds == nil {
		creds = &noCredentials
	}
	if reg := e.registered[rule]; reg != nil && e.opts.EnforceScope && !scopeAllowed(reg.def.ScopeTypes, creds) {
		return false, reg
	}
	rs := e.set.Load()
	r := rs.rule(rule)
	if r == nil {
		return false, nil
	}
	return r.root.eval(target, creds, rs, 0), nil
}

// tokenScope is how oslo.policy classifies a token.
func tokenScope(c *Credentials) string {
	switch {
	case c.SystemScope != "":
		return "system"
	case c.DomainID != "":
		return "domain"
	}
	return "project"
}

func scopeAllowed(scopes []string, c *Credentials) bool {
	if len(scopes) == 0 {
		return true
	}
	ts := tokenScope(c)
	for _, s := range scopes {
		if s == ts {
			return true
		}
	}
	return false
}

// Authorize is Ironic's policy.authorize: the rule must be registered
// (otherwise a PolicyNotRegistered error, a 500 upstream); a token of the
// wrong scope gives InvalidScope (also a 500 upstream, which list
// endpoints catch to fall back to their project-filtered rule); a denial
// is HTTPForbidden naming the rule (403).
func (e *Enforcer) Authorize(rule string, target Target, creds *Credentials) error {
	if e.registered[rule] == nil {
		return errs.NewMessage(errs.ClassPolicyNotRegistered, "Policy "+rule+" has not been registered")
	}
	ok, scoped := e.enforce(rule, target, creds)
	if scoped != nil {
		if creds == nil {
			creds = &noCredentials
		}
		return errs.NewMessage(errs.ClassInvalidScope, fmt.Sprintf(`"%s": "%s" requires a scope of %s, request was made with %s scope.`,
			scoped.def.Name, scoped.def.CheckStr, pyfmt.Repr(scoped.def.ScopeTypes), tokenScope(creds)))
	}
	if !ok {
		return errs.New(errs.ClassHTTPForbidden, map[string]any{"resource": rule})
	}
	return nil
}

// Registered reports whether rule is one of the registered defaults.
func (e *Enforcer) Registered(rule string) bool { return e.registered[rule] != nil }

// HasRule reports whether a rule of that name is in force (registered or
// defined by a policy file), e.g. the operator-defined
// baremetal:step:execute:<interface>.<step> rules.
func (e *Enforcer) HasRule(name string) bool {
	e.maybeReload()
	_, ok := e.set.Load().rules[name]
	return ok
}

// RuleString returns the effective check of a rule as oslo.policy prints
// it, and whether the rule exists.
func (e *Enforcer) RuleString(name string) (string, bool) {
	e.maybeReload()
	r, ok := e.set.Load().rules[name]
	if !ok {
		return "", false
	}
	return r.String(), true
}
