package ansible

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/openkeel/ironic/internal/pyfmt"
)

// playbooks are our default playbooks, with the roles and variables
// contract of upstream's documentation (inventory, add-ironic-nodes,
// wait, discover, prepare, deploy, configure, shutdown).
//
//go:embed playbooks
var playbooks embed.FS

// Runner runs ansible-playbook as upstream's _run_playbook does.
type Runner struct {
	opts Options
	// once writes the embedded playbooks; written is where, err why not.
	once    sync.Once
	written string
	err     error
}

// NewRunner builds a runner for o.
func NewRunner(o Options) *Runner { return &Runner{opts: o} }

// embedded writes our playbooks to EmbeddedDir once and returns it.
func (r *Runner) embedded() (string, error) {
	r.once.Do(func() {
		dir := r.opts.EmbeddedDir
		r.err = fs.WalkDir(playbooks, "playbooks", func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			dst := filepath.Join(dir, strings.TrimPrefix(p, "playbooks"))
			if e.IsDir() {
				return os.MkdirAll(dst, 0o755)
			}
			b, err := playbooks.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, b, 0o644)
		})
		if r.err != nil {
			r.err = fmt.Errorf("write the default ansible playbooks to %s: %w", dir, r.err)
		}
		r.written = dir
	})
	return r.written, r.err
}

// Run runs playbook pb with the ironic extra variables; its output is
// returned, and in the error when it fails.
func (r *Runner) Run(ctx context.Context, pb playbook, ironic map[string]any, tags []string) (string, error) {
	vars := map[string]any{"ironic": ironic}
	if pb.Python != "" {
		vars["ansible_python_interpreter"] = pb.Python
	}
	ev, err := json.Marshal(vars)
	if err != nil {
		return "", fmt.Errorf("encode the playbook's variables: %w", err)
	}
	script := r.opts.PlaybookScript
	if script == "" {
		script = "ansible-playbook"
	}
	args := []string{filepath.Join(pb.Dir, pb.Name), "-i", filepath.Join(pb.Dir, "inventory"), "-e", string(ev)}
	if len(tags) > 0 {
		args = append(args, "--tags="+strings.Join(tags, ","))
	}
	if pb.KeyFile != "" {
		args = append(args, "--private-key="+pb.KeyFile)
	}
	if r.opts.Verbosity > 0 {
		args = append(args, "-"+strings.Repeat("v", r.opts.Verbosity))
	}
	extra, err := splitArgs(r.opts.ExtraArgs)
	if err != nil {
		return "", fmt.Errorf("[ansible]/ansible_extra_args: %w", err)
	}
	args = append(args, extra...)
	cmd := exec.CommandContext(ctx, script, args...)
	cmd.Env = os.Environ()
	if r.opts.ConfigFilePath != "" {
		cmd.Env = append(cmd.Env, "ANSIBLE_CONFIG="+r.opts.ConfigFilePath)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		shown := append([]string{script}, args...)
		if r.opts.ConfigFilePath != "" {
			shown = append([]string{"env", "ANSIBLE_CONFIG=" + r.opts.ConfigFilePath}, shown...)
		}
		return out.String(), &execError{cmd: shown, out: out.String(), errOut: errOut.String(), err: err}
	}
	return out.String(), nil
}

// execError is a failed ansible-playbook run, worded as oslo's
// ProcessExecutionError, which upstream's InstanceDeployFailure carries
// into the node's last_error.
type execError struct {
	cmd         []string
	out, errOut string
	err         error
}

func (e *execError) Error() string {
	desc, code := "Unexpected error while running command.", "-"
	var exit *exec.ExitError
	if errors.As(e.err, &exit) && exit.ExitCode() >= 0 {
		code = strconv.Itoa(exit.ExitCode())
	} else {
		desc = e.err.Error()
	}
	return fmt.Sprintf("%s\nCommand: %s\nExit code: %s\nStdout: %s\nStderr: %s",
		desc, strings.Join(e.cmd, " "), code, pyfmt.Repr(e.out), pyfmt.Repr(e.errOut))
}

func (e *execError) Unwrap() error { return e.err }

// splitArgs splits s as shlex.split does for the quoting an operator
// writes in ansible_extra_args: whitespace, single and double quotes,
// backslash escapes.
func splitArgs(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	var quote rune
	esc := false
	for _, c := range s {
		switch {
		case esc:
			cur.WriteRune(c)
			esc = false
		case c == '\\' && quote != '\'':
			esc, inWord = true, true
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteRune(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	if quote != 0 || esc {
		return nil, fmt.Errorf("unbalanced quoting in %q", s)
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}
