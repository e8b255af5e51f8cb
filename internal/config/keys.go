package config

import "time"

// Typed option keys: keys_gen.go declares one value per option of the
// table (upstream's, the libraries' and ours), of the key type that matches
// the option's Go type, so that a misspelt option or a read of the wrong
// type does not compile. The string accessors (Config.Bool and the rest)
// stay for names computed at run time.

// Key is any option key; IsSetOf, HasOf and DisplayOf take every kind.
type Key interface {
	// Option names the option's section and name.
	Option() Name
}

// StringOpt is the key of a string-valued option (string, IP address,
// host address or domain, URI).
type StringOpt struct{ n Name }

// IntOpt is the key of an integer option (integer, port, octal).
type IntOpt struct{ n Name }

// FloatOpt is the key of a float option.
type FloatOpt struct{ n Name }

// BoolOpt is the key of a boolean option.
type BoolOpt struct{ n Name }

// ListOpt is the key of a list or multi-valued string option.
type ListOpt struct{ n Name }

// DictOpt is the key of a dict or multi-valued dict option.
type DictOpt struct{ n Name }

// Option names the option.
func (k StringOpt) Option() Name { return k.n }

// Option names the option.
func (k IntOpt) Option() Name { return k.n }

// Option names the option.
func (k FloatOpt) Option() Name { return k.n }

// Option names the option.
func (k BoolOpt) Option() Name { return k.n }

// Option names the option.
func (k ListOpt) Option() Name { return k.n }

// Option names the option.
func (k DictOpt) Option() Name { return k.n }

// StringOf returns a string-valued option, as String does.
func (c *Config) StringOf(k StringOpt) string { return c.String(k.n.Section, k.n.Name) }

// IntOf returns an integer option, as Int does.
func (c *Config) IntOf(k IntOpt) int { return c.Int(k.n.Section, k.n.Name) }

// FloatOf returns a float option, as Float does.
func (c *Config) FloatOf(k FloatOpt) float64 { return c.Float(k.n.Section, k.n.Name) }

// BoolOf returns a boolean option, as Bool does.
func (c *Config) BoolOf(k BoolOpt) bool { return c.Bool(k.n.Section, k.n.Name) }

// ListOf returns a copy of a list option, as List does.
func (c *Config) ListOf(k ListOpt) []string { return c.List(k.n.Section, k.n.Name) }

// DictOf returns a copy of a dict option, as Dict does.
func (c *Config) DictOf(k DictOpt) map[string]string { return c.Dict(k.n.Section, k.n.Name) }

// DurationOf returns an integer option counted in seconds, as Duration
// does.
func (c *Config) DurationOf(k IntOpt) time.Duration { return c.Duration(k.n.Section, k.n.Name) }

// IsSetOf reports whether a file gave the option a value, as IsSet does.
func (c *Config) IsSetOf(k Key) bool {
	n := k.Option()
	return c.IsSet(n.Section, n.Name)
}

// HasOf reports whether the option has a value at all, as Has does.
func (c *Config) HasOf(k Key) bool {
	n := k.Option()
	return c.Has(n.Section, n.Name)
}

// DisplayOf returns the value as text for logs, secrets masked, as
// Display does.
func (c *Config) DisplayOf(k Key) string {
	n := k.Option()
	return c.Display(n.Section, n.Name)
}
