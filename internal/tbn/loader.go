package tbn

import (
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/openkeel/ironic/internal/errs"
)

// Loader holds the traits of [conductor]/trait_based_networking_config_file
// and re-reads the file whenever its modification time changes (upstream's
// ConfigLoader), so an operator edits traits without a restart.
type Loader struct {
	path string
	log  *slog.Logger

	mu     sync.Mutex
	mtime  time.Time
	seen   bool
	traits []*NetworkTrait
	valid  bool
}

// NewLoader watches the file at path; log may be nil.
func NewLoader(path string, log *slog.Logger) *Loader {
	if log == nil {
		log = slog.Default()
	}
	return &Loader{path: path, log: log}
}

// Start is what the conductor does at start when trait-based networking is
// enabled (upstream's base_manager): load the file, and refuse to start
// with IncorrectConfiguration when it cannot be read or is invalid.
func Start(path string, log *slog.Logger) (*Loader, error) {
	l := NewLoader(path, log)
	if _, err := l.Traits(); err != nil || !l.Valid() {
		if err != nil {
			l.log.Error("Failed to load Trait Based Networking configuration file", "file", path, "error", err)
		}
		return nil, errs.New(errs.ClassIncorrectConfiguration, map[string]any{
			"error": "Trait Based Networking configuration file could not be loaded or is invalid."})
	}
	return l, nil
}

// Valid reports whether the file last read was valid.
func (l *Loader) Valid() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.valid
}

// Traits returns the file's traits, re-reading it first when its
// modification time changed. As upstream: a file that can no longer be
// stat'ed is an error; one that fails validation leaves no traits (its
// reasons are logged); one that cannot be read keeps the traits read
// before.
func (l *Loader) Traits() ([]*NetworkTrait, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fi, err := os.Stat(l.path)
	if err != nil {
		return nil, fmt.Errorf("trait based networking configuration: %w", err)
	}
	if !l.seen || !fi.ModTime().Equal(l.mtime) {
		l.seen, l.mtime = true, fi.ModTime()
		l.load()
	}
	return l.traits, nil
}

func (l *Loader) load() {
	l.log.Info("Loading Trait Based Networking configuration", "file", l.path)
	data, err := os.ReadFile(l.path)
	if err != nil {
		l.valid = false
		l.log.Error("Failed to load Trait Based Networking configuration file", "file", l.path, "error", err)
		return
	}
	traits, reasons := ParseConfig(data)
	if len(reasons) > 0 {
		l.valid, l.traits = false, nil
		l.log.Error("Configuration file for Trait Based Networking is invalid. Reasons follow:", "file", l.path)
		for _, r := range reasons {
			l.log.Error(r)
		}
		return
	}
	l.valid, l.traits = true, traits
	l.log.Info("Successfully loaded and parsed configuration for Trait Based Networking.")
}
