package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Outcome is one step's answer, normalised, or why there is none.
type Outcome struct {
	Step     *Step
	Response Response
	// Err is a failure to exchange at all (connection refused, a wait
	// that never held).
	Err error
}

// waitFor bounds a step's Wait; the fake interfaces finish in seconds.
const waitFor = 60 * time.Second

// Run replays the scenario against the server at host ("127.0.0.1:6385")
// and returns one outcome per step.
func Run(ctx context.Context, host string, sc *Scenario) []Outcome {
	r := &run{host: host, names: map[string]string{}, norm: newNormaliser(host)}
	for _, st := range sc.Steps {
		r.norm.keep(st.Raw + st.Path + fmt.Sprint(st.Body) + fmt.Sprint(st.Headers))
		if st.RawBody != nil {
			r.norm.keep(*st.RawBody)
		}
	}
	out := make([]Outcome, 0, len(sc.Steps))
	for i := range sc.Steps {
		st := &sc.Steps[i]
		resp, err := r.step(ctx, st)
		out = append(out, Outcome{Step: st, Response: resp, Err: err})
	}
	return out
}

// run is the state of one scenario's replay.
type run struct {
	host string
	// names are the values bound by earlier steps.
	names map[string]string
	norm  *normaliser
}

func (r *run) step(ctx context.Context, st *Step) (Response, error) {
	req, err := r.request(st)
	if err != nil {
		return Response{}, err
	}
	deadline := time.Now().Add(waitFor)
	for {
		raw, err := exchange(ctx, r.host, req)
		if err != nil {
			return Response{}, fmt.Errorf("step %s: %w", st.ID, err)
		}
		var doc any
		if len(raw.body) > 0 {
			doc, _ = decodeJSON(raw.body)
		}
		if !waitHolds(doc, st.Wait) {
			if time.Now().After(deadline) {
				resp := r.norm.response(raw, st.Opaque)
				return resp, fmt.Errorf("step %s: %v never held in %v", st.ID, st.Wait, waitFor)
			}
			select {
			case <-ctx.Done():
				return Response{}, ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		for _, name := range sortedKeys(st.Bind) {
			v, ok := lookup(doc, st.Bind[name])
			s, isString := v.(string)
			if !ok || !isString {
				return r.norm.response(raw, st.Opaque), fmt.Errorf("step %s: no string at %s to bind %s", st.ID, st.Bind[name], name)
			}
			r.names[name] = s
			r.norm.name(s, name)
		}
		return r.norm.response(raw, st.Opaque), nil
	}
}

func waitHolds(doc any, wait map[string]string) bool {
	for field, want := range wait {
		v, ok := lookup(doc, field)
		if !ok {
			return false
		}
		if s, isString := v.(string); isString {
			if s != want {
				return false
			}
			continue
		}
		if b, _ := json.Marshal(v); string(b) != want {
			return false
		}
	}
	return true
}

var templateRE = regexp.MustCompile(`\{\{([A-Za-z0-9_]+)\}\}`)

// expand replaces {{name}} with the value bound to name; {{host}} is the
// server's address.
func (r *run) expand(s string) (string, error) {
	var missing []string
	out := templateRE.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-2]
		if name == "host" {
			return r.host
		}
		v, ok := r.names[name]
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("unbound %s in %q", strings.Join(missing, ", "), s)
	}
	return out, nil
}

// request builds the bytes sent for the step.
func (r *run) request(st *Step) ([]byte, error) {
	if st.Raw != "" {
		raw, err := r.expand(st.Raw)
		if err != nil {
			return nil, fmt.Errorf("step %s: %w", st.ID, err)
		}
		head, body, _ := strings.Cut(raw, "\n\n")
		return []byte(strings.ReplaceAll(head, "\n", "\r\n") + "\r\n\r\n" + body), nil
	}
	path, err := r.expand(st.Path)
	if err != nil {
		return nil, fmt.Errorf("step %s: %w", st.ID, err)
	}
	var body []byte
	switch {
	case st.RawBody != nil:
		s, err := r.expand(*st.RawBody)
		if err != nil {
			return nil, fmt.Errorf("step %s: %w", st.ID, err)
		}
		body = []byte(s)
	case st.Body != nil:
		expanded, err := r.expandValue(st.Body)
		if err != nil {
			return nil, fmt.Errorf("step %s: %w", st.ID, err)
		}
		if body, err = json.Marshal(expanded); err != nil {
			return nil, fmt.Errorf("step %s: body: %w", st.ID, err)
		}
	}
	headers := http.Header{}
	headers.Set("Host", r.host)
	headers.Set("Accept", "application/json")
	if st.Version != "" {
		headers.Set("X-OpenStack-Ironic-API-Version", st.Version)
	}
	if body != nil {
		headers.Set("Content-Type", "application/json")
		headers.Set("Content-Length", strconv.Itoa(len(body)))
	}
	for k, v := range st.Headers {
		v, err := r.expand(v)
		if err != nil {
			return nil, fmt.Errorf("step %s: %w", st.ID, err)
		}
		if v == "" {
			headers.Del(k)
			continue
		}
		headers.Set(k, v)
	}
	// One connection per request, so that no answer depends on the state
	// an earlier one left in the connection.
	headers.Set("Connection", "close")
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", st.Method, path)
	for _, k := range sortedKeys(headers) {
		for _, v := range headers[k] {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes(), nil
}

// expandValue templates every string of a decoded YAML value.
func (r *run) expandValue(v any) (any, error) {
	switch v := v.(type) {
	case string:
		return r.expand(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			x, err := r.expandValue(e)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			x, err := r.expandValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	default:
		return v, nil
	}
}

// rawResponse is an answer as it came off the connection.
type rawResponse struct {
	status int
	header http.Header
	body   []byte
}

// exchange sends req on a new connection and reads the answer.
func exchange(ctx context.Context, host string, req []byte) (*rawResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	if _, err := conn.Write(req); err != nil {
		return nil, fmt.Errorf("send: %w", err)
	}
	// The whole answer is read first: a server may answer a request it
	// cannot parse with something that is not HTTP/1.x at all, which is
	// then recorded as it came, with status 0.
	answer, err := io.ReadAll(conn)
	if err != nil && len(answer) == 0 {
		return nil, fmt.Errorf("read answer: %w", err)
	}
	method, _, _ := strings.Cut(string(req), " ")
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(answer)), &http.Request{Method: method})
	if err != nil {
		return &rawResponse{header: http.Header{}, body: answer}, nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	return &rawResponse{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// lookup follows a dotted path ("nodes.0.uuid") into a decoded JSON value.
func lookup(doc any, path string) (any, bool) {
	cur := doc
	for _, part := range strings.Split(path, ".") {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[part]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
