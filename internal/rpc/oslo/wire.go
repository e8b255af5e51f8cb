package oslo

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/rpc/jsonrpc"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// Keys of oslo.messaging's envelope and messages (oslo_messaging/
// _drivers/common.py and amqp.py).
const (
	envelopeVersionKey = "oslo.version"
	envelopeMessageKey = "oslo.message"
	envelopeVersion    = "2.0"
	contextPrefix      = "_context_"
	contentType        = "application/json"
	contentEncoding    = "utf-8"
	// exceptionModule is where upstream's client rebuilds remote errors
	// from (allowed_remote_exmods).
	exceptionModule = "ironic.common.exception"
)

// seal wraps msg in the 2.0 envelope: the message travels as JSON text
// inside the JSON body.
func seal(msg map[string]any) ([]byte, error) {
	inner, err := json.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("encode oslo.messaging message: %w", err)
	}
	return json.Marshal(map[string]string{envelopeVersionKey: envelopeVersion, envelopeMessageKey: string(inner)})
}

// unseal reads a body: the 2.0 envelope or, as upstream's
// deserialize_msg accepts, a bare message.
func unseal(body []byte) (map[string]json.RawMessage, error) {
	var outer map[string]json.RawMessage
	if err := json.Unmarshal(body, &outer); err != nil {
		return nil, fmt.Errorf("oslo.messaging body is not a JSON object: %w", err)
	}
	raw, ok := outer[envelopeMessageKey]
	if !ok {
		return outer, nil
	}
	var version string
	if err := json.Unmarshal(outer[envelopeVersionKey], &version); err != nil || !compatible(envelopeVersion, version) {
		return nil, fmt.Errorf("oslo.messaging envelope version %s is not supported", outer[envelopeVersionKey])
	}
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return nil, fmt.Errorf("oslo.message is not a string: %w", err)
	}
	var msg map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &msg); err != nil {
		return nil, fmt.Errorf("oslo.message is not a JSON object: %w", err)
	}
	return msg, nil
}

// compatible is oslo's version_is_compatible: same major version, and a
// minor the server has.
func compatible(have, want string) bool {
	hMaj, hMin, ok1 := splitVersion(have)
	wMaj, wMin, ok2 := splitVersion(want)
	return ok1 && ok2 && hMaj == wMaj && wMin <= hMin
}

func splitVersion(v string) (int, int, bool) {
	ma, mi, _ := strings.Cut(v, ".")
	maj, err1 := strconv.Atoi(ma)
	minor := 0
	var err2 error
	if mi != "" {
		mi, _, _ = strings.Cut(mi, ".")
		minor, err2 = strconv.Atoi(mi)
	}
	return maj, minor, err1 == nil && err2 == nil
}

// uniqueID is a fresh id as upstream's uuid4().hex.
func uniqueID() string { return strings.ReplaceAll(uuid.NewString(), "-", "") }

// request builds the message of a call or cast from a JSON-RPC-shaped
// params map: its "context" object spreads into _context_ keys and
// "rpc.version" becomes the message's version.
func request(method string, params map[string]json.RawMessage) (map[string]any, error) {
	msg := map[string]any{"method": method, "_unique_id": uniqueID()}
	args := map[string]json.RawMessage{}
	for k, v := range params {
		switch k {
		case "context":
			var ctx map[string]json.RawMessage
			if err := json.Unmarshal(v, &ctx); err != nil {
				return nil, fmt.Errorf("encode context: %w", err)
			}
			for ck, cv := range ctx {
				msg[contextPrefix+ck] = cv
			}
		case "rpc.version":
			msg["version"] = v
		default:
			args[k] = v
		}
	}
	msg["args"] = args
	return msg, nil
}

// incoming is a call or cast as a conductor reads it.
type incoming struct {
	Method    string
	Namespace string
	Version   string
	MsgID     string
	ReplyQ    string
	// Params are the kwargs and "context", as jsonrpc's Dispatch takes
	// them.
	Params map[string]json.RawMessage
}

func parseIncoming(msg map[string]json.RawMessage) (*incoming, error) {
	in := &incoming{Params: map[string]json.RawMessage{}}
	str := func(k string, dst *string) error {
		if raw, ok := msg[k]; ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, dst); err != nil {
				return fmt.Errorf("message key %s: %w", k, err)
			}
		}
		return nil
	}
	for k, dst := range map[string]*string{"method": &in.Method, "namespace": &in.Namespace, "version": &in.Version, "_msg_id": &in.MsgID, "_reply_q": &in.ReplyQ} {
		if err := str(k, dst); err != nil {
			return nil, err
		}
	}
	if in.Method == "" {
		return nil, errors.New("message has no method")
	}
	if raw, ok := msg["args"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &in.Params); err != nil {
			return nil, fmt.Errorf("message args: %w", err)
		}
	}
	ctx := map[string]json.RawMessage{}
	for k, v := range msg {
		if ck, ok := strings.CutPrefix(k, contextPrefix); ok {
			ctx[ck] = v
		}
	}
	raw, err := json.Marshal(ctx)
	if err != nil {
		return nil, fmt.Errorf("message context: %w", err)
	}
	in.Params["context"] = raw
	return in, nil
}

// failure is oslo's serialised remote exception
// (serialize_remote_exception), sent as JSON text in a reply's "failure".
type failure struct {
	Class   string         `json:"class"`
	Module  string         `json:"module"`
	Message string         `json:"message"`
	TB      []string       `json:"tb"`
	Args    []any          `json:"args"`
	Kwargs  map[string]any `json:"kwargs"`
}

// encodeFailure turns a conductor's error into a failure: Ironic errors
// keep their class, message and code (upstream's IronicException carries
// code in its kwargs, and its message as its only argument); a method the
// conductor lacks is oslo's NoSuchMethod and kwargs that do not fit the
// method are Python's TypeError, as upstream's dispatcher raises them.
func encodeFailure(method string, err error) string {
	err = sqldb.Fault(err)
	f := failure{Message: err.Error(), TB: []string{}, Kwargs: map[string]any{}}
	if e, ok := errs.As(err); ok && !strings.Contains(string(e.Class), ".") {
		f.Class, f.Module, f.Message = string(e.Class), exceptionModule, e.Message
		f.Kwargs["code"] = e.Code
	} else {
		switch {
		case jsonrpc.IsMethodNotFound(err):
			f.Class, f.Module = "NoSuchMethod", "oslo_messaging.rpc.dispatcher"
			f.Message = "Endpoint does not support RPC method " + method
		case jsonrpc.IsInvalidParams(err):
			f.Class, f.Module = "TypeError", "builtins"
		default:
			f.Class, f.Module = "Exception", "builtins"
		}
	}
	f.Args = []any{f.Message}
	out, _ := json.Marshal(f)
	return string(out)
}

// unsupportedVersion is the failure of a call whose version or namespace
// the conductor does not serve (oslo's UnsupportedVersion).
func unsupportedVersion(version, method string) string {
	f := failure{Class: "UnsupportedVersion", Module: "oslo_messaging.rpc.dispatcher",
		Message: fmt.Sprintf("Endpoint does not support RPC version %s. Attempted method: %s", version, method),
		TB:      []string{}, Kwargs: map[string]any{}}
	f.Args = []any{f.Message}
	out, _ := json.Marshal(f)
	return string(out)
}

// decodeFailure rebuilds a conductor's error: classes of Ironic's
// exception module with the code they carried, as upstream's client
// rebuilds only allowed_remote_exmods; anything else is a RemoteError,
// which the API answers 500 as upstream.
func decodeFailure(text string) error {
	var f failure
	if err := json.Unmarshal([]byte(text), &f); err != nil {
		return errs.NewMessage(errs.ClassIronicException, "Unexpected error raised by RPC")
	}
	if f.Module != exceptionModule || f.Class == "" {
		return errs.NewMessage(errs.ClassIronicException, fmt.Sprintf("Remote error: %s %s", f.Class, f.Message))
	}
	// Upstream's exceptions carry their code as a number, or as its text
	// once an exception was rebuilt (its kwargs pass through repr).
	kw := map[string]any{}
	switch c := f.Kwargs["code"].(type) {
	case float64:
		kw["code"] = int(c)
	case string:
		if n, err := strconv.Atoi(c); err == nil {
			kw["code"] = n
		}
	}
	return errs.NewMessageKw(errs.WireClass(errs.ModulePrefix+f.Class), f.Message, kw)
}
