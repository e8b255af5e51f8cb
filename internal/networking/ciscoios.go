package networking

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/openkeel/ironic/internal/errs"
)

// GenericSwitchName is the SSH driver's name in enabled_switch_drivers
// and in the switch sections' driver_type, as master's generic-switch
// driver (which drives networking-generic-switch's devices).
const GenericSwitchName = "generic-switch"

// ciscoIOSDeviceTypes are the device_type values the SSH driver speaks:
// networking-generic-switch's name for Cisco IOS and netmiko's.
var ciscoIOSDeviceTypes = map[string]bool{"netmiko_cisco_ios": true, "cisco_ios": true}

// Cisco IOS command sets, as networking-generic-switch's CiscoIos device
// sends them inside "configure terminal".
func plugAccess(port string, vlan int) []string {
	return []string{"interface " + port, "switchport mode access", fmt.Sprintf("switchport access vlan %d", vlan)}
}

func deletePort(port string, vlan int) []string {
	return []string{"interface " + port, fmt.Sprintf("no switchport access vlan %d", vlan), "no switchport mode trunk", "switchport trunk allowed vlan none"}
}

func setNativeVLAN(port string, vlan int) []string {
	return []string{"interface " + port, "switchport mode trunk", fmt.Sprintf("switchport trunk native vlan %d", vlan), fmt.Sprintf("switchport trunk allowed vlan add %d", vlan)}
}

func deleteNativeVLAN(port string, vlan int) []string {
	return []string{"interface " + port, "no switchport mode trunk", fmt.Sprintf("no switchport trunk native vlan %d", vlan), fmt.Sprintf("switchport trunk allowed vlan remove %d", vlan)}
}

func addToTrunk(port string, vlan int) []string {
	return []string{"interface " + port, "switchport mode trunk", fmt.Sprintf("switchport trunk allowed vlan add %d", vlan)}
}

func removeFromTrunk(port string, vlan int) []string {
	return []string{"interface " + port, fmt.Sprintf("switchport trunk allowed vlan remove %d", vlan)}
}

func addNetwork(vlan int) []string {
	return []string{fmt.Sprintf("vlan %d", vlan), fmt.Sprintf("name %d", vlan)}
}

// iosErrorPatterns mark a rejected command in IOS's output, where the
// command's echo is followed by one of these lines.
var iosErrorPatterns = []string{"% Invalid input", "% Incomplete command", "% Ambiguous command", "% Unrecognized command"}

// iosPrompt matches IOS's prompt at the end of the output read so far:
// "sw1>" (user EXEC), "sw1#" (privileged) and "sw1(config-if)#".
var iosPrompt = regexp.MustCompile(`(?m)^[\w.\-]+(\([\w.\-]+\))?[>#] ?$`)

var passwordPrompt = regexp.MustCompile(`(?i)password: ?$`)

// enableAnswer is what "enable" may answer: the secret's prompt, or the
// privileged prompt when no secret is asked.
var enableAnswer = regexp.MustCompile(passwordPrompt.String() + `|` + iosPrompt.String())

// GenericSwitch configures Cisco IOS switches over an interactive SSH
// session, as networking-generic-switch's netmiko CiscoIos device: log in,
// "enable" with the enable secret when the prompt is user EXEC, the
// commands inside "configure terminal" … "end", and "write mem" when the
// switch's persist option says so.
type GenericSwitch struct {
	switches []*SwitchConfig
	log      *slog.Logger
	// DialTimeout bounds the TCP connection and SSH handshake (netmiko's
	// conn_timeout); SessionTimeout one whole configuration session.
	DialTimeout, SessionTimeout time.Duration

	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// NewGenericSwitch is the SSH driver's factory. Every switch must be of a
// device type it speaks.
func NewGenericSwitch(switches []*SwitchConfig, log *slog.Logger) (SwitchDriver, error) {
	for _, s := range switches {
		if !ciscoIOSDeviceTypes[s.Get("device_type")] {
			return nil, errs.NewMessage(errs.ClassConfigInvalid, fmt.Sprintf(
				"Invalid configuration file. Switch %s: device_type %q is not supported by the generic-switch driver (supported: netmiko_cisco_ios)",
				s.Name, s.Get("device_type")))
		}
		if p := s.Get("port"); p != "" {
			if _, err := strconv.Atoi(p); err != nil {
				return nil, errs.NewMessage(errs.ClassConfigInvalid, fmt.Sprintf("Invalid configuration file. Switch %s: port %q is not a number", s.Name, p))
			}
		}
		if v := s.Get("native_vlan"); v != "" {
			if _, err := strconv.Atoi(v); err != nil {
				return nil, errs.NewMessage(errs.ClassConfigInvalid, fmt.Sprintf("Invalid configuration file. Switch %s: native_vlan %q is not a number", s.Name, v))
			}
		}
	}
	return &GenericSwitch{switches: switches, log: log, DialTimeout: 10 * time.Second, SessionTimeout: 60 * time.Second,
		locks: map[string]*sync.Mutex{}}, nil
}

// Name is "generic-switch".
func (*GenericSwitch) Name() string { return GenericSwitchName }

func (g *GenericSwitch) find(switchID string) *SwitchConfig {
	for _, s := range g.switches {
		if s.matches(switchID) {
			return s
		}
	}
	return nil
}

// Manages tells whether a switch section names switchID.
func (g *GenericSwitch) Manages(switchID string) bool { return g.find(switchID) != nil }

// AllowedVLANs is the switch section's allowed_vlans.
func (g *GenericSwitch) AllowedVLANs(switchID string) string {
	if s := g.find(switchID); s != nil {
		return s.Get("allowed_vlans")
	}
	return ""
}

// portDefaultVLAN is the VLAN a port sits on when not configured: the
// idle network's when given, else the switch's native_vlan.
func portDefaultVLAN(s *SwitchConfig, defaultVLAN int) int {
	if defaultVLAN != 0 {
		return defaultVLAN
	}
	v, _ := strconv.Atoi(s.Get("native_vlan"))
	return v
}

// UpdatePort is networking-generic-switch's plug_port_to_network.
func (g *GenericSwitch) UpdatePort(ctx context.Context, switchID, portName, _, mode string, nativeVLAN int, allowedVLANs []int, defaultVLAN int) error {
	if strings.TrimSpace(portName) == "" {
		return errs.NewMessage(errs.ClassInvalidParameterValue, "port_name must be a non-empty string")
	}
	if (mode == ModeTrunk || mode == ModeHybrid) && len(allowedVLANs) == 0 {
		return errs.NewMessage(errs.ClassInvalidParameterValue, fmt.Sprintf("allowed_vlans parameter cannot be empty or missing when mode is '%s'", mode))
	}
	s := g.find(switchID)
	if s == nil {
		return errs.New(errs.ClassSwitchNotFound, map[string]any{"switch_id": switchID})
	}
	var cmds []string
	if def := portDefaultVLAN(s, defaultVLAN); def != 0 {
		cmds = append(cmds, deletePort(portName, def)...)
	}
	if mode == ModeAccess {
		cmds = append(cmds, plugAccess(portName, nativeVLAN)...)
	} else {
		cmds = append(cmds, setNativeVLAN(portName, nativeVLAN)...)
		for _, v := range allowedVLANs {
			if v != nativeVLAN {
				cmds = append(cmds, addToTrunk(portName, v)...)
			}
		}
	}
	return g.configure(ctx, s, cmds)
}

// ResetPort is networking-generic-switch's delete_port.
func (g *GenericSwitch) ResetPort(ctx context.Context, switchID, portName string, nativeVLAN int, allowedVLANs []int, defaultVLAN int) error {
	s := g.find(switchID)
	if s == nil {
		return errs.New(errs.ClassSwitchNotFound, map[string]any{"switch_id": switchID})
	}
	cmds := deletePort(portName, nativeVLAN)
	var sub []int
	for _, v := range allowedVLANs {
		if v != nativeVLAN {
			sub = append(sub, v)
		}
	}
	if len(sub) > 0 {
		cmds = append(cmds, deleteNativeVLAN(portName, nativeVLAN)...)
		for _, v := range sub {
			cmds = append(cmds, removeFromTrunk(portName, v)...)
		}
	}
	if def := portDefaultVLAN(s, defaultVLAN); def != 0 {
		cmds = append(cmds, addNetwork(def)...)
		cmds = append(cmds, plugAccess(portName, def)...)
	}
	return g.configure(ctx, s, cmds)
}

// lock serializes the sessions to one switch: IOS takes one
// configuration session at a time, and networking-generic-switch locks
// per switch likewise.
func (g *GenericSwitch) lock(name string) *sync.Mutex {
	g.mu.Lock()
	defer g.mu.Unlock()
	l := g.locks[name]
	if l == nil {
		l = &sync.Mutex{}
		g.locks[name] = l
	}
	return l
}

// configure runs cmds in one configuration session on s.
func (g *GenericSwitch) configure(ctx context.Context, s *SwitchConfig, cmds []string) error {
	l := g.lock(s.Name)
	l.Lock()
	defer l.Unlock()
	ctx, cancel := context.WithTimeout(ctx, g.SessionTimeout)
	defer cancel()
	sess, err := g.dial(ctx, s)
	if err != nil {
		return err
	}
	defer sess.close()
	stop := context.AfterFunc(ctx, sess.close)
	defer stop()
	if err := sess.run(s, cmds); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("switch %s: session timed out after %s: %w", s.Name, g.SessionTimeout, err)
		}
		return fmt.Errorf("switch %s: %w", s.Name, err)
	}
	g.log.DebugContext(ctx, "switch configured", "switch", s.Name, "commands", len(cmds))
	return nil
}

// iosSession is an interactive shell on the switch.
type iosSession struct {
	client *ssh.Client
	sess   *ssh.Session
	in     io.WriteCloser
	out    chan []byte
	buf    strings.Builder
	once   sync.Once
}

func (g *GenericSwitch) dial(ctx context.Context, s *SwitchConfig) (*iosSession, error) {
	auth, err := authMethods(s)
	if err != nil {
		return nil, err
	}
	port := s.Get("port")
	if port == "" {
		port = "22"
	}
	addr := net.JoinHostPort(s.Get("address"), port)
	// Master's switch file has no host key to check against; netmiko
	// (through paramiko's AutoAddPolicy) accepts the switch's key too.
	cfg := &ssh.ClientConfig{User: s.Get("username"), Auth: auth, HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: g.DialTimeout}
	d := net.Dialer{Timeout: g.DialTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("switch %s: connect to %s: %w", s.Name, addr, err)
	}
	_ = conn.SetDeadline(time.Now().Add(g.DialTimeout))
	c, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("switch %s: SSH login to %s as %s: %w", s.Name, addr, s.Get("username"), err)
	}
	_ = conn.SetDeadline(time.Time{})
	client := ssh.NewClient(c, chans, reqs)
	sess, err := client.NewSession()
	if err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("switch %s: open session: %w", s.Name, err)
	}
	is := &iosSession{client: client, sess: sess, out: make(chan []byte, 16)}
	if err := is.start(); err != nil {
		is.close()
		return nil, fmt.Errorf("switch %s: start shell: %w", s.Name, err)
	}
	return is, nil
}

func authMethods(s *SwitchConfig) ([]ssh.AuthMethod, error) {
	var auth []ssh.AuthMethod
	if kf := s.Get("key_file"); kf != "" {
		pem, err := os.ReadFile(kf)
		if err != nil {
			return nil, fmt.Errorf("switch %s: read key_file: %w", s.Name, err)
		}
		signer, err := ssh.ParsePrivateKey(pem)
		if err != nil {
			return nil, fmt.Errorf("switch %s: parse key_file %s: %w", s.Name, kf, err)
		}
		auth = append(auth, ssh.PublicKeys(signer))
	}
	if pw, ok := s.Options["password"]; ok {
		auth = append(auth, ssh.Password(pw), ssh.KeyboardInteractive(func(_, _ string, qs []string, _ []bool) ([]string, error) {
			answers := make([]string, len(qs))
			for i := range qs {
				answers[i] = pw
			}
			return answers, nil
		}))
	}
	return auth, nil
}

func (is *iosSession) start() error {
	in, err := is.sess.StdinPipe()
	if err != nil {
		return fmt.Errorf("stdin: %w", err)
	}
	out, err := is.sess.StdoutPipe()
	if err != nil {
		return fmt.Errorf("stdout: %w", err)
	}
	is.in = in
	if err := is.sess.RequestPty("vt100", 24, 511, ssh.TerminalModes{ssh.ECHO: 1}); err != nil {
		return fmt.Errorf("pty: %w", err)
	}
	if err := is.sess.Shell(); err != nil {
		return fmt.Errorf("shell: %w", err)
	}
	go func() {
		defer close(is.out)
		for {
			b := make([]byte, 4096)
			n, err := out.Read(b)
			if n > 0 {
				is.out <- b[:n]
			}
			if err != nil {
				return
			}
		}
	}()
	return nil
}

func (is *iosSession) close() {
	is.once.Do(func() {
		_ = is.sess.Close()
		_ = is.client.Close()
	})
}

// expect reads until the output since the last call ends with pattern,
// and returns it. The session's close (its deadline) ends a wait.
func (is *iosSession) expect(pattern *regexp.Regexp) (string, error) {
	for {
		text := strings.TrimRight(strings.ReplaceAll(is.buf.String(), "\r", ""), "\n")
		if pattern.MatchString(text) {
			is.buf.Reset()
			return text, nil
		}
		chunk, ok := <-is.out
		if !ok {
			return text, errors.New("connection closed by the switch")
		}
		is.buf.Write(chunk)
	}
}

// send writes one line and waits for pattern.
func (is *iosSession) send(line string, pattern *regexp.Regexp) (string, error) {
	if _, err := io.WriteString(is.in, line+"\n"); err != nil {
		return "", fmt.Errorf("send %q: %w", line, err)
	}
	out, err := is.expect(pattern)
	if err != nil {
		return out, fmt.Errorf("after %q: %w", line, err)
	}
	return out, nil
}

// run is netmiko's session preparation, enable, send_config_set and
// save_config for Cisco IOS.
func (is *iosSession) run(s *SwitchConfig, cmds []string) error {
	// Each line sent gets exactly one prompt back, so waiting for the
	// login's prompt first keeps the reads in step with the commands.
	prompt, err := is.expect(iosPrompt)
	if err != nil {
		return fmt.Errorf("no prompt after login: %w", err)
	}
	if _, err := is.send("terminal length 0", iosPrompt); err != nil {
		return err
	}
	if strings.HasSuffix(prompt, ">") {
		out, err := is.send("enable", enableAnswer)
		if err != nil {
			return err
		}
		if passwordPrompt.MatchString(out) {
			if out, err = is.send(s.Get("enable_secret"), iosPrompt); err != nil {
				return err
			}
		}
		if !strings.HasSuffix(out, "#") {
			return errors.New("failed to enter enable mode; check the switch's enable_secret")
		}
	}
	if _, err := is.send("configure terminal", iosPrompt); err != nil {
		return err
	}
	var output strings.Builder
	for _, c := range cmds {
		out, err := is.send(c, iosPrompt)
		output.WriteString(out + "\n")
		if err != nil {
			return err
		}
		for _, p := range iosErrorPatterns {
			if strings.Contains(out, p) {
				_, _ = is.send("end", iosPrompt)
				return fmt.Errorf("Found invalid configuration in device response. Operation: %s. Output: %s", c, strings.TrimSpace(out))
			}
		}
	}
	if _, err := is.send("end", iosPrompt); err != nil {
		return err
	}
	if persist(s) {
		out, err := is.send("write mem", iosPrompt)
		if err != nil {
			return err
		}
		if !strings.Contains(out, "[OK]") {
			return fmt.Errorf("saving the configuration failed: %s", strings.TrimSpace(out))
		}
	}
	_, _ = io.WriteString(is.in, "exit\n")
	return nil
}

// persist is the switch's persist option; master's translator makes an
// unset one false.
func persist(s *SwitchConfig) bool {
	v, err := strconv.ParseBool(strings.ToLower(s.Get("persist")))
	return err == nil && v
}
