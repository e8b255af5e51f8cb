package apiutil

import (
	"regexp"
	"strings"

	"github.com/openkeel/ironic/internal/secrets"
)

// Secret is what masked values read.
const Secret = "******"

// sanitizeKeys are oslo.utils' _SANITIZE_KEYS: a key containing one of
// them (case-insensitively) holds a secret. internal/secrets seals the
// values under the same keys, so what is masked is what is encrypted at
// rest.
var sanitizeKeys = secrets.SanitizeKeys()

type maskPattern struct {
	re  *regexp.Regexp
	two bool
	all bool
}

// maskPatterns are oslo.utils' mask_password expressions per key, built
// once at start.
var maskPatterns = buildMaskPatterns()

func buildMaskPatterns() map[string][]maskPattern {
	two := []string{
		`(%s[0-9]*\s*[=]\s*[\"'])[^\"']*([\"'])`,
		`(%s[0-9]*\s*[=]\s*[\"])[^\"]*([\"])`,
		`(%s[0-9]*\s*[=]\s*['])[^']*(['])`,
		`(%s[0-9]*\s+[\"'])[^\"']*([\"'])`,
		`([-]{2}%s[0-9]*\s+)[^'^\"^=^\s]+([\s]*)`,
		`(<%s[0-9]*>)[^<]*(</%s[0-9]*>)`,
		`([\"']%s[0-9]*[\"']\s*:\s*[\"'])[^\"']*([\"'])`,
		`(['"][^"']*%s[0-9]*['"]\s*:\s*u?['"])[^\"']*(['"])`,
		`(['"][^'"]*%s[0-9]*['"]\s*,\s*'--?[A-z]+'\s*,\s*u?['"])[^\"']*(['"])`,
		`(%s[0-9]*\s*--?[A-z]+\s*)\S+(\s*)`,
	}
	one := `(%s[0-9]*\s*[=]\s*)[^\s^'^\"]+`
	wild := `(['\"][^\"']*%s[0-9]*['\"]\s*:\s*u?['\"].*['\"])[^\"']*(['\"])`
	out := map[string][]maskPattern{}
	for _, k := range sanitizeKeys {
		q := regexp.QuoteMeta(k)
		var ps []maskPattern
		for _, p := range two {
			ps = append(ps, maskPattern{re: regexp.MustCompile(`(?is)` + strings.ReplaceAll(p, "%s", q)), two: true})
		}
		ps = append(ps, maskPattern{re: regexp.MustCompile(`(?is)` + strings.ReplaceAll(one, "%s", q))})
		ps = append(ps, maskPattern{re: regexp.MustCompile(`(?is)` + strings.ReplaceAll(wild, "%s", q)), all: true})
		out[k] = ps
	}
	return out
}

// MaskPassword is oslo.utils' mask_password: secrets written inside a
// string ("password=x", "--password x", JSON or XML forms) replaced. The
// text is lower-cased once, and again only after a key's patterns changed
// it.
func MaskPassword(msg string) string {
	lower := strings.ToLower(msg)
	for _, k := range sanitizeKeys {
		if !strings.Contains(lower, k) {
			continue
		}
		before := msg
		for _, p := range maskPatterns[k] {
			switch {
			case p.all:
				msg = p.re.ReplaceAllString(msg, "${1}")
			case p.two:
				msg = p.re.ReplaceAllString(msg, "${1}"+Secret+"${2}")
			default:
				msg = p.re.ReplaceAllString(msg, "${1}"+Secret)
			}
		}
		if msg != before {
			lower = strings.ToLower(msg)
		}
	}
	return msg
}

// IsSecretKey reports whether a dict key names a secret.
func IsSecretKey(k string) bool {
	lk := strings.ToLower(k)
	for _, s := range sanitizeKeys {
		if strings.Contains(lk, s) {
			return true
		}
	}
	return false
}

// sanitizeByFirst lists sanitizeKeys by their first byte, built once at
// start: holdsSanitizeKey tries at each position only the keys that can
// start there rather than searching the text once per key.
var sanitizeByFirst = func() (idx [256][]string) {
	for _, k := range sanitizeKeys {
		idx[k[0]] = append(idx[k[0]], k)
	}
	return idx
}()

// holdsSanitizeKey reports whether ASCII text s, lower-cased, contains one
// of sanitizeKeys.
func holdsSanitizeKey(s []byte) bool {
	for i := range s {
		for _, k := range sanitizeByFirst[asciiLower(s[i])] {
			if hasLowerPrefix(s[i:], k) {
				return true
			}
		}
	}
	return false
}

func asciiLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasLowerPrefix reports whether s, lower-cased, starts with k.
func hasLowerPrefix(s []byte, k string) bool {
	if len(s) < len(k) {
		return false
	}
	for j := 0; j < len(k); j++ {
		if asciiLower(s[j]) != k[j] {
			return false
		}
	}
	return true
}

// MaskDict is oslo.utils' mask_dict_password with Secret: a copy of m
// where nested dicts are masked recursively, values under secret keys are
// replaced and other strings pass through MaskPassword. nil stays nil.
func MaskDict(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			out[k] = MaskDict(sub)
			continue
		}
		switch {
		case IsSecretKey(k):
			out[k] = Secret
		default:
			if s, ok := v.(string); ok {
				out[k] = MaskPassword(s)
			} else {
				out[k] = v
			}
		}
	}
	return out
}

// MaskFields replaces the listed keys of m that hold a truthy value
// (_mask_fields).
func MaskFields(m map[string]any, keys ...string) {
	for _, k := range keys {
		if Truthy(m[k]) {
			m[k] = Secret
		}
	}
}

// Truthy is Python's bool() of a JSON value.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case map[string]any:
		return len(x) > 0
	case []any:
		return len(x) > 0
	case float64:
		return x != 0
	case int:
		return x != 0
	case int64:
		return x != 0
	}
	s := PyRepr(v)
	return s != "0" && s != "0.0"
}
