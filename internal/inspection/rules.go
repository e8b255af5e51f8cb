package inspection

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// Rule is an inspection rule as the engine runs it: stored rules and the
// built-in ones of [inspection_rules]/built_in_rules alike.
type Rule struct {
	UUID       string
	Priority   int
	Sensitive  bool
	Conditions []map[string]any
	Actions    []map[string]any
}

// RuleFromModel converts a stored rule.
func RuleFromModel(r *model.InspectionRule) Rule {
	return Rule{UUID: r.UUID, Priority: r.Priority, Sensitive: r.Sensitive, Conditions: r.Conditions, Actions: r.Actions}
}

// RuleOptions are the [inspection_rules] options the engine reads.
type RuleOptions struct {
	// MaskSecrets is [inspection_rules]/mask_secrets: always, never or
	// sensitive.
	MaskSecrets string
	// Log receives the log action's messages.
	Log *slog.Logger
	// HTTPClient serves the api-call action.
	HTTPClient *http.Client
}

// signature is an operator's or action's arguments, required then
// optional, as upstream derives them from __call__.
type signature struct {
	required, optional []string
	// formatted are the arguments interpolated outside loops.
	formatted []string
	// pluginData marks actions that get plugin_data.
	pluginData bool
}

type operatorFunc func(args map[string]any) (bool, error)

type operator struct {
	sig signature
	fn  operatorFunc
}

var simpleSig = signature{required: []string{"values"}, optional: []string{"force_strings"}, formatted: []string{"values"}}
var valueSig = signature{required: []string{"value"}, formatted: []string{"value"}}
var reSig = signature{required: []string{"value", "regex"}, formatted: []string{"value"}}

// Operators are upstream's OPERATORS.
var operators = map[string]operator{
	"eq": {simpleSig, simple("eq")},
	"lt": {simpleSig, simple("lt")},
	"gt": {simpleSig, simple("gt")},
	"is-empty": {valueSig, func(a map[string]any) (bool, error) {
		s := pyStr(a["value"])
		return s == "" || s == "None" || s == "[]" || s == "{}", nil
	}},
	"in-net": {signature{required: []string{"address", "subnet"}, formatted: []string{"address", "subnet"}}, inNet},
	"matches": {reSig, func(a map[string]any) (bool, error) {
		re, err := compileRe(a["regex"], true)
		if err != nil {
			return false, err
		}
		return re.MatchString(pyStr(a["value"])), nil
	}},
	"contains": {reSig, func(a map[string]any) (bool, error) {
		re, err := compileRe(a["regex"], false)
		if err != nil {
			return false, err
		}
		return re.MatchString(pyStr(a["value"])), nil
	}},
	"one-of": {signature{required: []string{"value"}, optional: []string{"values"}, formatted: []string{"value"}}, func(a map[string]any) (bool, error) {
		vals, _ := a["values"].([]any)
		for _, v := range vals {
			if pyEqual(a["value"], v) {
				return true, nil
			}
		}
		return false, nil
	}},
	"is-none": {valueSig, func(a map[string]any) (bool, error) { return a["value"] == nil, nil }},
	"is-true": {valueSig, func(a map[string]any) (bool, error) {
		switch v := a["value"].(type) {
		case bool:
			return v, nil
		case float64:
			return v != 0, nil
		case int:
			return v != 0, nil
		case string:
			return strings.EqualFold(v, "yes") || strings.EqualFold(v, "true"), nil
		}
		return false, nil
	}},
	"is-false": {valueSig, func(a map[string]any) (bool, error) {
		switch v := a["value"].(type) {
		case bool:
			return !v, nil
		case float64:
			return v == 0, nil
		case int:
			return v == 0, nil
		case string:
			return strings.EqualFold(v, "no") || strings.EqualFold(v, "false"), nil
		}
		return a["value"] == nil, nil
	}},
}

// OperatorNames lists the condition operators.
func OperatorNames() []string { return sortedKeys(operators) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func compileRe(v any, anchored bool) (*regexp.Regexp, error) {
	s, _ := v.(string)
	if anchored && !strings.HasSuffix(s, "$") {
		s += "$"
	}
	// Python's re.match anchors at the start only.
	if anchored {
		s = `\A(?:` + s + `)`
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, errs.New(errs.ClassInspectionRuleExecutionFailure, map[string]any{"reason": fmt.Sprintf("invalid regular expression: %s", err)})
	}
	return re, nil
}

func inNet(a map[string]any) (bool, error) {
	_, network, err := net.ParseCIDR(pyStr(a["subnet"]))
	if err != nil {
		if ip := net.ParseIP(pyStr(a["subnet"])); ip != nil {
			return ip.Equal(net.ParseIP(pyStr(a["address"]))), nil
		}
		return false, errs.New(errs.ClassInspectionRuleExecutionFailure, map[string]any{"reason": fmt.Sprintf("invalid value: %s", err)})
	}
	ip := net.ParseIP(pyStr(a["address"]))
	if ip == nil {
		return false, fmt.Errorf("failed to detect a valid IP address from %s", pyRepr(a["address"]))
	}
	return network.Contains(ip), nil
}

// simple is upstream SimpleOperator: the values compare pairwise, fewer
// than two values pass.
func simple(op string) operatorFunc {
	return func(a map[string]any) (bool, error) {
		vals, ok := a["values"].([]any)
		if !ok {
			return false, errs.New(errs.ClassRuleConditionCheckFailure, map[string]any{"reason": fmt.Sprintf(
				"Failed to check condition: '%s' on values: %s: Expected list for 'values', got: %s", op, pyRepr(a["values"]), pyType(a["values"]))})
		}
		if fs, _ := a["force_strings"].(bool); fs {
			s := make([]any, len(vals))
			for i, v := range vals {
				s[i] = pyStr(v)
			}
			vals = s
		}
		for i := 0; i+1 < len(vals); i++ {
			var ok bool
			if op == "eq" {
				ok = pyEqual(vals[i], vals[i+1])
			} else {
				c, err := pyCompare(vals[i], vals[i+1], op)
				if err != nil {
					return false, err
				}
				ok = (op == "lt" && c < 0) || (op == "gt" && c > 0)
			}
			if !ok {
				return false, nil
			}
		}
		return true, nil
	}
}

func pyType(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case string:
		return "str"
	case float64, int, int64:
		return "int"
	case map[string]any:
		return "dict"
	case []any:
		return "list"
	}
	return fmt.Sprintf("%T", v)
}

func num(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

func pyEqual(a, b any) bool {
	if x, ok := num(a); ok {
		y, ok := num(b)
		return ok && x == y
	}
	return reflect.DeepEqual(a, b)
}

// pyCompare orders numbers and strings as Python does; other mixes are
// Python's TypeError.
func pyCompare(a, b any, op string) (int, error) {
	if x, ok := num(a); ok {
		if y, ok := num(b); ok {
			switch {
			case x < y:
				return -1, nil
			case x > y:
				return 1, nil
			}
			return 0, nil
		}
	}
	if x, ok := a.(string); ok {
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	}
	sym := map[string]string{"lt": "<", "gt": ">"}[op]
	return 0, fmt.Errorf("'%s' not supported between instances of '%s' and '%s'", sym, pyType(a), pyType(b))
}

// parseInverted is upstream parse_inverted_operator.
func parseInverted(op string) (string, bool, error) {
	op = strings.TrimSpace(op)
	if strings.Count(op, "!") > 1 {
		return "", false, fmt.Errorf("Multiple exclamation marks are not allowed. To apply the invert of an operation, simply add an exclamation mark (with an optional space) before the operator, e.g. eq - !eq.")
	}
	inv := strings.HasPrefix(op, "!")
	return strings.TrimSpace(strings.TrimLeft(op, "!")), inv, nil
}

// normalizeArgs turns the deprecated positional form into named
// arguments.
func normalizeArgs(sig signature, raw any) (map[string]any, error) {
	switch a := raw.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		out := make(map[string]any, len(a))
		for k, v := range a {
			out[k] = v
		}
		return out, nil
	case []any:
		if len(a) < len(sig.required) {
			return nil, errs.NewMessage(errs.ClassInspectionRuleValidationFailure, fmt.Sprintf("Not enough arguments provided. Missing: %s", strings.Join(sig.required[len(a):], ", ")))
		}
		out := map[string]any{}
		for i, v := range a {
			switch {
			case i < len(sig.required):
				out[sig.required[i]] = v
			case i-len(sig.required) < len(sig.optional):
				out[sig.optional[i-len(sig.required)]] = v
			}
		}
		return out, nil
	}
	return nil, errs.NewMessage(errs.ClassInspectionRuleValidationFailure, "args must be either a list or dictionary")
}

// processArgs interpolates the formatted arguments, or every argument
// inside a loop, and checks the arguments match the signature.
func processArgs(sig signature, op string, raw any, s *scope, inLoop bool) (map[string]any, error) {
	args, err := normalizeArgs(sig, raw)
	if err != nil {
		return nil, err
	}
	var missing, unexpected []string
	known := map[string]bool{}
	for _, r := range sig.required {
		known[r] = true
		if _, ok := args[r]; !ok {
			missing = append(missing, r)
		}
	}
	for _, o := range sig.optional {
		known[o] = true
	}
	for k := range args {
		if !known[k] {
			unexpected = append(unexpected, k)
		}
	}
	sort.Strings(unexpected)
	var msg []string
	if len(missing) > 0 {
		msg = append(msg, "missing required argument(s): "+strings.Join(missing, ", "))
	}
	if len(unexpected) > 0 {
		msg = append(msg, "unexpected argument(s): "+strings.Join(unexpected, ", "))
	}
	if len(msg) > 0 {
		return nil, errs.NewMessage(errs.ClassInspectionRuleValidationFailure, strings.Join(msg, "; "))
	}
	formatted := map[string]bool{}
	for _, f := range sig.formatted {
		formatted[f] = true
	}
	for k, v := range args {
		if inLoop || formatted[k] {
			args[k] = s.interpolate(v, op)
		}
	}
	return args, nil
}

// CheckConditions is upstream check_conditions: every condition must hold.
func (e *Engine) checkConditions(r Rule, s *scope) (bool, error) {
	for _, c := range r.Conditions {
		opName, _ := c["op"].(string)
		name, inverted, err := parseInverted(opName)
		if err != nil {
			return false, err
		}
		op, ok := operators[name]
		if !ok {
			return false, fmt.Errorf("Unsupported operator: '%s'. Supported operators are: %s.", name, strings.Join(OperatorNames(), ", "))
		}
		check := func(s *scope, inLoop bool) (bool, error) {
			args, err := processArgs(op.sig, name, c["args"], s, inLoop)
			if err != nil {
				return false, err
			}
			if inLoop && containsStr(op.sig.optional, "force_strings") {
				args["force_strings"] = true
			}
			res, err := op.fn(args)
			if err != nil {
				return false, err
			}
			return res != inverted, nil
		}
		var res bool
		switch loop := c["loop"].(type) {
		case map[string]any:
			if len(loop) == 0 {
				res, err = check(s, false)
				break
			}
			res, err = check(s.withItem(loop), true)
		case []any:
			if len(loop) == 0 {
				res, err = check(s, false)
				break
			}
			res, err = checkLoop(loop, c["multiple"], func(item any) (bool, error) { return check(s.withItem(item), true) })
		default:
			res, err = check(s, false)
		}
		if err != nil || !res {
			return false, err
		}
	}
	return true, nil
}

// checkLoop combines loop results per "multiple": any (default), all,
// first (the first true one wins), last.
func checkLoop(items []any, multiple any, check func(any) (bool, error)) (bool, error) {
	mode, _ := multiple.(string)
	if mode == "" {
		mode = "any"
	}
	var results []bool
	for _, it := range items {
		r, err := check(it)
		if err != nil {
			return false, err
		}
		if mode == "first" && r {
			return true, nil
		}
		if mode == "last" {
			results = []bool{r}
		} else {
			results = append(results, r)
		}
	}
	switch mode {
	case "any":
		for _, r := range results {
			if r {
				return true, nil
			}
		}
		return false, nil
	case "all":
		for _, r := range results {
			if !r {
				return false, nil
			}
		}
		return true, nil
	}
	return len(results) > 0 && results[0], nil
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Engine applies inspection rules (upstream engine.apply_rules).
type Engine struct {
	o RuleOptions
}

// NewEngine returns an engine with the given options.
func NewEngine(o RuleOptions) *Engine {
	if o.MaskSecrets == "" {
		o.MaskSecrets = "always"
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	return &Engine{o: o}
}

// Apply runs the rules, highest priority first (stable among equals),
// each whose conditions hold having its actions applied in order. A
// failure stops the run: fail actions and inspection failures as they
// are, other errors wrapped as upstream "Failed to apply rule".
func (e *Engine) Apply(ctx context.Context, t Target, rules []Rule, inventory, pluginData map[string]any) error {
	sorted := append([]Rule(nil), rules...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Priority > sorted[j].Priority })
	n := t.Node()
	for _, r := range sorted {
		mask := e.o.MaskSecrets == "always" || (e.o.MaskSecrets == "sensitive" && !r.Sensitive)
		s, err := newScope(n, inventory, pluginData, mask)
		if err != nil {
			return err
		}
		ok, err := e.checkConditions(r, s)
		if err == nil && ok {
			err = e.applyActions(ctx, t, r, s, pluginData)
		}
		if err != nil {
			if _, isIronic := errs.As(err); isIronic {
				return err
			}
			return errs.NewMessage(errs.ClassIronicException, fmt.Sprintf("Failed to apply rule %s to node %s: %s", r.UUID, n.UUID, err))
		}
	}
	return nil
}

func (e *Engine) applyActions(ctx context.Context, t Target, r Rule, s *scope, pluginData map[string]any) error {
	for _, a := range r.Actions {
		name, _ := a["op"].(string)
		act, ok := actions[name]
		if !ok {
			return fmt.Errorf("Unsupported action: '%s'. Supported actions are: %s.", name, strings.Join(ActionNames(), ", "))
		}
		run := func(s *scope, inLoop bool) error {
			args, err := processArgs(act.sig, name, a["args"], s, inLoop)
			if err != nil {
				return err
			}
			if act.sig.pluginData {
				args["plugin_data"] = pluginData
			}
			return act.fn(ctx, &actionEnv{e: e, t: t, rule: r}, args)
		}
		var err error
		switch loop := a["loop"].(type) {
		case map[string]any:
			if len(loop) == 0 {
				err = run(s, false)
				break
			}
			err = run(s.withItem(loop), true)
		case []any:
			if len(loop) == 0 {
				err = run(s, false)
				break
			}
			for _, it := range loop {
				if err = run(s.withItem(it), true); err != nil {
					break
				}
			}
		default:
			err = run(s, false)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

type actionEnv struct {
	e    *Engine
	t    Target
	rule Rule
}

type action struct {
	sig signature
	fn  func(ctx context.Context, env *actionEnv, args map[string]any) error
}

// ActionNames lists the rule actions.
func ActionNames() []string { return sortedKeys(actions) }

func actionFailure(format string, a ...any) error {
	return errs.New(errs.ClassRuleActionExecutionFailure, map[string]any{"reason": fmt.Sprintf(format, a...)})
}

var actions map[string]action

func init() {
	actions = map[string]action{
		"fail": {signature{required: []string{"msg"}}, func(_ context.Context, _ *actionEnv, a map[string]any) error {
			return errs.New(errs.ClassHardwareInspectionFailure, map[string]any{"error": pyStr(a["msg"])})
		}},
		"log":                   {signature{required: []string{"msg"}, optional: []string{"level"}, formatted: []string{"msg"}}, logAction},
		"set-attribute":         {signature{required: []string{"path", "value"}, formatted: []string{"value"}}, setAttribute},
		"extend-attribute":      {signature{required: []string{"path", "value"}, optional: []string{"unique"}, formatted: []string{"value"}}, extendAttribute},
		"del-attribute":         {signature{required: []string{"path"}}, delAttribute},
		"set-capability":        {signature{required: []string{"name", "value"}, formatted: []string{"value"}}, setCapability},
		"unset-capability":      {signature{required: []string{"name"}}, unsetCapability},
		"add-trait":             {signature{required: []string{"name"}}, addTrait},
		"remove-trait":          {signature{required: []string{"name"}}, removeTrait},
		"set-plugin-data":       {signature{required: []string{"path", "value"}, formatted: []string{"value"}, pluginData: true}, setPluginData},
		"extend-plugin-data":    {signature{required: []string{"path", "value"}, optional: []string{"unique"}, formatted: []string{"value"}, pluginData: true}, extendPluginData},
		"unset-plugin-data":     {signature{required: []string{"path"}, pluginData: true}, unsetPluginData},
		"set-port-attribute":    {signature{required: []string{"port_id", "path", "value"}, formatted: []string{"value"}}, portAttr("set")},
		"extend-port-attribute": {signature{required: []string{"port_id", "path", "value"}, optional: []string{"unique"}, formatted: []string{"value"}}, portAttr("extend")},
		"del-port-attribute":    {signature{required: []string{"port_id", "path"}}, portAttr("del")},
		"api-call":              {signature{required: []string{"url"}, optional: []string{"headers", "proxies", "timeout", "retries", "backoff_factor"}, formatted: []string{"url"}}, apiCall},
	}
}

func logAction(ctx context.Context, env *actionEnv, a map[string]any) error {
	level := "info"
	if l, ok := a["level"].(string); ok {
		level = strings.ToLower(l)
	}
	lv, ok := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warning": slog.LevelWarn, "error": slog.LevelError, "critical": slog.LevelError + 4}[level]
	if !ok {
		return errs.New(errs.ClassInspectionRuleExecutionFailure, map[string]any{"reason": fmt.Sprintf("Invalid log level: %s. Choose from {'critical', 'debug', 'error', 'info', 'warning'}", level)})
	}
	env.e.o.Log.Log(ctx, lv, pyStr(a["msg"]), "rule", env.rule.UUID, "node", env.t.Node().UUID)
	return nil
}

// normalizePath is upstream normalize_path: slash or dot notation.
func normalizePath(p string) []string {
	if strings.Contains(p, "/") {
		return strings.Split(strings.Trim(p, "/"), "/")
	}
	return strings.Split(p, ".")
}

func setCapability(_ context.Context, env *actionEnv, a map[string]any) error {
	n := env.t.Node()
	c := pyStr(a["name"]) + ":" + pyStr(a["value"])
	if cur, _ := n.Properties["capabilities"].(string); cur != "" {
		c = cur + "," + c
	}
	setProperty(n, "capabilities", c)
	return nil
}

func unsetCapability(_ context.Context, env *actionEnv, a map[string]any) error {
	n := env.t.Node()
	cur, _ := n.Properties["capabilities"].(string)
	if cur == "" {
		return nil
	}
	var keep []string
	for _, c := range strings.Split(cur, ",") {
		if k, _, _ := strings.Cut(c, ":"); k != pyStr(a["name"]) {
			keep = append(keep, c)
		}
	}
	setProperty(n, "capabilities", strings.Join(keep, ","))
	return nil
}

func addTrait(ctx context.Context, env *actionEnv, a map[string]any) error {
	if err := env.t.AddTrait(ctx, pyStr(a["name"])); err != nil {
		return actionFailure("Failed to add new trait %s: %s", pyStr(a["name"]), err)
	}
	return nil
}

func removeTrait(ctx context.Context, env *actionEnv, a map[string]any) error {
	err := env.t.RemoveTrait(ctx, pyStr(a["name"]))
	if err != nil && !errs.Is(err, errs.ClassNodeTraitNotFound) {
		return actionFailure("Failed to remove trait %s: %s", pyStr(a["name"]), err)
	}
	return nil
}

func dotted(p any) []string {
	if l, ok := p.([]any); ok {
		out := make([]string, len(l))
		for i, x := range l {
			out[i] = pyStr(x)
		}
		return out
	}
	return strings.Split(pyStr(p), ".")
}

func setPluginData(_ context.Context, _ *actionEnv, a map[string]any) error {
	keys := dotted(a["path"])
	cur := a["plugin_data"].(map[string]any)
	for _, k := range keys[:len(keys)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			if _, exists := cur[k]; exists {
				return actionFailure("Failed to set plugin data at %s: %s", pyStr(a["path"]), "not a dictionary")
			}
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	cur[keys[len(keys)-1]] = a["value"]
	return nil
}

func extendPluginData(ctx context.Context, env *actionEnv, a map[string]any) error {
	keys := dotted(a["path"])
	var cur any = a["plugin_data"]
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			cur = nil
			break
		}
		cur = m[k]
	}
	list, ok := cur.([]any)
	if !ok && cur != nil {
		return actionFailure("Failed to extend plugin data at %s: %s", pyStr(a["path"]), "not a list")
	}
	if u, _ := a["unique"].(bool); !u || !inList(list, a["value"]) {
		list = append(list, a["value"])
	}
	return setPluginData(ctx, env, map[string]any{"path": a["path"], "value": list, "plugin_data": a["plugin_data"]})
}

func inList(l []any, v any) bool {
	for _, x := range l {
		if pyEqual(x, v) {
			return true
		}
	}
	return false
}

// unsetPluginData removes the key, and its parent dict when it was the
// only key there (upstream _unset_nested_dict).
func unsetPluginData(_ context.Context, _ *actionEnv, a map[string]any) error {
	keys := dotted(a["path"])
	root := a["plugin_data"].(map[string]any)
	cur := root
	var parents []map[string]any
	for _, k := range keys[:len(keys)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil
		}
		parents = append(parents, cur)
		cur = next
	}
	last := keys[len(keys)-1]
	if _, ok := cur[last]; !ok {
		return nil
	}
	if len(cur) == 1 && len(keys) > 1 {
		delete(parents[len(parents)-1], keys[len(keys)-2])
		return nil
	}
	delete(cur, last)
	return nil
}

func apiCall(ctx context.Context, env *actionEnv, a map[string]any) error {
	url := pyStr(a["url"])
	timeout := 5.0
	if v, ok := num(a["timeout"]); ok {
		timeout = v
	}
	if timeout <= 0 {
		return actionFailure("Invalid parameter: %s", "timeout must be greater than zero")
	}
	retries := 3
	if v, ok := num(a["retries"]); ok {
		retries = int(v)
	}
	backoff := 0.3
	if v, ok := num(a["backoff_factor"]); ok {
		backoff = v
	}
	headers, _ := a["headers"].(map[string]any)
	var lastErr error
	for attempt := 0; attempt <= retries; attempt++ {
		if attempt > 0 {
			d := time.Duration(backoff * float64(int(1)<<(attempt-1)) * float64(time.Second))
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return actionFailure("Request to %s failed: %s", url, ctx.Err())
			}
		}
		rctx, cancel := context.WithTimeout(ctx, time.Duration(timeout*float64(time.Second)))
		req, err := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
		if err != nil {
			cancel()
			return actionFailure("Invalid parameter: %s", err)
		}
		for k, v := range headers {
			req.Header.Set(k, pyStr(v))
		}
		resp, err := env.e.o.HTTPClient.Do(req)
		cancel()
		if err != nil {
			lastErr = err
			continue
		}
		resp.Body.Close()
		if resp.StatusCode < 400 {
			return nil
		}
		lastErr = fmt.Errorf("%d Error for url: %s", resp.StatusCode, url)
		if resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
			break
		}
	}
	return actionFailure("Request to %s failed: %s", url, lastErr)
}
