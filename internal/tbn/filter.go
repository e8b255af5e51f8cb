// Package tbn is trait-based networking (upstream's
// ironic/common/trait_based_networking): a YAML file names traits, each a
// list of actions whose filter expressions pick the node's ports,
// portgroups and networks; when a VIF is attached to a node whose
// instance_info traits name some of them, the planner turns the node's
// free ports into the actions the network interface carries out.
package tbn

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
)

// Operator joins two filter expressions.
type Operator string

// The operators of upstream's grammar.
const (
	And Operator = "&&"
	Or  Operator = "||"
)

// Comparator relates a variable to a string literal.
type Comparator string

// The comparators of upstream's grammar; PrefixMatch is "starts with".
const (
	Equality    Comparator = "=="
	Inequality  Comparator = "!="
	GreaterOrEq Comparator = ">="
	Greater     Comparator = ">"
	LessOrEq    Comparator = "<="
	Less        Comparator = "<"
	PrefixMatch Comparator = "=~"
)

// Variable names an attribute of a port-like object or of a network.
type Variable string

// The variables upstream recognises; port.is_port and port.is_portgroup
// are the two that may stand alone as functions.
const (
	NetworkName         Variable = "network.name"
	NetworkTags         Variable = "network.tags"
	PortAddress         Variable = "port.address"
	PortCategory        Variable = "port.category"
	PortIsPort          Variable = "port.is_port"
	PortIsPortgroup     Variable = "port.is_portgroup"
	PortPhysicalNetwork Variable = "port.physical_network"
	PortVendor          Variable = "port.vendor"
)

var variables = map[Variable]bool{NetworkName: true, NetworkTags: true, PortAddress: true, PortCategory: true,
	PortIsPort: true, PortIsPortgroup: true, PortPhysicalNetwork: true, PortVendor: true}

func (v Variable) object() string { o, _, _ := strings.Cut(string(v), "."); return o }

func (v Variable) attribute() string { _, a, _ := strings.Cut(string(v), "."); return a }

// PortLike is a port or a portgroup as filters see it (upstream's
// PrimordialPort with its Port and Portgroup subclasses). Nil string
// fields are absent values: a filter reading one fails as upstream does.
type PortLike struct {
	ID              int64
	UUID            string
	Address         *string
	Category        *string
	PhysicalNetwork *string
	Vendor          *string
	// IsPortgroup tells the portgroup from the port.
	IsPortgroup bool
	// AvailableForDynamicPortgroup (ports only) lets group_and_attach_ports
	// put the port in a dynamic portgroup.
	AvailableForDynamicPortgroup bool
	// Attached is whether the object already carries a tenant VIF.
	Attached bool
}

// Network is the network (VIF) a filter is matched against.
type Network struct {
	ID   string
	Name *string
	Tags []string
	// universal networks satisfy every network.* expression: the planner
	// uses one to group ports before any network is considered.
	universal bool
}

// NetworkFromVIFInfo is upstream's Network.from_vif_info: the VIF id,
// its optional name and its tags (none when absent, so that network.tags
// filters never fail for lack of them).
func NetworkFromVIFInfo(vifInfo map[string]any) Network {
	n := Network{}
	n.ID, _ = vifInfo["id"].(string)
	if s, ok := vifInfo["name"].(string); ok {
		n.Name = &s
	}
	switch tags := vifInfo["tags"].(type) {
	case []string:
		n.Tags = append([]string(nil), tags...)
	case []any:
		for _, t := range tags {
			if s, ok := t.(string); ok {
				n.Tags = append(n.Tags, s)
			}
		}
	}
	return n
}

// expression is a node of a parsed filter.
type expression interface {
	eval(p PortLike, n Network) (bool, error)
	String() string
}

// Filter is a parsed filter expression (upstream's FilterExpression). It
// renders back to its canonical text, which is how two filters compare.
type Filter struct {
	expr expression
}

// Matches reports whether the (port-like, network) pair passes the filter.
func (f *Filter) Matches(p PortLike, n Network) (bool, error) { return f.expr.eval(p, n) }

func (f *Filter) String() string { return f.expr.String() }

type single struct {
	variable   Variable
	comparator Comparator
	literal    string
}

type function struct{ variable Variable }

type compound struct {
	left  expression
	op    Operator
	right expression
}

type paren struct{ inner expression }

func (e single) String() string {
	return fmt.Sprintf("%s %s '%s'", e.variable, e.comparator, e.literal)
}

func (e function) String() string { return string(e.variable) }

func (e compound) String() string { return fmt.Sprintf("%s %s %s", e.left, e.op, e.right) }

func (e paren) String() string { return "(" + e.inner.String() + ")" }

func (e paren) eval(p PortLike, n Network) (bool, error) { return e.inner.eval(p, n) }

// eval short-circuits as upstream: the right side of "a || b" is not
// evaluated when a holds, so it may name something a's objects lack.
func (e compound) eval(p PortLike, n Network) (bool, error) {
	l, err := e.left.eval(p, n)
	if err != nil {
		return false, err
	}
	if (e.op == Or && l) || (e.op == And && !l) {
		return l, nil
	}
	return e.right.eval(p, n)
}

// eval of a function: the grammar admits only the two port functions.
func (e function) eval(p PortLike, _ Network) (bool, error) {
	if e.variable == PortIsPortgroup {
		return p.IsPortgroup, nil
	}
	return !p.IsPortgroup, nil
}

func attributeError(v Variable) error {
	return errs.New(errs.ClassTBNAttributeRetrievalException, map[string]any{"attr_name": v.attribute()})
}

// value is upstream's _retrieve_attribute: a string attribute, a tag set
// or a function; an absent (None) one fails the filter with
// TBNAttributeRetrievalException.
func value(v Variable, p PortLike, n Network) (s *string, tags []string, isFunc bool, err error) {
	switch v {
	case NetworkName:
		s = n.Name
	case NetworkTags:
		return nil, n.Tags, false, nil
	case PortAddress:
		s = p.Address
	case PortCategory:
		s = p.Category
	case PortPhysicalNetwork:
		s = p.PhysicalNetwork
	case PortVendor:
		s = p.Vendor
	case PortIsPort, PortIsPortgroup:
		return nil, nil, true, nil
	}
	if s == nil {
		return nil, nil, false, attributeError(v)
	}
	return s, nil, false, nil
}

func (e single) eval(p PortLike, n Network) (bool, error) {
	if e.variable.object() == "network" && n.universal {
		return true, nil
	}
	s, tags, isFunc, err := value(e.variable, p, n)
	if err != nil {
		return false, err
	}
	switch {
	case e.variable == NetworkTags:
		return e.comparator.evalCollection(tags, e.literal)
	case isFunc:
		// Upstream compares the bound method itself: never equal to a
		// string, and not orderable.
		switch e.comparator {
		case Equality:
			return false, nil
		case Inequality:
			return true, nil
		case PrefixMatch:
			return false, prefixTypeError()
		}
		return false, errs.NewMessage(errs.ClassTraitBasedNetworkingException,
			fmt.Sprintf("Comparator '%s' cannot compare function '%s' to a string", e.comparator, e.variable))
	}
	return e.comparator.evalString(*s, e.literal), nil
}

func prefixTypeError() error {
	return errs.NewMessage(errs.ClassTBNComparatorPrefixMatchTypeMismatch,
		"Prefix match can only be used with variables of type string")
}

// evalString compares as Python compares str: by code point, which is
// Go's byte order of UTF-8.
func (c Comparator) evalString(v, lit string) bool {
	switch c {
	case Equality:
		return v == lit
	case Inequality:
		return v != lit
	case GreaterOrEq:
		return v >= lit
	case Greater:
		return v > lit
	case LessOrEq:
		return v <= lit
	case Less:
		return v < lit
	case PrefixMatch:
		return strings.HasPrefix(v, lit)
	}
	return false
}

// evalCollection matches a collection (network.tags) by membership, or
// by any member's prefix; ordering a collection fails.
func (c Comparator) evalCollection(tags []string, lit string) (bool, error) {
	has := func(pred func(string) bool) bool {
		for _, t := range tags {
			if pred(t) {
				return true
			}
		}
		return false
	}
	switch c {
	case Equality:
		return has(func(t string) bool { return t == lit }), nil
	case Inequality:
		return !has(func(t string) bool { return t == lit }), nil
	case PrefixMatch:
		return has(func(t string) bool { return strings.HasPrefix(t, lit) }), nil
	}
	return false, errs.NewMessage(errs.ClassTBNComparatorCollectionTypeMismatch,
		fmt.Sprintf("Comparator '%s' can only be used with variables of type string, not a collection", c))
}

// The terminals of upstream's grammar.
var (
	literalRE  = regexp.MustCompile(`^'[A-Za-z0-9_\-.]*'`)
	variableRE = regexp.MustCompile(`^[a-z]+\.[a-z_]+`)
)

// comparators in the order they must be tried: two-character ones before
// their one-character prefixes.
var comparators = []Comparator{Equality, Inequality, GreaterOrEq, LessOrEq, PrefixMatch, Greater, Less}

// ParseFilter parses a filter expression of upstream's grammar:
//
//	filter   := single | compound | "(" filter ")" | function
//	single   := variable comparator 'literal'
//	compound := filter ( ("&&" | "||") filter )+
//	function := "port.is_port" | "port.is_portgroup"
//
// The grammar gives "&&" and "||" no precedence, so upstream's parser
// (lark's Earley) groups an unparenthesised mix of them in a way that
// depends on the chain's length; here "&&" binds tighter than "||" and
// both associate to the left. Chains of one operator, and parenthesised
// mixes, evaluate the same either way.
func ParseFilter(text string) (*Filter, error) {
	p := &parser{src: text}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.src) {
		return nil, p.errorf("unexpected %q", p.src[p.pos:])
	}
	return &Filter{expr: e}, nil
}

type parser struct {
	src string
	pos int
}

func (p *parser) errorf(format string, a ...any) error {
	return fmt.Errorf("filter expression %q, column %d: %s", p.src, p.pos+1, fmt.Sprintf(format, a...))
}

// skipSpace skips lark's common.WS.
func (p *parser) skipSpace() {
	for p.pos < len(p.src) && strings.ContainsRune(" \t\n\r\f\v", rune(p.src[p.pos])) {
		p.pos++
	}
}

func (p *parser) accept(tok string) bool {
	p.skipSpace()
	if strings.HasPrefix(p.src[p.pos:], tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

func (p *parser) or() (expression, error) {
	left, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.accept(string(Or)) {
		right, err := p.and()
		if err != nil {
			return nil, err
		}
		left = compound{left: left, op: Or, right: right}
	}
	return left, nil
}

func (p *parser) and() (expression, error) {
	left, err := p.primary()
	if err != nil {
		return nil, err
	}
	for p.accept(string(And)) {
		right, err := p.primary()
		if err != nil {
			return nil, err
		}
		left = compound{left: left, op: And, right: right}
	}
	return left, nil
}

func (p *parser) primary() (expression, error) {
	if p.accept("(") {
		inner, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.accept(")") {
			return nil, p.errorf("expected ')'")
		}
		return paren{inner: inner}, nil
	}
	p.skipSpace()
	name := variableRE.FindString(p.src[p.pos:])
	if name == "" {
		return nil, p.errorf("expected a variable, a function or '('")
	}
	p.pos += len(name)
	v := Variable(name)
	p.skipSpace()
	for _, c := range comparators {
		if !p.accept(string(c)) {
			continue
		}
		if !variables[v] {
			return nil, p.errorf("'%s' is not a valid variable", name)
		}
		p.skipSpace()
		lit := literalRE.FindString(p.src[p.pos:])
		if lit == "" {
			return nil, p.errorf("expected a quoted literal of letters, digits, '_', '-' or '.'")
		}
		p.pos += len(lit)
		return single{variable: v, comparator: c, literal: lit[1 : len(lit)-1]}, nil
	}
	if v == PortIsPort || v == PortIsPortgroup {
		return function{variable: v}, nil
	}
	return nil, p.errorf("expected a comparator after %s", name)
}
