// Package microversion implements Ironic's API microversions: reading the
// requested version from the request headers as upstream does, the
// supported range, and the version gates (allow_* checks, versioned node
// fields, provision verbs, /v1 links).
package microversion

import (
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"github.com/openkeel/ironic/internal/errs"
)

// BaseMajor is the only major version (the /v1 API).
const BaseMajor = 1

// Header names. Upstream reads the standard OpenStack-API-Version header
// ("baremetal 1.N") first and the legacy one second.
const (
	HeaderLegacy   = "X-OpenStack-Ironic-API-Version"
	HeaderStandard = "OpenStack-API-Version"
	HeaderMinimum  = "X-OpenStack-Ironic-API-Minimum-Version"
	HeaderMaximum  = "X-OpenStack-Ironic-API-Maximum-Version"
	serviceType    = "baremetal"
	latest         = "latest"
)

// The headers' keys as http.Header holds them, computed once: every
// request reads two and every answer sets three (issue 29).
var (
	KeyLegacy   = http.CanonicalHeaderKey(HeaderLegacy)
	KeyStandard = http.CanonicalHeaderKey(HeaderStandard)
	KeyMinimum  = http.CanonicalHeaderKey(HeaderMinimum)
	KeyMaximum  = http.CanonicalHeaderKey(HeaderMaximum)
)

// Version is a requested API version.
type Version struct {
	Major, Minor int
}

var (
	// MIN is the oldest version served and the one used without a header.
	MIN = Version{BaseMajor, Minor1InitialVersion}
	// MAX is the newest version served (without release pinning).
	MAX = Version{BaseMajor, MinorMaxVersion}
)

func (v Version) String() string {
	return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor)
}

// AtLeast reports whether v is minor or newer within the base major.
func (v Version) AtLeast(minor int) bool { return v.Minor >= minor }

// Less orders versions.
func (v Version) Less(o Version) bool {
	return v.Major < o.Major || (v.Major == o.Major && v.Minor < o.Minor)
}

// Range is the served range; Max is lowered when the service is pinned to
// an older release ([DEFAULT]pin_release_version).
type Range struct {
	Min, Max Version
}

// Default is the unpinned range [MIN, MAX].
var Default = Range{MIN, MAX}

// Headers are the minimum/maximum headers sent on every response,
// including the 406 for an unsupported version.
func (r Range) Headers() map[string]string {
	return map[string]string{HeaderMinimum: r.Min.String(), HeaderMaximum: r.Max.String()}
}

// Parse applies the default range to a legacy header value.
func Parse(header string) (Version, error) { return Default.Parse(header) }

// FromHeaders applies the default range to the request headers.
func FromHeaders(h http.Header) (Version, error) { return Default.FromHeaders(h) }

// FromHeaders selects the requested version as upstream does: the last
// "baremetal" entry of OpenStack-API-Version, else the last comma-separated
// value of X-OpenStack-Ironic-API-Version, else MIN; then Parse rules.
func (r Range) FromHeaders(h http.Header) (Version, error) {
	if vals := h[KeyStandard]; len(vals) > 0 {
		if s := standardValue(strings.Join(vals, ",")); s != "" {
			return r.Parse(s)
		}
	}
	vals := h[KeyLegacy]
	if len(vals) == 0 {
		return r.Parse("")
	}
	joined := strings.Join(vals, ",")
	return r.Parse(strings.TrimSpace(joined[strings.LastIndexByte(joined, ',')+1:]))
}

func standardValue(header string) string {
	parts := strings.Split(header, ",")
	for i := len(parts) - 1; i >= 0; i-- {
		f := strings.TrimSpace(parts[i])
		cut := strings.IndexFunc(f, unicode.IsSpace)
		if cut < 0 {
			continue
		}
		if strings.EqualFold(f[:cut], serviceType) {
			return strings.TrimSpace(f[cut:])
		}
	}
	return ""
}

// Parse reads one version value: "" means MIN, "latest" (any case) means
// r.Max, otherwise "MAJOR.MINOR" where each part is what Python's int()
// accepts (surrounding spaces, sign, "_" between digits). Unreadable
// values give 406 without range headers (upstream fails before setting
// them); a wrong major or a minor outside r give 406 with the range
// headers and upstream's messages.
func (r Range) Parse(s string) (Version, error) {
	if s == "" {
		s = r.Min.String()
	}
	if strings.ToLower(s) == latest {
		s = r.Max.String()
	}
	dot := strings.IndexByte(s, '.')
	if dot < 0 {
		return Version{}, invalidHeader()
	}
	majText, majOK := pyIntText(s[:dot])
	minText, minOK := pyIntText(s[dot+1:])
	if !majOK || !minOK {
		return Version{}, invalidHeader()
	}
	text := majText + "." + minText
	major, errMaj := strconv.Atoi(majText)
	minor, errMin := strconv.Atoi(minText)
	if errMaj != nil || major != BaseMajor {
		return Version{}, errs.HTTPStatus(http.StatusNotAcceptable,
			"Mutually exclusive versions requested. Version "+text+
				" requested but not supported by this service. The supported version range is: ["+
				r.Min.String()+", "+r.Max.String()+"].").WithHeaders(r.Headers())
	}
	v := Version{major, minor}
	if errMin != nil || v.Less(r.Min) || r.Max.Less(v) {
		return Version{}, errs.HTTPStatus(http.StatusNotAcceptable,
			"Version "+text+" was requested but the minor version is not supported by this service. The supported version range is: ["+
				r.Min.String()+", "+r.Max.String()+"].").WithHeaders(r.Headers())
	}
	return v, nil
}

func invalidHeader() error {
	return errs.HTTPStatus(http.StatusNotAcceptable, "Invalid value for "+HeaderLegacy+" header")
}

// pyIntText returns the decimal text of Python's int(s) (arbitrary size,
// so out-of-range numbers keep their digits for the error message).
func pyIntText(s string) (string, bool) {
	s = strings.TrimFunc(s, unicode.IsSpace)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var digits []byte
	prevDigit := false
	for _, r := range s {
		switch {
		case r == '_' && prevDigit:
			prevDigit = false
		case unicode.IsDigit(r):
			digits = append(digits, byte('0'+digitValue(r)))
			prevDigit = true
		default:
			return "", false
		}
	}
	if len(digits) == 0 || !prevDigit {
		return "", false
	}
	text := strings.TrimLeft(string(digits), "0")
	if text == "" {
		return "0", true
	}
	if neg {
		text = "-" + text
	}
	return text, true
}

// digitValue is the value of a Unicode decimal digit: decimal digits come
// in runs of ten starting at zero.
func digitValue(r rune) int {
	start := r
	for unicode.IsDigit(start - 1) {
		start--
	}
	return int(r-start) % 10
}
