package middleware

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
)

func defaultLimits(t *testing.T) BodyLimitConfig {
	t.Helper()
	c, err := config.Load(config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := BodyLimitConfigFrom(c)
	cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	return cfg
}

// bodyOfSize is a valid JSON object of exactly n bytes.
func bodyOfSize(n int) []byte {
	const head, tail = `{"x": "`, `"}`
	return []byte(head + strings.Repeat("a", n-len(head)-len(tail)) + tail)
}

func nested(depth int) []byte {
	return []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
}

func TestBodyLimits(t *testing.T) {
	cfg := defaultLimits(t)
	if cfg.MaxSize != 1024*1024 || cfg.MaxDepth != 25 || cfg.MaxProvisionSize != 65536*1024 || cfg.MaxInspectionSize != 16384*1024 {
		t.Fatalf("defaults %+v", cfg)
	}
	cases := []struct {
		name, method, path, ctype string
		body                      []byte
		chunked                   bool
		status                    int
		reject                    string
	}{
		{"at limit passes", "POST", "/v1/nodes", "application/json", bodyOfSize(1024 * 1024), false, 200, ""},
		{"one byte over is 413", "POST", "/v1/nodes", "application/json", bodyOfSize(1024*1024 + 1), false, 413, sizeRejectBody},
		{"one byte over chunked is 413", "POST", "/v1/nodes", "application/json", bodyOfSize(1024*1024 + 1), true, 413, sizeRejectBody},
		{"at limit chunked passes", "PATCH", "/v1/nodes/n1", "application/json-patch+json", bodyOfSize(1024 * 1024), true, 200, ""},
		{"depth 25 passes", "POST", "/v1/nodes", "application/json", nested(25), false, 200, ""},
		{"depth 26 is 400", "POST", "/v1/nodes", "application/json", nested(26), false, 400, depthRejectBody},
		{"brackets in strings do not count", "POST", "/v1/nodes", "application/json", []byte(`{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"[[[["}`), false, 200, ""},
		{"depth checked on GET too", "GET", "/v1/nodes", "application/json", nested(30), false, 400, depthRejectBody},
		{"provision over default passes", "PUT", "/v1/nodes/n1/states/provision", "application/json", bodyOfSize(2 * 1024 * 1024), false, 200, ""},
		{"provision at limit passes", "PUT", "/v1/nodes/n1/states/provision/", "application/json", bodyOfSize(65536 * 1024), false, 200, ""},
		{"provision over limit", "PUT", "/v1/nodes/n1/states/provision", "application/json", bodyOfSize(65536*1024 + 1), false, 413, sizeRejectBody},
		{"inspection at limit passes", "POST", "/v1/continue_inspection", "application/json", bodyOfSize(16384 * 1024), false, 200, ""},
		{"inspection over limit", "POST", "/v1/continue_inspection", "application/json", bodyOfSize(16384*1024 + 1), true, 413, sizeRejectBody},
		{"power states use the default limit", "PUT", "/v1/nodes/n1/states/power", "application/json", bodyOfSize(1024*1024 + 1), false, 413, sizeRejectBody},
		{"non-json content type not checked here", "POST", "/v1/nodes", "text/plain", nested(40), false, 200, ""},
		{"empty body passes", "POST", "/v1/nodes", "application/json", nil, false, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			called := false
			var got []byte
			h := BodyLimits(cfg)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				called = true
				got, _ = io.ReadAll(r.Body)
			}))
			var rd io.Reader = bytes.NewReader(c.body)
			if c.chunked {
				rd = io.MultiReader(rd) // hides the length: ContentLength -1
			}
			r := httptest.NewRequest(c.method, c.path, rd)
			if c.chunked {
				r.ContentLength = -1
			}
			r.Header.Set("Content-Type", c.ctype)
			w := serve(h, r)
			if w.Code != c.status {
				t.Fatalf("status %d, want %d: %s", w.Code, c.status, w.Body.String())
			}
			if c.reject != "" {
				if called {
					t.Fatal("handler called for a rejected body")
				}
				if w.Body.String() != c.reject || w.Header().Get("Content-Type") != "application/json" {
					t.Fatalf("body %q type %q", w.Body.String(), w.Header().Get("Content-Type"))
				}
				return
			}
			if !called || !bytes.Equal(got, c.body) {
				t.Fatalf("handler called %v, body intact %v", called, bytes.Equal(got, c.body))
			}
		})
	}
}

func TestBodyLimitsRejectsBeforeReading(t *testing.T) {
	cfg := defaultLimits(t)
	read := 0
	body := readCounter{n: &read}
	h := BodyLimits(cfg)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Fatal("handler called") }))
	r := httptest.NewRequest("POST", "/v1/nodes", body)
	r.ContentLength = 1024*1024 + 1
	r.Header.Set("Content-Type", "application/json")
	if w := serve(h, r); w.Code != 413 {
		t.Fatalf("status %d", w.Code)
	}
	if read != 0 {
		t.Fatalf("read %d bytes of a body refused by its Content-Length", read)
	}
}

func TestBodyLimitsReadsAtMostLimitPlusOne(t *testing.T) {
	cfg := BodyLimitConfig{MaxDepth: 25, MaxSize: 4096, MaxProvisionSize: 8192, MaxInspectionSize: 8192, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	read := 0
	h := BodyLimits(cfg)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Fatal("handler called") }))
	r := httptest.NewRequest("POST", "/v1/nodes", readCounter{n: &read, limit: 1 << 30})
	r.ContentLength = -1
	r.Header.Set("Content-Type", "application/json")
	if w := serve(h, r); w.Code != 413 {
		t.Fatalf("status %d", w.Code)
	}
	if read != 4097 {
		t.Fatalf("read %d bytes, want limit+1", read)
	}
}

// readCounter is an endless body of spaces that counts what was read.
type readCounter struct {
	n     *int
	limit int
}

func (c readCounter) Read(p []byte) (int, error) {
	if c.limit > 0 && *c.n >= c.limit {
		return 0, io.EOF
	}
	for i := range p {
		p[i] = ' '
	}
	*c.n += len(p)
	return len(p), nil
}

func TestCheckDepth(t *testing.T) {
	cases := []struct {
		in   string
		max  int
		want bool
	}{
		{`{}`, 1, true}, {`{"a": {}}`, 1, false}, {`[[]]`, 2, true}, {`[[[]]]`, 2, false},
		{`"[[[["`, 1, true}, {`"\"[[[["`, 1, true}, {`"\\"[[`, 1, false},
		{`]]]][[`, 1, true}, {`[] [] []`, 1, true}, {``, 0, true}, {`[`, 0, false},
	}
	for _, c := range cases {
		if got := CheckDepth([]byte(c.in), c.max); got != c.want {
			t.Errorf("CheckDepth(%q, %d) = %v, want %v", c.in, c.max, got, c.want)
		}
	}
}

// pythonErrors are json.loads messages from CPython 3.12 for each input.
var pythonErrors = []struct{ in, msg string }{
	{`{bad`, "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"},
	{`{"description": "a"} x`, "Extra data: line 1 column 22 (char 21)"},
	{`[1,]`, "Expecting value: line 1 column 4 (char 3)"},
	{`{"a":1,}`, "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)"},
	{`[`, "Expecting value: line 1 column 2 (char 1)"},
	{`{`, "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"},
	{`{"a"`, "Expecting ':' delimiter: line 1 column 5 (char 4)"},
	{`{"a":`, "Expecting value: line 1 column 6 (char 5)"},
	{`"abc`, "Unterminated string starting at: line 1 column 1 (char 0)"},
	{`"a\qb"`, `Invalid \escape: line 1 column 3 (char 2)`},
	{`"\u12"`, `Invalid \uXXXX escape: line 1 column 3 (char 2)`},
	{`"\uzzzz"`, `Invalid \uXXXX escape: line 1 column 3 (char 2)`},
	{`01`, "Extra data: line 1 column 2 (char 1)"},
	{`-`, "Expecting value: line 1 column 1 (char 0)"},
	{`1.`, "Extra data: line 1 column 2 (char 1)"},
	{"\"\x01\"", "Invalid control character at: line 1 column 2 (char 1)"},
	{`{"a" 1}`, "Expecting ':' delimiter: line 1 column 6 (char 5)"},
	{`[1 2]`, "Expecting ',' delimiter: line 1 column 4 (char 3)"},
	{"\ufeff{}", "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)"},
	{"  \n  {\"a\":\n x}", "Expecting value: line 3 column 2 (char 12)"},
	{`nul`, "Expecting value: line 1 column 1 (char 0)"},
	{`"\ud800\uzzzz"`, `Invalid \uXXXX escape: line 1 column 9 (char 8)`},
	{`["é", x]`, "Expecting value: line 1 column 7 (char 6)"},
	{`{"a": [1, {"b": null}], "c": -1.5e+3, "d": "\ud83d\ude00\n"}`, ""},
	{`NaN`, ""},
}

func TestPythonJSONError(t *testing.T) {
	for _, c := range pythonErrors {
		if got := PythonJSONError([]byte(c.in)); got != c.msg {
			t.Errorf("PythonJSONError(%q) = %q, want %q", c.in, got, c.msg)
		}
	}
}

func TestDecodeJSON(t *testing.T) {
	decode := func(body string, ctype string) (map[string]any, error) {
		var v map[string]any
		var err error
		h := BodyLimits(BodyLimitConfig{MaxDepth: 3, MaxSize: 64, MaxProvisionSize: 64, MaxInspectionSize: 64})(
			http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { err = DecodeJSON(r, &v) }))
		r := httptest.NewRequest("POST", "/v1/nodes", strings.NewReader(body))
		r.Header.Set("Content-Type", ctype)
		serve(h, r)
		return v, err
	}
	v, err := decode(`{"a": 1}`, "application/json")
	if err != nil || v["a"] != json.Number("1") {
		t.Fatalf("%v %v", v, err)
	}
	v, err = decode(``, "application/json")
	if err != nil || v == nil || len(v) != 0 {
		t.Fatalf("empty body: %v %v", v, err)
	}
	for _, c := range []struct{ body, ctype, msg string }{
		{`{bad`, "application/json", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"},
		{`[[[[1]]]]`, "text/plain", depthMessage},
		{strings.Repeat(" ", 65), "text/plain", sizeMessage},
		{"\"\xff\"", "application/json", "Request body is not valid UTF-8."},
		{`NaN`, "application/json", "Invalid JSON: NaN and Infinity are not supported."},
	} {
		_, err := decode(c.body, c.ctype)
		e, ok := errs.As(err)
		if !ok || e.Message != c.msg || (e.Code != 400 && e.Code != 413) {
			t.Errorf("%q: %v", c.body, err)
		}
	}
}
