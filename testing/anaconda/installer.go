// Package anaconda is a stand-in for the Anaconda installer that the
// anaconda deploy interface boots: it follows the node's iPXE
// configuration to the boot_anaconda entry, downloads what that entry
// names (kernel, ramdisk, kickstart, stage2), and runs the kickstart as
// the installer would: the %pre heartbeat with the kickstart's own curl
// command, the installation (downloading the liveimg), the configuration
// drive's %post sections (written under a directory standing for the
// installed system's root), then the final %post heartbeat; or, when told
// to fail, the %onerror heartbeat.
package anaconda

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Installer boots from a node's iPXE configuration.
type Installer struct {
	t       testing.TB
	root    string
	fail    bool
	install func(ctx context.Context) error
}

// New returns an installer whose installed system's root is a temporary
// directory.
func New(t testing.TB) *Installer { return &Installer{t: t, root: t.TempDir()} }

// FailInstall makes the installation fail after %pre: the installer runs
// %onerror instead of the %post sections.
func (i *Installer) FailInstall() *Installer { i.fail = true; return i }

// WithInstall runs fn as the installation, between the %pre heartbeat and
// the %post sections (a real installation takes minutes; a test waits
// there for the conductor to have processed "start").
func (i *Installer) WithInstall(fn func(ctx context.Context) error) *Installer {
	i.install = fn
	return i
}

// Root is the directory standing for the installed system's /.
func (i *Installer) Root() string { return i.root }

// Heartbeat is one heartbeat the kickstart sent and the API's answer.
type Heartbeat struct {
	Section string // %pre, %post or %onerror
	Status  string // the HTTP status code curl saw
}

// Run is what one boot of the installer did.
type Run struct {
	// KickstartURL and Stage2URL are the boot entry's inst.ks= and
	// inst.stage2= (or inst.repo=).
	KickstartURL, Stage2URL string
	// Kickstart is the kickstart as downloaded.
	Kickstart string
	// Liveimg is the URL the kickstart installs from (liveimg or url).
	Liveimg    string
	Heartbeats []Heartbeat
}

var (
	gotoLine = regexp.MustCompile(`(?m)^goto (\S+)$`)
	kernelRe = regexp.MustCompile(`(?m)^kernel (?:--timeout \d+ )?(\S+) (.*)$`)
	initrdRe = regexp.MustCompile(`(?m)^initrd (?:--timeout \d+ )?(\S+)`)
)

// Boot reads the iPXE configuration at configPath and installs.
func (i *Installer) Boot(ctx context.Context, configPath string) (*Run, error) {
	cfg, err := os.ReadFile(configPath)
	if err != nil {
		return nil, fmt.Errorf("read iPXE configuration: %w", err)
	}
	entry := ""
	if m := gotoLine.FindSubmatch(cfg); m != nil {
		entry = string(m[1])
	}
	if entry != "boot_anaconda" {
		return nil, fmt.Errorf("the iPXE configuration boots %q, not boot_anaconda", entry)
	}
	section := string(cfg[strings.Index(string(cfg), "\n:boot_anaconda\n"):])
	if end := strings.Index(section[2:], "\n:"); end > 0 {
		section = section[:end+2]
	}
	km := kernelRe.FindStringSubmatch(section)
	im := initrdRe.FindStringSubmatch(section)
	if km == nil || im == nil {
		return nil, fmt.Errorf("boot_anaconda has no kernel or initrd line:\n%s", section)
	}
	run := &Run{}
	for _, arg := range strings.Fields(km[2]) {
		switch {
		case strings.HasPrefix(arg, "inst.ks="):
			run.KickstartURL = strings.TrimPrefix(arg, "inst.ks=")
		case strings.HasPrefix(arg, "inst.stage2="):
			run.Stage2URL = strings.TrimPrefix(arg, "inst.stage2=")
		case strings.HasPrefix(arg, "inst.repo="):
			run.Stage2URL = strings.TrimPrefix(arg, "inst.repo=")
		}
	}
	for _, u := range []string{km[1], im[1]} {
		if _, err := get(ctx, u); err != nil {
			return run, fmt.Errorf("boot file: %w", err)
		}
	}
	if _, err := get(ctx, strings.TrimRight(run.Stage2URL, "/")+"/LiveOS/squashfs.img"); err != nil {
		return run, fmt.Errorf("stage2: %w", err)
	}
	ks, err := get(ctx, run.KickstartURL)
	if err != nil {
		return run, fmt.Errorf("kickstart: %w", err)
	}
	run.Kickstart = string(ks)
	return run, i.runKickstart(ctx, run)
}

// section is one %name … %end block of a kickstart.
type section struct {
	name  string
	lines []string
}

func parseKickstart(ks string) (commands []string, sections []section) {
	sc := bufio.NewScanner(strings.NewReader(ks))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var cur *section
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case cur == nil && strings.HasPrefix(line, "%"):
			cur = &section{name: strings.Fields(line)[0]}
		case cur != nil && line == "%end":
			sections = append(sections, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, line)
		default:
			commands = append(commands, line)
		}
	}
	return commands, sections
}

func (i *Installer) runKickstart(ctx context.Context, run *Run) error {
	commands, sections := parseKickstart(run.Kickstart)
	for _, c := range commands {
		f := strings.Fields(c)
		if (f[0] == "liveimg" || f[0] == "url") && len(f) == 3 && f[1] == "--url" {
			run.Liveimg = f[2]
		}
	}
	if run.Liveimg == "" {
		return fmt.Errorf("the kickstart names nothing to install")
	}
	for _, s := range sections {
		if s.name == "%pre" {
			if err := i.runSection(ctx, run, s); err != nil {
				return err
			}
		}
	}
	ierr := i.installImage(ctx, run)
	if ierr == nil && i.install != nil {
		ierr = i.install(ctx)
	}
	if ierr != nil || i.fail {
		for _, s := range sections {
			if s.name == "%onerror" {
				if err := i.runSection(ctx, run, s); err != nil {
					return err
				}
			}
		}
		return ierr
	}
	for _, s := range sections {
		if s.name == "%post" {
			if err := i.runSection(ctx, run, s); err != nil {
				return err
			}
		}
	}
	return nil
}

func (i *Installer) installImage(ctx context.Context, run *Run) error {
	if strings.HasSuffix(run.Liveimg, "/") {
		// An installation tree: the installer reads its .treeinfo.
		_, err := get(ctx, run.Liveimg+".treeinfo")
		return err
	}
	_, err := get(ctx, run.Liveimg)
	return err
}

var (
	contentRe = regexp.MustCompile(`^CONTENT='([A-Za-z0-9+/=]*)'$`)
	decodeRe  = regexp.MustCompile(`^echo \$CONTENT \| /usr/bin/base64 --decode > (\S+)$`)
)

// runSection runs a section's curl commands with curl itself (printing
// the status code it got) and carries out the configuration drive's
// file writes under the root; other commands (sync, mkdir, chmod) have
// nothing to do here.
func (i *Installer) runSection(ctx context.Context, run *Run, s section) error {
	content := ""
	for _, line := range s.lines {
		switch {
		case strings.HasPrefix(line, "/usr/bin/curl "):
			out, err := exec.CommandContext(ctx, "/bin/sh", "-c", line+" -s -o /dev/null -w '%{http_code}'").CombinedOutput()
			if err != nil {
				return fmt.Errorf("%s heartbeat: %w: %s", s.name, err, out)
			}
			i.t.Logf("installer %s heartbeat: HTTP %s", s.name, out)
			run.Heartbeats = append(run.Heartbeats, Heartbeat{Section: s.name, Status: string(out)})
		case contentRe.MatchString(line):
			content = contentRe.FindStringSubmatch(line)[1]
		case decodeRe.MatchString(line):
			data, err := base64.StdEncoding.DecodeString(content)
			if err != nil {
				return fmt.Errorf("%s: content of %s: %w", s.name, line, err)
			}
			dest := filepath.Join(i.root, decodeRe.FindStringSubmatch(line)[1])
			if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(dest, data, 0o600); err != nil {
				return err
			}
		}
	}
	return nil
}

func get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	return body, nil
}
