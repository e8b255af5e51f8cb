package middleware

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"unicode/utf8"
)

// jsonDepth is the nesting depth of a valid document, measured by
// encoding/json's tokenizer (independent of CheckDepth's byte scan).
func jsonDepth(b []byte) (int, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	depth, max := 0, 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return max, true
		}
		if err != nil {
			return 0, false
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '[' || d == '{' {
				depth++
				if depth > max {
					max = depth
				}
			} else {
				depth--
			}
		}
	}
}

func FuzzBodyCheck(f *testing.F) {
	for _, c := range pythonErrors {
		f.Add([]byte(c.in), 3)
	}
	f.Add(nested(26), 25)
	f.Add([]byte(`{"a": "[[[\"]]"}`), 1)
	f.Fuzz(func(t *testing.T, b []byte, max int) {
		if max < 0 || max > 64 {
			max %= 64
			if max < 0 {
				max = -max
			}
		}
		ok := CheckDepth(b, max)
		valid := json.Valid(b)
		if valid {
			if d, good := jsonDepth(b); good && (d <= max) != ok {
				t.Fatalf("CheckDepth=%v but depth %d, max %d", ok, d, max)
			}
		}
		if utf8.Valid(b) && len(b) > 0 {
			msg := PythonJSONError(b)
			if valid && msg != "" {
				t.Fatalf("Python scanner refuses valid JSON %q: %s", b, msg)
			}
			if !valid && msg == "" && !bytes.Contains(b, []byte("NaN")) && !bytes.Contains(b, []byte("Infinity")) {
				t.Fatalf("Python scanner accepts invalid JSON %q", b)
			}
		}
		var v any
		err := Unmarshal(b, &v)
		if ok && valid && utf8.Valid(b) && len(b) > 0 && err != nil {
			t.Fatalf("Unmarshal refused valid JSON %q: %v", b, err)
		}
		if !valid && len(b) > 0 && err == nil {
			t.Fatalf("Unmarshal accepted invalid JSON %q", b)
		}
		h := BodyLimits(BodyLimitConfig{MaxDepth: max, MaxSize: 256, MaxProvisionSize: 512, MaxInspectionSize: 512,
			Log: slog.New(slog.NewTextHandler(io.Discard, nil))})(
			http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var v any
				if err := DecodeJSON(r, &v); err != nil {
					w.WriteHeader(400)
				}
			}))
		r := httptest.NewRequest("POST", "/v1/nodes", bytes.NewReader(b))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("status %d", w.Code)
		}
		if len(b) > 256 && w.Code != 413 {
			t.Fatalf("oversized body got %d", w.Code)
		}
	})
}
