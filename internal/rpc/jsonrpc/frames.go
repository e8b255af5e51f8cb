// Package jsonrpc is the JSON-RPC 2.0 transport between the API and the
// conductors, frame-compatible with upstream's ironic/common/json_rpc: a
// request is POSTed to / of the conductor as
//
//	{"jsonrpc": "2.0", "method": "<upstream name>", "id": "<request id>",
//	 "params": {"context": {...}, "rpc.version": "1.x", <kwargs>...}}
//
// and answered {"jsonrpc": "2.0", "result": ..., "id": ...} or, on error,
// {"jsonrpc": "2.0", "id": ..., "error": {"code": <HTTP status>,
// "message": "...", "data": {"class": "ironic.common.exception.<Class>"}}}
// with HTTP status 200. A request without id is a cast: it runs, and is
// answered 204 whatever happened.
//
// Objects (nodes, ports, allocations…) travel as upstream's serialised
// versioned objects (package ovo), at the versions of
// [DEFAULT]/pin_release_version, so that frames, method names, kwargs,
// objects and error data are upstream's: a Python Ironic API calls our
// conductors and ours call its conductors (test/mixedfleet).
package jsonrpc

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// JSON-RPC 2.0 error codes upstream's server uses for bad requests.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
)

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *wireError      `json:"error,omitempty"`
	ID      json.RawMessage `json:"id"`
}

type wireError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    *wireErrorData `json:"data,omitempty"`
}

type wireErrorData struct {
	Class string `json:"class"`
}

// protocolError is one of the JSON-RPC errors of a malformed request. As
// upstream, it carries no class: the client cannot rebuild it.
type protocolError struct {
	code int
	msg  string
}

func (e *protocolError) Error() string { return e.msg }

func parseError() *protocolError {
	return &protocolError{CodeParseError, "Invalid JSON received by RPC server"}
}

func invalidRequest() *protocolError {
	return &protocolError{CodeInvalidRequest, "Invalid request object received by RPC server"}
}

func methodNotFound(name string) *protocolError {
	return &protocolError{CodeMethodNotFound, fmt.Sprintf("Method %s was not found", name)}
}

func invalidParams(params []string, method, why string) *protocolError {
	return &protocolError{CodeInvalidParams, fmt.Sprintf("Params %s are invalid for %s: %s", strings.Join(params, ", "), method, why)}
}

// encodeError turns err into the error member of a response. Ironic
// errors name their class so the client can rebuild them; anything else
// is an unexpected error (500, no class), which the client reports as
// "Unexpected error raised by RPC", as upstream.
func encodeError(err error) *wireError {
	if p, ok := err.(*protocolError); ok {
		return &wireError{Code: p.code, Message: p.msg}
	}
	// A database outage met by the conductor reaches the caller as the
	// 503 TemporaryFailure it would have met reading the database itself.
	err = sqldb.Fault(err)
	if e, ok := errs.As(err); ok {
		w := &wireError{Code: e.Code, Message: e.Message}
		// Web framework errors (webob.exc.*) are not Ironic exceptions;
		// upstream sends them without a class.
		if !strings.Contains(string(e.Class), ".") {
			w.Data = &wireErrorData{Class: errs.ModulePrefix + string(e.Class)}
		}
		return w
	}
	return &wireError{Code: 500, Message: err.Error()}
}

// decodeError rebuilds the error a server sent. Only classes of Ironic's
// exception module are rebuilt, with the code the server sent, as
// upstream's client does; the rest become a generic 500.
func decodeError(w *wireError) *errs.Error {
	if w.Data == nil || !strings.HasPrefix(w.Data.Class, errs.ModulePrefix) {
		return errs.NewMessage(errs.ClassIronicException, "Unexpected error raised by RPC")
	}
	return errs.NewMessageKw(errs.WireClass(w.Data.Class), w.Message, map[string]any{"code": w.Code})
}
