// Package service starts the server processes of multi-process tests
// (Debian's Ironic, our binary): output kept in a log file shown when the
// test fails, stopped with SIGTERM as a service manager would, killed
// only when that does not end it in time.
package service

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Process is a server a test started; its output is in dir/<Name>.log.
type Process struct {
	Name string
	Log  string
	// StopTimeout is how long Stop waits after SIGTERM before killing.
	StopTimeout time.Duration
	cmd         *exec.Cmd
	done        chan struct{}
}

// logTail is how much of the log a failed test shows.
const logTail = 6000

// Start runs argv in dir; the process is stopped at the test's end if it
// was not before, and its log's end is shown when the test failed.
func Start(t *testing.T, dir, name string, argv ...string) *Process {
	t.Helper()
	p := &Process{Name: name, Log: filepath.Join(dir, name+".log"), StopTimeout: 90 * time.Second, done: make(chan struct{})}
	f, err := os.Create(p.Log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		f.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Stop(t)
		if t.Failed() {
			b, _ := os.ReadFile(p.Log)
			if len(b) > logTail {
				b = b[len(b)-logTail:]
			}
			t.Logf("--- %s output (end):\n%s", name, b)
		}
	})
	return p
}

// Stop ends the process with SIGTERM, killing it after StopTimeout.
func (p *Process) Stop(t *testing.T) {
	t.Helper()
	if p.Exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(p.StopTimeout):
		t.Errorf("%s did not stop on SIGTERM within %s; killed", p.Name, p.StopTimeout)
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Exited tells whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}
