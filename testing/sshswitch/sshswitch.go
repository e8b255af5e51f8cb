// Package sshswitch is a Cisco IOS-like switch reached over SSH on
// 127.0.0.1, for the ironic-networking switch drivers' tests: password
// login, user EXEC then "enable" with a secret, "configure terminal" and
// the interface/VLAN commands networking-generic-switch sends, answered
// with IOS's prompts and messages. It records every line it receives and
// each port's VLAN assignments, can answer slowly, and can be told to
// reject a command or drop the connection.
package sshswitch

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/openkeel/ironic/internal/clock"
)

// Options configure the switch.
type Options struct {
	// Hostname is the prompt's name ("sw1" when empty).
	Hostname string
	// User and Password are the login; EnableSecret the enable secret
	// ("" means the login lands in privileged EXEC directly).
	User, Password, EnableSecret string
	// Delay is how long the switch takes to answer each line.
	Delay time.Duration
}

// PortState is one interface's switchport configuration.
type PortState struct {
	Mode       string
	AccessVLAN int
	NativeVLAN int
	Allowed    []int
}

// Switch is a running fixture.
type Switch struct {
	// Port is the TCP port on 127.0.0.1.
	Port int
	opts Options
	ln   net.Listener

	mu       sync.Mutex
	lines    []string
	ports    map[string]*PortState
	history  map[string][]int
	vlans    map[int]bool
	failOn   map[string]bool
	dropOn   map[string]bool
	logins   int
	saved    int
	sessions sync.WaitGroup
	// stopped ends with the test: a session waiting out Delay leaves then.
	stopped context.Context
}

// Start listens on 127.0.0.1 and stops when the test ends.
func Start(t testing.TB, o Options) *Switch {
	t.Helper()
	if o.Hostname == "" {
		o.Hostname = "sw1"
	}
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Switch{Port: ln.Addr().(*net.TCPAddr).Port, opts: o, ln: ln, ports: map[string]*PortState{},
		history: map[string][]int{}, vlans: map[int]bool{1: true}, failOn: map[string]bool{}, dropOn: map[string]bool{}}
	cfg := &ssh.ServerConfig{PasswordCallback: func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
		if c.User() == o.User && string(pw) == o.Password {
			return nil, nil
		}
		return nil, fmt.Errorf("password rejected for %s", c.User())
	}}
	cfg.AddHostKey(signer)
	stopped, stop := context.WithCancel(context.Background())
	s.stopped = stopped
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.sessions.Add(1)
			go func() {
				defer s.sessions.Done()
				s.serve(conn, cfg)
			}()
		}
	}()
	t.Cleanup(func() {
		stop()
		_ = ln.Close()
		<-done
		s.sessions.Wait()
	})
	return s
}

// Address is "127.0.0.1".
func (s *Switch) Address() string { return "127.0.0.1" }

// Lines are every line received after login, in order, across sessions.
func (s *Switch) Lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.lines)
}

// PortState is interface name's configuration now.
func (s *Switch) PortState(name string) PortState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.ports[name]; p != nil {
		c := *p
		c.Allowed = slices.Clone(p.Allowed)
		return c
	}
	return PortState{AccessVLAN: 1}
}

// AccessVLANs are the access VLANs interface name was put on, in order.
func (s *Switch) AccessVLANs(name string) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.history[name])
}

// Logins counts the successful SSH sessions.
func (s *Switch) Logins() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logins
}

// Saves counts "write mem".
func (s *Switch) Saves() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saved
}

// RejectCommand makes the switch answer every line containing substr
// with IOS's "% Invalid input" until Heal.
func (s *Switch) RejectCommand(substr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failOn[substr] = true
}

// DropOn makes the switch close the connection on a line containing
// substr, without answering, until Heal.
func (s *Switch) DropOn(substr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropOn[substr] = true
}

// Heal ends the injected faults.
func (s *Switch) Heal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.failOn)
	clear(s.dropOn)
}

func (s *Switch) serve(conn net.Conn, cfg *ssh.ServerConfig) {
	defer conn.Close()
	sc, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		return
	}
	defer sc.Close()
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only sessions")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			return
		}
		shell := make(chan struct{})
		go func() {
			started := false
			for r := range creqs {
				ok := r.Type == "pty-req" || r.Type == "shell" || r.Type == "window-change" || r.Type == "env"
				if r.WantReply {
					_ = r.Reply(ok, nil)
				}
				if r.Type == "shell" && !started {
					started = true
					close(shell)
				}
			}
		}()
		<-shell
		s.mu.Lock()
		s.logins++
		s.mu.Unlock()
		s.cli(ch)
		_ = ch.Close()
		return
	}
}

// cli modes and their prompt suffixes.
const (
	modeUser   = ">"
	modeEnable = "#"
	modeConfig = "(config)#"
	modeIf     = "(config-if)#"
	modeVLAN   = "(config-vlan)#"
)

const invalidInput = "                ^\r\n% Invalid input detected at '^' marker.\r\n"

func (s *Switch) cli(ch ssh.Channel) {
	mode := modeEnable
	if s.opts.EnableSecret != "" {
		mode = modeUser
	}
	var iface string
	awaitingSecret := false
	w := func(text string) { _, _ = io.WriteString(ch, text) }
	w("\r\nUser Access Verification\r\n\r\n" + s.opts.Hostname + mode)
	var line []byte
	buf := make([]byte, 1)
	for {
		if _, err := ch.Read(buf); err != nil {
			return
		}
		c := buf[0]
		if c != '\n' && c != '\r' {
			line = append(line, c)
			continue
		}
		if c == '\r' {
			// A CR LF pair is one end of line.
			continue
		}
		cmd := strings.TrimSpace(string(line))
		line = line[:0]
		if clock.Sleep(s.stopped, s.opts.Delay) != nil {
			return
		}
		if awaitingSecret {
			awaitingSecret = false
			w("\r\n")
			if cmd == s.opts.EnableSecret {
				mode = modeEnable
			} else {
				w("% Access denied\r\n\r\n")
			}
			w(s.opts.Hostname + mode)
			continue
		}
		w(cmd + "\r\n")
		s.mu.Lock()
		s.lines = append(s.lines, cmd)
		drop, reject := false, false
		for sub := range s.dropOn {
			drop = drop || strings.Contains(cmd, sub)
		}
		for sub := range s.failOn {
			reject = reject || strings.Contains(cmd, sub)
		}
		s.mu.Unlock()
		if drop {
			return
		}
		if reject {
			w(invalidInput + s.opts.Hostname + mode)
			continue
		}
		var out string
		var exit bool
		mode, iface, out, exit, awaitingSecret = s.exec(mode, iface, cmd)
		if exit {
			return
		}
		if awaitingSecret {
			w(out)
			continue
		}
		w(out + s.opts.Hostname + mode)
	}
}

// exec runs one command line in mode and returns the new mode and
// interface, the output, whether the session ends and whether the switch
// now waits for the enable secret.
func (s *Switch) exec(mode, iface, cmd string) (string, string, string, bool, bool) {
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return mode, iface, "", false, false
	}
	switch mode {
	case modeUser, modeEnable:
		switch {
		case cmd == "enable" && mode == modeUser:
			return mode, iface, "Password: ", false, true
		case cmd == "enable":
			return mode, iface, "", false, false
		case f[0] == "terminal":
			return mode, iface, "", false, false
		case cmd == "exit" || cmd == "logout":
			return mode, iface, "", true, false
		case mode == modeEnable && (cmd == "configure terminal" || cmd == "conf t"):
			return modeConfig, "", "Enter configuration commands, one per line.  End with CNTL/Z.\r\n", false, false
		case mode == modeEnable && (cmd == "write mem" || cmd == "write memory" || cmd == "copy running-config startup-config"):
			s.mu.Lock()
			s.saved++
			s.mu.Unlock()
			return mode, iface, "Building configuration...\r\n[OK]\r\n", false, false
		}
		return mode, iface, invalidInput, false, false
	}
	switch {
	case cmd == "end":
		return modeEnable, "", "", false, false
	case cmd == "exit":
		if mode == modeConfig {
			return modeEnable, "", "", false, false
		}
		return modeConfig, "", "", false, false
	case f[0] == "interface" && len(f) == 2:
		return modeIf, f[1], "", false, false
	case f[0] == "vlan" && len(f) == 2:
		if n, ok := vlanID(f[1]); ok {
			s.mu.Lock()
			s.vlans[n] = true
			s.mu.Unlock()
			return modeVLAN, "", "", false, false
		}
	case f[0] == "no" && len(f) == 3 && f[1] == "vlan":
		if n, ok := vlanID(f[2]); ok {
			s.mu.Lock()
			delete(s.vlans, n)
			s.mu.Unlock()
			return modeConfig, "", "", false, false
		}
	case mode == modeVLAN && f[0] == "name":
		return mode, iface, "", false, false
	case mode == modeIf:
		if out, ok := s.switchport(iface, f); ok {
			return mode, iface, out, false, false
		}
	}
	return mode, iface, invalidInput, false, false
}

// switchport applies an interface command; false when IOS would reject it.
func (s *Switch) switchport(iface string, f []string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.ports[iface]
	if p == nil {
		p = &PortState{AccessVLAN: 1, NativeVLAN: 1}
		s.ports[iface] = p
	}
	neg := f[0] == "no"
	if neg {
		f = f[1:]
	}
	if len(f) < 2 || f[0] != "switchport" {
		return "", false
	}
	args := strings.Join(f[1:], " ")
	last, lastOK := vlanID(f[len(f)-1])
	switch {
	case args == "mode access" || args == "mode trunk":
		if neg {
			p.Mode = ""
		} else {
			p.Mode = f[2]
		}
		return "", true
	case strings.HasPrefix(args, "access vlan"):
		if neg {
			p.AccessVLAN = 1
			return "", true
		}
		if !lastOK || len(f) != 4 {
			return "", false
		}
		p.AccessVLAN = last
		s.history[iface] = append(s.history[iface], last)
		if !s.vlans[last] {
			s.vlans[last] = true
			return "% Access VLAN does not exist. Creating vlan " + strconv.Itoa(last) + "\r\n", true
		}
		return "", true
	case strings.HasPrefix(args, "trunk native vlan"):
		if neg {
			p.NativeVLAN = 1
			return "", true
		}
		if !lastOK {
			return "", false
		}
		p.NativeVLAN = last
		return "", true
	case args == "trunk allowed vlan none" && !neg:
		p.Allowed = []int{}
		return "", true
	case (strings.HasPrefix(args, "trunk allowed vlan add ") || strings.HasPrefix(args, "trunk allowed vlan remove ")) && !neg && lastOK:
		p.Allowed = slices.DeleteFunc(p.Allowed, func(v int) bool { return v == last })
		if f[4] == "add" {
			p.Allowed = append(p.Allowed, last)
			slices.Sort(p.Allowed)
		}
		return "", true
	}
	return "", false
}

func vlanID(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 1 && n <= 4094
}
