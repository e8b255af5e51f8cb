package policy

//go:generate go run gen_defaults.go

// Default is a rule registered in code (oslo.policy's RuleDefault): its
// name, default check string, the token scopes it accepts (empty: any) and
// the rule it replaced, if any.
type Default struct {
	Name       string
	CheckStr   string
	ScopeTypes []string
	Deprecated *DeprecatedRule
}

// DeprecatedRule is the name and check string a Default replaced. While
// [oslo_policy]/enforce_new_defaults is false the two are OR'ed, as
// oslo.policy does to keep upgrades from locking users out.
type DeprecatedRule struct {
	Name     string
	CheckStr string
}

// Defaults returns a copy of Ironic's registered rules in upstream's order.
func Defaults() []Default {
	out := make([]Default, len(ironicDefaults))
	copy(out, ironicDefaults)
	return out
}
