package api

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// panickingNodeCreate is a handler that panics with p.
func panickingNodeCreate(p any) map[string]HandlerFunc {
	return map[string]HandlerFunc{
		"POST /v1/nodes": func(http.ResponseWriter, *http.Request, *RequestContext) error { panic(p) },
	}
}

// A handler panic is answered with upstream's 500 fault, logged with its
// stack and reported to Deps.Panicked, which test harnesses fail on.
func TestRecoveredPanicIsReported(t *testing.T) {
	var logs bytes.Buffer
	type report struct {
		path  string
		p     any
		stack string
	}
	var got []report
	h := New(Deps{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Authorize: AllowAll, Handlers: panickingNodeCreate("boom"),
		Panicked: func(r *http.Request, p any, stack []byte) { got = append(got, report{r.URL.Path, p, string(stack)}) }})
	rec := serve(h, "POST", "/v1/nodes", "", `{}`)
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), `\"faultcode\": \"Server\"`) {
		t.Fatalf("answer %d %s, want the 500 fault", rec.Code, rec.Body)
	}
	if len(got) != 1 || got[0].path != "/v1/nodes" || got[0].p != "boom" {
		t.Fatalf("reported %+v, want one panic \"boom\" on /v1/nodes", got)
	}
	if !strings.Contains(got[0].stack, "panickingNodeCreate") {
		t.Errorf("reported stack does not reach the handler:\n%s", got[0].stack)
	}
	if line := logs.String(); !strings.Contains(line, "panic while serving a request") || !strings.Contains(line, "panickingNodeCreate") {
		t.Errorf("log %q lacks the panic and its stack", line)
	}
}

// http.ErrAbortHandler is net/http's way to abort a response: it goes on
// to the server and is not reported as a panic.
func TestAbortHandlerIsNotReported(t *testing.T) {
	reported := false
	h := New(Deps{Logger: quiet, Authorize: AllowAll, Handlers: panickingNodeCreate(http.ErrAbortHandler),
		Panicked: func(*http.Request, any, []byte) { reported = true }})
	defer func() {
		if p := recover(); !errors.Is(asError(p), http.ErrAbortHandler) {
			t.Errorf("recovered %v, want http.ErrAbortHandler re-raised", p)
		}
		if reported {
			t.Error("ErrAbortHandler reported as a panic")
		}
	}()
	serve(h, "POST", "/v1/nodes", "", `{}`)
}

func asError(p any) error {
	err, _ := p.(error)
	return err
}
