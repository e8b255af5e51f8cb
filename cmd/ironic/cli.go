package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/openkeel/ironic/internal/config"
)

// version is set at link time (-ldflags "-X main.version=...").
var version = "0.1.0-dev"

// programs maps upstream program names to our subcommands.
var programs = map[string]string{
	"ironic-api":       "api",
	"ironic-conductor": "conductor",
	"ironic-dbsync":    "dbsync",
	"ironic-status":    "status",
	// The graphical consoles' websocket proxy ([vnc]).
	"ironic-novncproxy": "novncproxy",
	"ironic-pxe-filter": "pxe-filter",
}

const usage = `usage: ironic [--config-file FILE]... [--config-dir DIR]... [COMMAND]

commands:
  all-in-one         API and conductor in one process (default)
  api                the REST API only
  conductor          the conductor only
  dbsync upgrade     create or upgrade the database schema
  dbsync version     print the schema versions
  dbsync create_schema
                     create the schema in an empty database
  status upgrade check
                     pre-upgrade readiness checks (exit 0, 1 warning, 2 failure)
  secrets encrypt|rotate|decrypt
                     seal the nodes' plain secrets with [openkeel_secrets]'s
                     current key, seal anew under it, or open them back to
                     plain text (for upstream Ironic); safe beside the service
  novncproxy         the noVNC proxy of graphical consoles ([vnc]enabled)
  pxe-filter         keep dnsmasq's [pxe_filter]dhcp_hostsdir in step with inspection
  version            print the program version
  lab bmc -config FILE
                     a Redfish BMC emulator for a laptop lab
  lab agent -api-url URL -mac MAC
                     an ironic-python-agent stand-in for a laptop lab
`

// errUsage marks command-line mistakes, answered with exit code 2.
var errUsage = errors.New("usage")

// checkFailed carries the exit code of `status upgrade check` when a check
// warned (1) or failed (2); the results are already printed.
type checkFailed int

func (c checkFailed) Error() string { return fmt.Sprintf("upgrade check result %d", int(c)) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, stdout, stderr)
	var check checkFailed
	switch {
	case err == nil:
		return 0
	case errors.As(err, &check):
		return int(check)
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, usage)
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "ironic: %v\n%s", err, usage)
		return 2
	default:
		fmt.Fprintf(stderr, "ironic: %v\n", err)
		return 1
	}
}

// invocation is what the command line asked for.
type invocation struct {
	command string
	args    []string
	load    *config.LoadOptions
	// dbsync holds the options of dbsync online_data_migrations.
	dbsync dbsyncFlags
}

// parseArgs accepts options before and after the command, as oslo.config
// programs do (`ironic-dbsync --config-file f upgrade`).
func parseArgs(args []string, stderr io.Writer) (*invocation, error) {
	prog := filepath.Base(args[0])
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	inv := &invocation{load: config.RegisterFlags(fs)}
	inv.dbsync.register(fs)
	rest := args[1:]
	if err := fs.Parse(rest); err != nil {
		return nil, wrapFlagErr(err)
	}
	rest = fs.Args()
	if cmd, ok := programs[prog]; ok {
		inv.command = cmd
	} else if len(rest) > 0 {
		inv.command, rest = rest[0], rest[1:]
	} else {
		inv.command = "all-in-one"
	}
	if inv.command == "lab" {
		// The lab's programs take their own flags.
		inv.args = rest
		return inv, nil
	}
	// Options may also follow the command and its positional arguments.
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return nil, wrapFlagErr(err)
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		inv.args = append(inv.args, rest[0])
		rest = rest[1:]
	}
	return inv, nil
}

func wrapFlagErr(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return fmt.Errorf("%w: %v", errUsage, err)
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	inv, err := parseArgs(args, stderr)
	if err != nil {
		return err
	}
	switch inv.command {
	case "version":
		fmt.Fprintf(stdout, "openkeel-ironic %s\n", version)
		return nil
	case "all-in-one", "api", "conductor":
		if len(inv.args) > 0 {
			return fmt.Errorf("%w: %s takes no arguments, got %q", errUsage, inv.command, strings.Join(inv.args, " "))
		}
		return serve(ctx, mode(inv.command), inv.load, stderr)
	case "dbsync":
		return dbsync(ctx, inv, stdout, stderr)
	case "novncproxy":
		if len(inv.args) > 0 {
			return fmt.Errorf("%w: novncproxy takes no arguments, got %q", errUsage, strings.Join(inv.args, " "))
		}
		return runNoVNCProxy(ctx, inv.load, stderr)
	case "pxe-filter":
		return runPXEFilter(ctx, inv, stderr)
	case "lab":
		return lab(ctx, inv.args, stdout, stderr)
	case "secrets":
		return secretsCommand(ctx, inv, stdout, stderr)
	case "status":
		code, err := upgradeCheck(ctx, inv, stdout, stderr)
		if err == nil && code != 0 {
			return checkFailed(code)
		}
		return err
	default:
		return fmt.Errorf("%w: unknown command %q", errUsage, inv.command)
	}
}

// loadConfig reads the configuration with the defaults of a mode beneath the
// files, and returns a logger configured by it.
func loadConfig(m mode, opts *config.LoadOptions, stderr io.Writer) (*config.Config, *slog.Logger, error) {
	_, lookErr := exec.LookPath("ipmitool")
	opts.Overrides = m.overrides(lookErr == nil)
	cfg, err := config.Load(*opts)
	if err != nil {
		return nil, nil, fmt.Errorf("configuration: %w", err)
	}
	level := slog.LevelInfo
	if cfg.BoolOf(config.DefaultDebug) {
		level = slog.LevelDebug
	}
	var h slog.Handler = slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})
	if cfg.BoolOf(config.DefaultUseJSON) {
		h = slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level})
	}
	return cfg, slog.New(h), nil
}

// warnUnknown logs the sections and options of the files that no option
// is, now that the logger they could not use while loading exists.
func warnUnknown(cfg *config.Config, log *slog.Logger) {
	for _, u := range cfg.Unknown() {
		attrs := []any{"file", u.File}
		if u.Suggestion != "" {
			attrs = append(attrs, "did_you_mean", u.Suggestion)
		}
		if u.Option == "" {
			log.Warn("ignoring unknown configuration section", append([]any{"section", "[" + u.Section + "]"}, attrs...)...)
			continue
		}
		log.Warn("ignoring unknown configuration option", append([]any{"option", config.Name{Section: u.Section, Name: u.Option}.String()}, attrs...)...)
	}
}
