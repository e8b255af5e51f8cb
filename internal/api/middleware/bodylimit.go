package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
)

// Upstream's JsonDepthMiddleware answers before the fault wrapper, so its
// bodies are a bare fault document, not the error_message envelope.
const (
	depthRejectBody = `{"faultcode": "Client", "faultstring": "Request body JSON is nested too deeply. Please contact the service administrator."}`
	sizeRejectBody  = `{"faultcode": "Client", "faultstring": "Request body is too large. Please contact the service administrator."}`
	depthMessage    = "Request body JSON is nested too deeply. Please contact the service administrator."
	sizeMessage     = "Request body is too large. Please contact the service administrator."
)

// BodyLimitConfig holds the [api] body limits in bytes and levels.
type BodyLimitConfig struct {
	MaxDepth          int
	MaxSize           int64
	MaxProvisionSize  int64
	MaxInspectionSize int64
	// Log receives the rejections (nil: slog.Default()).
	Log *slog.Logger
}

// BodyLimitConfigFrom reads [api]/max_json_body_depth and the
// max_json_body_size* options (KiB).
func BodyLimitConfigFrom(c *config.Config) BodyLimitConfig {
	return BodyLimitConfig{
		MaxDepth:          c.IntOf(config.APIMaxJSONBodyDepth),
		MaxSize:           int64(c.IntOf(config.APIMaxJSONBodySize)) * 1024,
		MaxProvisionSize:  int64(c.IntOf(config.APIMaxJSONBodySizeProvision)) * 1024,
		MaxInspectionSize: int64(c.IntOf(config.APIMaxJSONBodySizeInspection)) * 1024,
	}
}

// DefaultBodyLimits are upstream's defaults, used by DecodeJSON for
// requests that did not pass through BodyLimits.
var DefaultBodyLimits = BodyLimitConfig{MaxDepth: 25, MaxSize: 1024 * 1024,
	MaxProvisionSize: 65536 * 1024, MaxInspectionSize: 16384 * 1024}

// limitFor is upstream's _size_limit: the provision-state and
// continue_inspection endpoints (matched by path suffix, any method) get
// their larger limits.
func (c BodyLimitConfig) limitFor(path string) int64 {
	p := strings.Trim(path, "/")
	switch {
	case strings.HasSuffix(p, "states/provision"):
		return c.MaxProvisionSize
	case strings.HasSuffix(p, "continue_inspection"):
		return c.MaxInspectionSize
	}
	return c.MaxSize
}

// appliedLimits travel in the request context so DecodeJSON applies the
// same limits to bodies BodyLimits let through unread.
type appliedLimits struct {
	size  int64
	depth int
}

// BodyLimits is upstream's JsonDepthMiddleware. For a request whose
// Content-Type mentions "json" (any method) it refuses, before anything
// parses the body, a body larger than the path's limit (413, answered from
// Content-Length alone when that is enough, else after reading at most
// limit+1 bytes) or nested deeper than MaxDepth (400, by a byte scan that
// never decodes). Other requests pass unread; DecodeJSON applies the same
// limits to them when a handler reads their body.
func BodyLimits(cfg BodyLimitConfig) Middleware {
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			limit := cfg.limitFor(r.URL.Path)
			r = withValue(r, keyBodyLimit, appliedLimits{size: limit, depth: cfg.MaxDepth})
			if !strings.Contains(r.Header.Get("Content-Type"), "json") || r.Body == nil {
				next.ServeHTTP(w, r)
				return
			}
			if r.ContentLength > limit {
				logSize(log, r, r.ContentLength, limit)
				writeRaw(w, http.StatusRequestEntityTooLarge, sizeRejectBody)
				return
			}
			body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
			if err != nil {
				errs.WriteFault(w, r, errs.ClientSideError("Could not read the request body.", http.StatusBadRequest, ""), errs.FaultOptions{})
				return
			}
			if int64(len(body)) > limit {
				logSize(log, r, int64(len(body)), limit)
				writeRaw(w, http.StatusRequestEntityTooLarge, sizeRejectBody)
				return
			}
			if len(body) > 0 && !CheckDepth(body, cfg.MaxDepth) {
				log.LogAttrs(r.Context(), slog.LevelWarn, "rejected request: JSON nesting depth exceeds limit",
					slog.String("source_ip", RealIP(r)), slog.String("path", r.URL.Path), slog.Int("limit", cfg.MaxDepth))
				writeRaw(w, http.StatusBadRequest, depthRejectBody)
				return
			}
			r.Body = checkedBody{Reader: bytes.NewReader(body), data: body}
			r.ContentLength = int64(len(body))
			next.ServeHTTP(w, r)
		})
	}
}

// checkedBody marks a body BodyLimits has read and checked.
type checkedBody struct {
	*bytes.Reader
	data []byte
}

func (checkedBody) Close() error { return nil }

func logSize(log *slog.Logger, r *http.Request, size, limit int64) {
	attrs := []slog.Attr{slog.String("source_ip", RealIP(r)), slog.String("path", r.URL.Path),
		slog.Int64("size", size), slog.Int64("limit", limit)}
	if strings.HasSuffix(strings.Trim(r.URL.Path, "/"), "continue_inspection") {
		// Inspection data with system logs is large, not hostile; the
		// operator needs to know which option to raise.
		log.LogAttrs(r.Context(), slog.LevelError,
			"rejected inspection data: body exceeds [api]max_json_body_size_inspection; the ramdisk may be submitting large system logs", attrs...)
		return
	}
	log.LogAttrs(r.Context(), slog.LevelWarn, "rejected request: body size exceeds limit", attrs...)
}

func writeRaw(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// CheckDepth is upstream's check_depth: whether no point of raw is nested
// deeper than max levels of objects and arrays. It scans bytes without
// decoding (brackets inside strings, escapes included, do not count), so
// it also runs on invalid JSON and never recurses.
func CheckDepth(raw []byte, max int) bool {
	depth := 0
	inString, escape := false, false
	for _, c := range raw {
		if escape {
			escape = false
			continue
		}
		if inString {
			switch c {
			case '\\':
				escape = true
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > max {
				return false
			}
		case '}', ']':
			depth--
		}
	}
	return true
}

// ReadBody returns the request body within the limits BodyLimits put into
// the context (DefaultBodyLimits outside the pipeline): the checked bytes
// when BodyLimits read them, otherwise at most limit+1 bytes read now and
// checked the same way, failing with 413 or 400 (upstream's messages, in
// the usual fault envelope).
func ReadBody(r *http.Request) ([]byte, error) {
	if cb, ok := r.Body.(checkedBody); ok {
		return cb.data, nil
	}
	lim, ok := r.Context().Value(keyBodyLimit).(appliedLimits)
	if !ok {
		lim = appliedLimits{size: DefaultBodyLimits.limitFor(r.URL.Path), depth: DefaultBodyLimits.MaxDepth}
	}
	if r.Body == nil {
		return nil, nil
	}
	if r.ContentLength > lim.size {
		return nil, errs.HTTPStatus(http.StatusRequestEntityTooLarge, sizeMessage)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, lim.size+1))
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	if int64(len(body)) > lim.size {
		return nil, errs.HTTPStatus(http.StatusRequestEntityTooLarge, sizeMessage)
	}
	if !CheckDepth(body, lim.depth) {
		return nil, errs.ClientSideError(depthMessage, http.StatusBadRequest, "")
	}
	return body, nil
}

// DecodeJSON reads the body (ReadBody) and decodes it into v as upstream's
// method.body does: an empty body is {}; otherwise the whole body must be
// one JSON document. Invalid JSON is a 400 whose message is the one
// Python's json module gives (upstream answers these with a 500 carrying
// the same text; a client error is what they are). Invalid UTF-8 and the
// NaN/Infinity literals Python would accept are refused with 400 as well.
func DecodeJSON(r *http.Request, v any) error {
	body, err := ReadBody(r)
	if err != nil {
		return err
	}
	return Unmarshal(body, v)
}

// Unmarshal is DecodeJSON's decoding step for an already checked body.
func Unmarshal(body []byte, v any) error {
	if len(body) == 0 {
		body = []byte("{}")
	}
	if !utf8.Valid(body) {
		return errs.ClientSideError("Request body is not valid UTF-8.", http.StatusBadRequest, "")
	}
	if msg := PythonJSONError(body); msg != "" {
		return errs.ClientSideError(msg, http.StatusBadRequest, "")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return errs.ClientSideError(fmt.Sprintf("Invalid type for %s: expected %s", te.Field, te.Type), http.StatusBadRequest, "")
		}
		return errs.ClientSideError("Invalid JSON: NaN and Infinity are not supported.", http.StatusBadRequest, "")
	}
	return nil
}

// BodyFromContext reports the size and depth limits in force for the
// request (for handlers that stream a body themselves).
func BodyFromContext(ctx context.Context) (size int64, depth int, ok bool) {
	lim, ok := ctx.Value(keyBodyLimit).(appliedLimits)
	return lim.size, lim.depth, ok
}
