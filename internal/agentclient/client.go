package agentclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// Command statuses as the agent reports them (IPA's AgentCommandStatus).
const (
	StatusRunning   = "RUNNING"
	StatusSucceeded = "SUCCEEDED"
	StatusFailed    = "FAILED"
	// StatusVersionMismatch keeps IPA's historical text: the hardware
	// managers changed version since the steps were fetched.
	StatusVersionMismatch = "CLEAN_VERSION_MISMATCH"
)

// maxResponse bounds what is read from an agent: collect_system_logs
// answers with a base64 tarball of the ramdisk's logs.
const maxResponse = 256 << 20

// CommandResult is one command as the agent serializes it.
type CommandResult struct {
	// ID is the agent's identifier of the command (GET /v1/commands/<id>).
	ID string `json:"id"`
	// Name is the command without its extension ("execute_clean_step").
	Name string `json:"command_name"`
	// Status is RUNNING, SUCCEEDED, FAILED or CLEAN_VERSION_MISMATCH.
	Status string `json:"command_status"`
	// Error is nil, a string, or the agent's error object
	// ({"type", "code", "message", "details"}).
	Error any `json:"command_error"`
	// Result is command specific: {"clean_result", "clean_step"} for
	// clean.execute_clean_step, {"clean_steps", "hardware_manager_version"}
	// for clean.get_clean_steps, nil for standby.sync…
	Result any `json:"command_result"`
}

// ResultMap returns Result as an object, nil when it is not one.
func (r *CommandResult) ResultMap() map[string]any {
	m, _ := r.Result.(map[string]any)
	return m
}

// CommandError is upstream's get_command_error: the human text of a
// failed command.
func CommandError(r *CommandResult) string {
	switch e := r.Error.(type) {
	case nil:
		return "Invalid agent response"
	case map[string]any:
		for _, k := range []string{"details", "message"} {
			if s := pyfmt.Str(e[k]); e[k] != nil && s != "" {
				return s
			}
		}
		return pyfmt.Str(e)
	default:
		return pyfmt.Str(e)
	}
}

// WaitMode says how long a command call waits.
type WaitMode int

const (
	// Async returns the agent's first answer (RUNNING for asynchronous
	// commands): wait=false.
	Async WaitMode = iota
	// Wait lets the agent hold the request until the command ends:
	// wait=true.
	Wait
	// Poll sends wait=false, then asks GET /v1/commands/ every
	// [agent]/command_wait_interval, at most command_wait_attempts times,
	// until the command is no longer RUNNING (upstream's poll=True).
	Poll
)

// Client talks to the agents of many nodes; it is safe for concurrent
// use. HTTP clients are shared per CA setting.
type Client struct {
	opts       Options
	transports *transportCache
}

// New returns a client with the given options.
func New(opts Options) *Client {
	return &Client{opts: opts, transports: newTransportCache(opts.TLSMinimumVersion)}
}

// Close drops idle connections to agents.
func (c *Client) Close() { c.transports.closeIdle() }

func (c *Client) commandURL(tgt Target) (string, error) {
	if tgt.URL == "" {
		return "", errs.NewMessage(errs.ClassAgentConnectionFailed, "Agent driver requires agent_url in driver_internal_info")
	}
	return tgt.URL + "/" + c.opts.APIVersion + "/commands/", nil
}

func (c *Client) httpClient(tgt Target) (*http.Client, error) {
	v, err := verifyFor(tgt.VerifyCA, c.opts.VerifyCA)
	if err != nil {
		return nil, err
	}
	return c.transports.get(v, c.opts.CommandTimeout)
}

// shortName is the command name the agent records: without the
// extension.
func shortName(method string) string {
	if _, after, ok := strings.Cut(method, "."); ok {
		return after
	}
	return method
}

// transportText describes a failed request without its query string,
// which carries the agent token.
func transportText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		u := ue.URL
		if p, perr := url.Parse(u); perr == nil {
			p.RawQuery = ""
			u = p.String()
		} else if i := strings.IndexByte(u, '?'); i >= 0 {
			u = u[:i]
		}
		return fmt.Sprintf("%s %q: %v", ue.Op, u, ue.Err)
	}
	return err.Error()
}

// Command sends "<extension>.<command>" with params to the node's agent,
// retrying connection failures [agent]/max_command_attempts times. A 409
// or an "agent is busy" fault is AgentInProgress, which callers retry at
// the next heartbeat; other HTTP errors are AgentAPIError.
func (c *Client) Command(ctx context.Context, tgt Target, method string, params map[string]any, mode WaitMode) (res *CommandResult, err error) {
	if c.opts.Observe != nil {
		start := time.Now()
		defer func() { c.opts.Observe(method, time.Since(start), err) }()
	}
	for range attempts(c.opts.MaxCommandAttempts) {
		res, err = c.command(ctx, tgt, method, params, mode)
		if err == nil {
			return res, nil
		}
		if ctx.Err() != nil || !errs.Is(err, errs.ClassAgentConnectionFailed) {
			return nil, err
		}
	}
	return nil, err
}

func (c *Client) command(ctx context.Context, tgt Target, method string, params map[string]any, mode WaitMode) (*CommandResult, error) {
	log := c.opts.log()
	target, err := c.commandURL(tgt)
	if err != nil {
		return nil, err
	}
	if params == nil {
		params = map[string]any{}
	}
	body, err := json.Marshal(map[string]any{"name": method, "params": params})
	if err != nil {
		return nil, fmt.Errorf("agent command %s for node %s: encode params: %w", method, tgt.NodeUUID, err)
	}
	q := url.Values{"wait": {fmt.Sprint(mode == Wait)}}
	if tgt.Token != "" {
		q.Set("agent_token", tgt.Token)
	}
	hc, err := c.httpClient(tgt)
	if err != nil {
		return nil, err
	}
	log.Debug("executing agent command", "node", tgt.NodeUUID, "method", method, "wait", mode == Wait)

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target+"?"+q.Encode(), bytes.NewReader(body))
	if err != nil {
		return nil, errs.NewMessage(errs.ClassIronicException, fmt.Sprintf("Error invoking agent command %s for node %s. Error: %s", method, tgt.NodeUUID, transportText(err)))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	var result *CommandResult
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("agent command %s for node %s: %w", method, tgt.NodeUUID, ctx.Err())
		}
		result, err = c.handleTimeout(ctx, tgt, method, transportText(err))
		if err != nil {
			return nil, err
		}
		log.Debug("agent command is running after a failed request", "node", tgt.NodeUUID, "method", method)
	} else {
		result, err = c.decodeCommandResponse(tgt, method, target, resp)
		if err != nil {
			return nil, err
		}
	}
	if err := raiseIfTypeError(result, tgt); err != nil {
		log.Error("agent command failed with an internal TypeError", "node", tgt.NodeUUID, "method", method, "error", err)
		return nil, err
	}
	if mode == Poll {
		return c.waitForCommand(ctx, tgt, method)
	}
	return result, nil
}

func (c *Client) decodeCommandResponse(tgt Target, method, target string, resp *http.Response) (*CommandResult, error) {
	log := c.opts.log()
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		msg := fmt.Sprintf("Error invoking agent command %s for node %s. Error: %s", method, tgt.NodeUUID, transportText(err))
		log.Error(msg)
		return nil, errs.NewMessage(errs.ClassIronicException, msg)
	}
	var raw map[string]any
	var result CommandResult
	if json.Unmarshal(data, &raw) != nil || json.Unmarshal(data, &result) != nil {
		// Upstream also quotes the request body here; it can hold a
		// configdrive or image credentials, and this text ends up in
		// last_error, so only the command's name is given.
		msg := fmt.Sprintf("Unable to decode response as JSON.\nRequest URL: %s\nRequest command: \"%s\"\nResponse status code: %d\nResponse: \"%s\"",
			target, method, resp.StatusCode, data)
		log.Error("agent answered with something that is not JSON", "node", tgt.NodeUUID, "method", method, "status", resp.StatusCode)
		return nil, errs.NewMessage(errs.ClassIronicException, msg)
	}
	log.Debug("agent command returned", "node", tgt.NodeUUID, "method", method,
		"status", resp.StatusCode, "command_status", result.Status, "error", result.Error)
	if resp.StatusCode < http.StatusBadRequest {
		return &result, nil
	}
	faultstring := raw["faultstring"]
	fs, _ := faultstring.(string)
	if strings.Contains(fs, "agent_token") {
		log.Error("agent command failed; the error suggests an older ramdisk which does not support agent_token, this is fatal",
			"node", tgt.NodeUUID, "method", method, "status", resp.StatusCode)
	} else {
		log.Error("agent command failed: expected a 2xx HTTP status", "node", tgt.NodeUUID, "method", method, "status", resp.StatusCode)
	}
	// IPA answers 409 when busy; agents before late Victoria say so only
	// in the text, in lower case.
	if resp.StatusCode == http.StatusConflict || strings.Contains(strings.ToLower(fs), "agent is busy") {
		return nil, errs.New(errs.ClassAgentInProgress, map[string]any{"node": tgt.NodeUUID, "command": method, "error": faultstring})
	}
	return nil, errs.New(errs.ClassAgentAPIError, map[string]any{"node": tgt.NodeUUID, "status": resp.StatusCode, "error": faultstring})
}

// raiseIfTypeError turns a command that died on a Python TypeError in the
// agent (an incompatible call) into AgentAPIError.
func raiseIfTypeError(r *CommandResult, tgt Target) error {
	e, ok := r.Error.(map[string]any)
	if !ok || e["type"] != "TypeError" {
		return nil
	}
	status := e["code"]
	// JSON numbers decode as float64; Python prints the agent's int code.
	if f, ok := status.(float64); ok && f == float64(int64(f)) {
		status = int64(f)
	}
	return errs.New(errs.ClassAgentAPIError, map[string]any{"node": tgt.NodeUUID, "status": status, "error": CommandError(r)})
}

// handleTimeout covers a request that failed in transit: the agent may
// have received the command and lost only the answer, so if its last
// command is this one and still running, that is the result.
func (c *Client) handleTimeout(ctx context.Context, tgt Target, method, cause string) (*CommandResult, error) {
	log := c.opts.log()
	result, err := c.statusIfLastCommandMatches(ctx, tgt, method)
	if err != nil {
		log.Error(fmt.Sprintf("Failed to connect to the agent running on node %s for checking the last command status after failing to invoke command %s. Error: %v",
			tgt.NodeUUID, method, err))
	}
	if result == nil {
		msg := fmt.Sprintf("Failed to connect to the agent running on node %s for invoking command %s. Error: %s", tgt.NodeUUID, method, cause)
		log.Error(msg)
		return nil, errs.New(errs.ClassAgentConnectionFailed, map[string]any{"reason": msg})
	}
	return result, nil
}

func (c *Client) statusIfLastCommandMatches(ctx context.Context, tgt Target, method string) (*CommandResult, error) {
	name := shortName(method)
	commands, err := c.GetCommandsStatus(ctx, tgt, StatusOptions{})
	if err != nil || len(commands) == 0 {
		return nil, err
	}
	last := commands[len(commands)-1]
	if last.Name != name {
		c.opts.log().Debug("command is not currently executing", "node", tgt.NodeUUID, "command", name, "last", last.Name)
		return nil, nil
	}
	if last.Status != StatusRunning {
		c.opts.log().Debug("command is not currently executing", "node", tgt.NodeUUID, "command", name, "status", last.Status)
		return nil, nil
	}
	return &last, nil
}

// waitForCommand polls until the command is no longer RUNNING. Failures
// other than "still running" or "not listed" end the wait at once.
func (c *Client) waitForCommand(ctx context.Context, tgt Target, method string) (*CommandResult, error) {
	var err error
	for i := range attempts(c.opts.CommandWaitAttempts) {
		if i > 0 {
			if serr := c.opts.clock().Sleep(ctx, c.opts.CommandWaitInterval); serr != nil {
				return nil, fmt.Errorf("waiting for agent command %s on node %s: %w", method, tgt.NodeUUID, serr)
			}
		}
		var r *CommandResult
		r, err = c.GetLastCommandStatus(ctx, tgt, method)
		if err != nil {
			return nil, err
		}
		if r == nil || r.Status == StatusRunning {
			c.opts.log().Debug("agent command has not finished yet", "node", tgt.NodeUUID, "method", method)
			err = errs.New(errs.ClassAgentCommandTimeout, map[string]any{"command": method, "node": tgt.NodeUUID})
			continue
		}
		if terr := raiseIfTypeError(r, tgt); terr != nil {
			return nil, terr
		}
		return r, nil
	}
	return nil, err
}

// StatusOptions tune GetCommandsStatus.
type StatusOptions struct {
	// NoRetry gives up on the first connection failure instead of trying
	// [agent]/max_command_attempts times.
	NoRetry bool
	// ExpectErrors logs connection failures at debug level: the caller
	// expects the agent to be gone.
	ExpectErrors bool
}

// GetCommandsStatus lists every command the agent has run in this
// ramdisk session, oldest first.
func (c *Client) GetCommandsStatus(ctx context.Context, tgt Target, opts StatusOptions) ([]CommandResult, error) {
	target, err := c.commandURL(tgt)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if tgt.Token != "" {
		q.Set("agent_token", tgt.Token)
	}
	hc, err := c.httpClient(tgt)
	if err != nil {
		return nil, err
	}
	full := target
	if len(q) > 0 {
		full += "?" + q.Encode()
	}
	tries := attempts(c.opts.MaxCommandAttempts)
	if opts.NoRetry {
		tries = 1
	}
	c.opts.log().Debug("fetching status of agent commands", "node", tgt.NodeUUID)
	var resp *http.Response
	for i := range tries {
		req, rerr := http.NewRequestWithContext(ctx, http.MethodGet, full, nil)
		if rerr != nil {
			return nil, fmt.Errorf("agent command status for node %s: %s", tgt.NodeUUID, transportText(rerr))
		}
		resp, err = hc.Do(req)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("agent command status for node %s: %w", tgt.NodeUUID, ctx.Err())
		}
		msg := fmt.Sprintf("Failed to connect to the agent running on node %s to collect commands status. Error: %s", tgt.NodeUUID, transportText(err))
		if opts.ExpectErrors {
			c.opts.log().Debug(msg, "attempt", i+1)
		} else {
			c.opts.log().Error(msg, "attempt", i+1)
		}
		err = errs.New(errs.ClassAgentConnectionFailed, map[string]any{"reason": msg})
	}
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		msg := fmt.Sprintf("Failed to connect to the agent running on node %s to collect commands status. Error: %s", tgt.NodeUUID, transportText(err))
		return nil, errs.New(errs.ClassAgentConnectionFailed, map[string]any{"reason": msg})
	}
	var body struct {
		Commands    []CommandResult `json:"commands"`
		Faultstring any             `json:"faultstring"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, errs.NewMessage(errs.ClassIronicException, fmt.Sprintf("Unable to decode the status of agent commands for node %s: %v", tgt.NodeUUID, err))
	}
	// Upstream indexes ['commands'] without looking at the status and
	// fails with a KeyError on a 401; the status and the agent's text
	// are more use to an operator.
	if resp.StatusCode >= http.StatusBadRequest {
		return nil, errs.New(errs.ClassAgentAPIError, map[string]any{"node": tgt.NodeUUID, "status": resp.StatusCode, "error": body.Faultstring})
	}
	if body.Commands == nil {
		return nil, errs.NewMessage(errs.ClassIronicException, fmt.Sprintf("The agent of node %s answered the command status without a commands list", tgt.NodeUUID))
	}
	if c.opts.log().Enabled(ctx, slog.LevelDebug) {
		parts := make([]string, len(body.Commands))
		for i, r := range body.Commands {
			parts[i] = fmt.Sprintf("%s: status %s, error %q", r.Name, r.Status, pyfmt.Str(r.Error))
		}
		c.opts.log().Debug("status of agent commands", "node", tgt.NodeUUID, "status", strings.Join(parts, "; "))
	}
	return body.Commands, nil
}

// GetLastCommandStatus returns the most recent run of method (with or
// without its extension prefix), nil when the agent has not run it.
func (c *Client) GetLastCommandStatus(ctx context.Context, tgt Target, method string) (*CommandResult, error) {
	name := shortName(method)
	commands, err := c.GetCommandsStatus(ctx, tgt, StatusOptions{})
	if err != nil {
		return nil, err
	}
	for i := len(commands) - 1; i >= 0; i-- {
		if commands[i].Name == name {
			return &commands[i], nil
		}
	}
	c.opts.log().Debug("command is not in the executing commands list", "node", tgt.NodeUUID, "command", name)
	return nil, nil
}
