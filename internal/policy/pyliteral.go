package policy

import (
	"errors"
	"math/big"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/pyfmt"
)

// pyLiteral mirrors the step of oslo.policy's generic check that evaluates
// the field with ast.literal_eval: when the field is a Python literal the
// check compares the match with str(literal) instead of a credential. The
// literals modelled are True, False, None, plain quoted strings and decimal
// numbers; anything else is a credential path, as a name would be upstream.
func pyLiteral(s string) (string, bool) {
	switch s {
	case "True", "False", "None":
		return s, true
	case "":
		return "", false
	}
	if q := s[0]; (q == '\'' || q == '"') && len(s) >= 2 && s[len(s)-1] == q {
		inner := s[1 : len(s)-1]
		if !strings.ContainsAny(inner, "\\\n\r"+string(q)) {
			return inner, true
		}
		return "", false
	}
	return pyNumber(s)
}

// pyNumber renders a decimal int or float literal (optional sign, '_'
// separators) as Python's str() would.
func pyNumber(s string) (string, bool) {
	neg, body := false, s
	if body[0] == '+' || body[0] == '-' {
		neg, body = body[0] == '-', body[1:]
	}
	if body == "" || !validUnderscores(body) {
		return "", false
	}
	digits := strings.ReplaceAll(body, "_", "")
	if isDigits(digits) {
		if len(digits) > 1 && digits[0] == '0' && strings.Trim(digits, "0") != "" {
			return "", false // Python rejects leading zeros
		}
		n, ok := new(big.Int).SetString(digits, 10)
		if !ok {
			return "", false
		}
		if neg {
			n.Neg(n)
		}
		return n.String(), true
	}
	if !isFloatLiteral(digits) {
		return "", false
	}
	f, err := strconv.ParseFloat(digits, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return "", false
	}
	if neg {
		f = -f
	}
	return pyfmt.Float(f), true
}

func validUnderscores(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '_' {
			continue
		}
		if i == 0 || i == len(s)-1 || !isDigit(s[i-1]) || !isDigit(s[i+1]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// isFloatLiteral accepts digits [. digits] [e [sign] digits] with at least
// one digit in the mantissa.
func isFloatLiteral(s string) bool {
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	if hasExp {
		exp = strings.TrimPrefix(strings.TrimPrefix(exp, "+"), "-")
		if !isDigits(exp) {
			return false
		}
	}
	ip, fp, hasDot := strings.Cut(mant, ".")
	if !hasDot && !hasExp {
		return false
	}
	if ip == "" && fp == "" {
		return false
	}
	return (ip == "" || isDigits(ip)) && (fp == "" || isDigits(fp))
}
