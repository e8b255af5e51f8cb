package ipa

// The agent as a process, the way a ramdisk runs ironic-python-agent:
// cmd/fake-ipa and `ironic lab agent` are this, under two names.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"
)

// process stands in for the fixture's test: its log, and the cleanups run at exit.
type process struct {
	log      *log.Logger
	cleanups []func()
}

func (p *process) Helper()                           {}
func (p *process) Cleanup(f func())                  { p.cleanups = append(p.cleanups, f) }
func (p *process) Log(args ...any)                   { p.log.Print(args...) }
func (p *process) Logf(format string, args ...any)   { p.log.Printf(format, args...) }
func (p *process) Fatalf(format string, args ...any) { p.stop(); p.log.Fatalf(format, args...) }

func (p *process) stop() {
	for i := len(p.cleanups) - 1; i >= 0; i-- {
		p.cleanups[i]()
	}
	p.cleanups = nil
}

// TokenEnv names the environment variable that may carry the
// pre-generated agent token, which keeps it out of the process's
// arguments (readable by every user of the machine).
const TokenEnv = "IPA_AGENT_TOKEN"

type processOptions struct {
	apiURL, token, inspectionData, failStep string
	// inspectionURL is ipa-inspection-callback-url; apiURL's
	// /v1/continue_inspection when empty.
	inspectionURL                string
	macs                         []string
	tls, noHeartbeat, wrongToken bool
	interval, powerOffDelay      time.Duration
	bootDelay                    time.Duration
}

func parseProcess(name string, args []string, stderr io.Writer) (processOptions, error) {
	var o processOptions
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.apiURL, "api-url", "", "Ironic API root (ipa-api-url)")
	macs := fs.String("mac", "", "comma-separated MAC addresses of the machine")
	fs.StringVar(&o.token, "token", "", "pre-generated agent token (ipa-agent-token); $"+TokenEnv+" when not given")
	fs.StringVar(&o.inspectionData, "inspection-data", "", "JSON file of {\"inventory\", \"plugin_data\"} to send to /v1/continue_inspection first")
	fs.StringVar(&o.inspectionURL, "inspection-callback-url", "", "where the inspection data goes (ipa-inspection-callback-url); the API's /v1/continue_inspection by default")
	fs.DurationVar(&o.bootDelay, "boot-delay", 0, "time the ramdisk takes to boot before its API answers and it calls Ironic")
	fs.StringVar(&o.failStep, "fail-step", "", "name of a clean, deploy or service step that fails")
	fs.BoolVar(&o.tls, "tls", false, "serve HTTPS and send the certificate as agent_verify_ca")
	fs.BoolVar(&o.noHeartbeat, "no-heartbeat", false, "look the node up but never heartbeat")
	fs.BoolVar(&o.wrongToken, "wrong-token", false, "heartbeat with a token that is not the node's")
	fs.DurationVar(&o.interval, "heartbeat-interval", time.Second, "time between heartbeats")
	fs.DurationVar(&o.powerOffDelay, "power-off-delay", DefaultPowerOffDelay, "time from standby.power_off to the machine being off (disks flushed); negative: never")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.apiURL == "" || *macs == "" {
		return o, errors.New("-api-url and -mac are required")
	}
	o.macs = strings.Split(*macs, ",")
	if o.token == "" {
		o.token = os.Getenv(TokenEnv)
	}
	return o, nil
}

// failingStep runs the steps of kind as IPA does, except the one called name,
// which fails as IPA reports a failed step.
func failingStep(kind, name string) Handler {
	ok := ExecuteStep(kind, 1, nil)
	bad := AsyncFail(1, CommandError("CommandExecutionError", "Command execution failed", fmt.Sprintf("step %s failed as fake-ipa was told to", name), 500))
	return func(params map[string]any) Outcome {
		if st, _ := params["step"].(map[string]any); st["step"] == name {
			return bad(params)
		}
		return ok(params)
	}
}

func runProcess(ctx context.Context, p *process, o processOptions, stdout io.Writer) error {
	if !sleepCtx(ctx, o.bootDelay) {
		return nil
	}
	agent := New(p)
	if o.tls {
		agent.WithTLS()
	}
	if o.powerOffDelay < 0 {
		agent.NeverPowerOff()
	} else {
		agent.WithPowerOffDelay(o.powerOffDelay)
	}
	if o.failStep != "" {
		for _, kind := range []string{"clean", "deploy", "service"} {
			agent.Handle(kind+".execute_"+kind+"_step", failingStep(kind, o.failStep))
		}
	}
	agent.WithToken(o.token)
	fmt.Fprintf(stdout, "IPA_URL=%s\n", agent.URL())
	client := &IronicClient{BaseURL: o.apiURL, Token: o.token}
	if o.inspectionData != "" {
		raw, err := os.ReadFile(o.inspectionData)
		if err != nil {
			return fmt.Errorf("read inspection data: %w", err)
		}
		var data struct {
			Inventory  map[string]any `json:"inventory"`
			PluginData map[string]any `json:"plugin_data"`
		}
		if err := json.Unmarshal(raw, &data); err != nil {
			return fmt.Errorf("decode inspection data: %w", err)
		}
		inspector := client
		if o.inspectionURL != "" {
			inspector = &IronicClient{BaseURL: strings.TrimSuffix(o.inspectionURL, "/v1/continue_inspection"), Token: o.token}
		}
		if _, err := inspector.ContinueInspection(ctx, data.Inventory, data.PluginData); err != nil {
			p.Logf("continue_inspection: %v", err)
		} else {
			p.Logf("inspection data sent")
		}
	}
	var node string
	for node == "" {
		out, err := client.Lookup(ctx, o.macs, "")
		if err == nil {
			n, _ := out["node"].(map[string]any)
			node, _ = n["uuid"].(string)
		} else if ctx.Err() == nil {
			p.Logf("lookup: %v", err)
		}
		if node == "" && !sleepCtx(ctx, o.interval) {
			return nil
		}
	}
	p.Logf("node %s found", node)
	agent.WithToken(client.Token)
	if o.noHeartbeat {
		<-ctx.Done()
		return nil
	}
	if o.wrongToken {
		client.Token = "not-" + client.Token
	}
	// The machine's power is looked at more often than it heartbeats,
	// so that it goes off when its flush ends, not at the next beat.
	look := min(o.interval, powerLook)
	var next time.Time
	for {
		if agent.PoweredOff() {
			p.Logf("powered off after standby.power_off")
			// What a BMC, or the lab's machine, reads.
			fmt.Fprintln(stdout, PoweredOffLine)
			<-ctx.Done()
			return nil
		}
		if now := time.Now(); !now.Before(next) {
			if err := client.Heartbeat(ctx, node, agent.URL(), agent.CAPEM()); err != nil && ctx.Err() == nil {
				p.Logf("heartbeat: %v", err)
			}
			next = now.Add(o.interval)
		}
		if !sleepCtx(ctx, look) {
			return nil
		}
	}
}

// powerLook is how often a running agent process checks whether its
// machine has gone off.
const powerLook = 100 * time.Millisecond

// PoweredOffLine is what the process writes to stdout once its machine
// is off after standby.power_off: the lab's machine then reports its
// power off, as a server's BMC sees its OS shut it down.
const PoweredOffLine = "POWERED_OFF"

func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// Main runs the agent as a process until ctx ends: it serves IPA's REST
// API on 127.0.0.1, sends the inspection data when given some, looks its
// node up by MAC and heartbeats with its callback URL. Switches inject
// the failures tests need: a step that fails, an agent that never calls
// back, a heartbeat with a wrong token. After standby.power_off the
// machine goes off -power-off-delay later (negative: never): the API
// stops answering and the heartbeats stop.
//
//	NAME -api-url http://127.0.0.1:6385 -mac 52:54:00:12:34:56 [-tls]
//	     [-token T] [-inspection-data data.json]
//	     [-fail-step erase_devices_metadata] [-no-heartbeat] [-wrong-token]
//	     [-power-off-delay 2s] [-heartbeat-interval 1s] [-boot-delay 3s]
//	     [-inspection-callback-url URL]
//
// It stays silent for -boot-delay, as a ramdisk booting. Once listening
// it writes "IPA_URL=<url>" to stdout, and PoweredOffLine once the
// machine is off; its log goes to stderr.
func Main(ctx context.Context, name string, args []string, stdout, stderr io.Writer) error {
	p := &process{log: log.New(stderr, name+": ", log.LstdFlags)}
	o, err := parseProcess(name, args, stderr)
	if err != nil {
		return err
	}
	err = runProcess(ctx, p, o, stdout)
	p.stop()
	return err
}
