package policy

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Rule is a parsed check string: a tree of checks built exactly as
// oslo.policy's parser builds it (same greedy reductions, same precedence
// quirks), so a policy file means here what it means upstream.
type Rule struct {
	root *node
}

type nodeKind uint8

const (
	kindFalse nodeKind = iota
	kindTrue
	kindAnd
	kindOr
	kindNot
	kindRule    // rule:<name>
	kindRole    // role:<match>
	kindGeneric // <field>:<match>
)

type node struct {
	kind     nodeKind
	children []*node

	// Leaf checks: the text on either side of the first ':'.
	field string
	match string

	pattern pattern
	// literal is set when field is a Python literal (True, 'x', 42…): the
	// check compares the substituted match with the literal's str().
	literal    string
	hasLiteral bool
	// path is field split on '.', looked up in the credentials.
	path []string
	// broken marks a match using a %-format Python would reject or render
	// in a way we do not model; such a check never matches.
	broken bool
}

// segment is a piece of a match: literal text, or a %(key)s substitution.
type segment struct {
	text string
	key  bool
}

// pattern is a match string split for allocation-free comparison.
type pattern struct {
	segs  []segment
	plain bool // no substitution: segs is one literal (or empty)
	text  string
}

var (
	falseNode = &node{kind: kindFalse}
	trueNode  = &node{kind: kindTrue}
)

// Parse parses a check string in the oslo.policy language.
//
// The returned rule is never nil: like oslo.policy, a string that cannot be
// understood fails closed. A check without ':' becomes '!' in place, and a
// string that does not reduce to one expression becomes '!' as a whole. The
// error lists what was not understood, for logging and validation; the rule
// is still the one oslo.policy would enforce.
func Parse(s string) (*Rule, error) {
	if s == "" {
		return &Rule{root: trueNode}, nil
	}
	var p parser
	for _, tok := range tokenize(s, &p.errs) {
		p.shift(tok)
	}
	if len(p.stack) != 1 || p.stack[0].n == nil {
		p.errs = append(p.errs, fmt.Errorf("could not parse rule %q", s))
		return &Rule{root: falseNode}, errors.Join(p.errs...)
	}
	return &Rule{root: p.stack[0].n}, errors.Join(p.errs...)
}

// MustParse is Parse for check strings known to be valid (tests, tables).
func MustParse(s string) *Rule {
	r, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return r
}

type tokType uint8

const (
	tCheck tokType = iota
	tAndExpr
	tOrExpr
	tAnd
	tOr
	tNot
	tLParen
	tRParen
	tString
)

type token struct {
	typ tokType
	n   *node
}

type parser struct {
	stack []token
	errs  []error
}

func (p *parser) shift(t token) {
	p.stack = append(p.stack, t)
	p.reduce()
}

// reduce applies oslo.policy's reductions greedily, three-token patterns
// first, until none applies.
func (p *parser) reduce() {
	for {
		s := p.stack
		if n := len(s); n >= 3 {
			a, b, c := s[n-3], s[n-2], s[n-1]
			var r token
			ok := true
			switch {
			case a.typ == tLParen && (b.typ == tCheck || b.typ == tAndExpr || b.typ == tOrExpr) && c.typ == tRParen:
				r = token{tCheck, b.n}
			case a.typ == tCheck && b.typ == tAnd && c.typ == tCheck:
				r = token{tAndExpr, &node{kind: kindAnd, children: []*node{a.n, c.n}}}
			case a.typ == tAndExpr && b.typ == tAnd && c.typ == tCheck:
				a.n.children = append(a.n.children, c.n)
				r = a
			case a.typ == tOrExpr && b.typ == tAnd && c.typ == tCheck:
				// "A or B and C": C binds to the last operand of the or.
				last := a.n.children[len(a.n.children)-1]
				if last.kind == kindAnd {
					last.children = append(last.children, c.n)
				} else {
					a.n.children[len(a.n.children)-1] = &node{kind: kindAnd, children: []*node{last, c.n}}
				}
				r = a
			case (a.typ == tCheck || a.typ == tAndExpr) && b.typ == tOr && c.typ == tCheck:
				r = token{tOrExpr, &node{kind: kindOr, children: []*node{a.n, c.n}}}
			case a.typ == tOrExpr && b.typ == tOr && c.typ == tCheck:
				a.n.children = append(a.n.children, c.n)
				r = a
			default:
				ok = false
			}
			if ok {
				p.stack = append(s[:n-3], r)
				continue
			}
		}
		if n := len(s); n >= 2 && s[n-2].typ == tNot && s[n-1].typ == tCheck {
			p.stack = append(s[:n-2], token{tCheck, &node{kind: kindNot, children: []*node{s[n-1].n}}})
			continue
		}
		return
	}
}

// isPySpace is what Python's re \s matches in a str pattern.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// tokenize splits on whitespace and peels parentheses off the ends of each
// word, as oslo.policy does; parentheses inside a word belong to the check
// (so %(key)s survives).
func tokenize(s string, errs *[]error) []token {
	var out []token
	for _, tok := range strings.FieldsFunc(s, func(r rune) bool { return r != utf8.RuneError && isPySpace(r) }) {
		clean := strings.TrimLeft(tok, "(")
		for range len(tok) - len(clean) {
			out = append(out, token{typ: tLParen})
		}
		if clean == "" {
			continue
		}
		tok = clean
		clean = strings.TrimRight(tok, ")")
		trail := len(tok) - len(clean)
		switch lowerASCII(clean) {
		case "and":
			out = append(out, token{typ: tAnd})
		case "or":
			out = append(out, token{typ: tOr})
		case "not":
			out = append(out, token{typ: tNot})
		default:
			if clean == "" {
				break
			}
			// The quote test looks at the word before its trailing ')' are
			// removed, as upstream does.
			if len(tok) >= 2 && tok[0] == tok[len(tok)-1] && (tok[0] == '"' || tok[0] == '\'') {
				out = append(out, token{typ: tString})
			} else {
				out = append(out, token{tCheck, parseCheck(clean, errs)})
			}
		}
		for range trail {
			out = append(out, token{typ: tRParen})
		}
	}
	return out
}

func lowerASCII(s string) string {
	if len(s) > 3 {
		return ""
	}
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// parseCheck builds one leaf from "kind:match", "!" or "@".
func parseCheck(s string, errs *[]error) *node {
	switch s {
	case "!":
		return falseNode
	case "@":
		return trueNode
	}
	field, match, ok := strings.Cut(s, ":")
	if !ok {
		*errs = append(*errs, fmt.Errorf("check %q has no ':'; it never matches", s))
		return falseNode
	}
	n := &node{field: field, match: match}
	switch field {
	case "rule":
		n.kind = kindRule
		return n
	case "role":
		n.kind = kindRole
	default:
		n.kind = kindGeneric
		n.literal, n.hasLiteral = pyLiteral(field)
		if !n.hasLiteral {
			n.path = strings.Split(field, ".")
		}
	}
	pat, err := parsePattern(match)
	if err != nil {
		*errs = append(*errs, fmt.Errorf("check %q: %w; it never matches", s, err))
		n.broken = true
	}
	n.pattern = pat
	return n
}

// parsePattern splits a match on Python %-format directives. Only %(key)s
// and %% are modelled; they are all Ironic's rules and oslo.policy's
// documentation use.
func parsePattern(m string) (pattern, error) {
	if !strings.Contains(m, "%") {
		return pattern{plain: true, text: m, segs: []segment{{text: m}}}, nil
	}
	var segs []segment
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			segs = append(segs, segment{text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(m); i++ {
		c := m[i]
		if c != '%' {
			lit.WriteByte(c)
			continue
		}
		if i+1 >= len(m) {
			return pattern{text: m}, errors.New("incomplete format")
		}
		switch m[i+1] {
		case '%':
			lit.WriteByte('%')
			i++
		case '(':
			// Python counts nested parentheses inside the key.
			depth, j := 1, i+2
			for ; j < len(m) && depth > 0; j++ {
				switch m[j] {
				case '(':
					depth++
				case ')':
					depth--
				}
			}
			if depth > 0 {
				return pattern{text: m}, errors.New("incomplete format key")
			}
			key := m[i+2 : j-1]
			if j >= len(m) || m[j] != 's' {
				return pattern{text: m}, fmt.Errorf("unsupported format for key %q (only %%(key)s)", key)
			}
			flush()
			segs = append(segs, segment{text: key, key: true})
			i = j
		default:
			return pattern{text: m}, fmt.Errorf("unsupported format directive %q", m[i:min(i+2, len(m))])
		}
	}
	flush()
	if len(segs) == 0 {
		segs = []segment{{text: ""}}
	}
	plain := len(segs) == 1 && !segs[0].key
	return pattern{segs: segs, plain: plain, text: m}, nil
}

// String renders the rule as oslo.policy's str() does; parsing the result
// gives the same tree.
func (r *Rule) String() string {
	var b strings.Builder
	r.root.write(&b)
	return b.String()
}

func (n *node) write(b *strings.Builder) {
	switch n.kind {
	case kindFalse:
		b.WriteByte('!')
	case kindTrue:
		b.WriteByte('@')
	case kindNot:
		b.WriteString("not ")
		n.children[0].write(b)
	case kindAnd, kindOr:
		sep := " and "
		if n.kind == kindOr {
			sep = " or "
		}
		b.WriteByte('(')
		for i, c := range n.children {
			if i > 0 {
				b.WriteString(sep)
			}
			c.write(b)
		}
		b.WriteByte(')')
	default:
		text := n.field + ":" + n.match
		// A check whose text is quoted at both ends would read back as a
		// quoted string token; parentheses keep it a check.
		if q := text[0]; (q == '"' || q == '\'') && text[len(text)-1] == q {
			b.WriteString("(" + text + ")")
			return
		}
		b.WriteString(text)
	}
}

// equal is oslo.policy's check equality: same classes, same kind and match.
func (n *node) equal(o *node) bool {
	if n.kind != o.kind || len(n.children) != len(o.children) {
		return false
	}
	switch n.kind {
	case kindRule, kindRole, kindGeneric:
		return n.field == o.field && n.match == o.match
	}
	for i := range n.children {
		if !n.children[i].equal(o.children[i]) {
			return false
		}
	}
	return true
}

// Equal reports whether two rules are the same check tree.
func (r *Rule) Equal(o *Rule) bool { return r.root.equal(o.root) }
