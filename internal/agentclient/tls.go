package agentclient

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/openkeel/ironic/internal/errs"
)

// CheckCallbackURL is the heartbeat-side half of [agent]/require_tls:
// upstream enforces it when the agent announces its callback URL
// (conductor manager's heartbeat), not when commands are sent, so an
// agent_url already recorded keeps working after the option changes.
func CheckCallbackURL(requireTLS bool, callbackURL string) error {
	if requireTLS && callbackURL != "" && !strings.HasPrefix(callbackURL, "https://") {
		return errs.InvalidParameterValue("TLS is required by configuration")
	}
	return nil
}

// verify is requests' verify argument: check against the system roots,
// do not check, or check against the CA bundle at a path.
type verify struct {
	skip bool
	path string
}

// verifyFor resolves the CA setting as upstream's _get_verify does: the
// node's own setting (Target.VerifyCA), else [agent]/verify_ca; strings
// are strict booleans or existing paths.
func verifyFor(nodeCA any, conf string) (verify, error) {
	value := nodeCA
	if value == nil {
		value = conf
	}
	switch v := value.(type) {
	case bool:
		return verify{skip: !v}, nil
	case string:
		if b, ok := strictBool(v); ok {
			return verify{skip: !b}, nil
		}
		if _, err := os.Stat(v); err != nil {
			return verify{}, errs.InvalidParameterValue(fmt.Sprintf("Agent CA %s is neither a path nor a boolean", v))
		}
		return verify{path: v}, nil
	default:
		return verify{}, errs.InvalidParameterValue(fmt.Sprintf("Agent CA %v is neither a path nor a boolean", v))
	}
}

// strictBool is oslo's bool_from_string(strict=True).
func strictBool(s string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "t", "true", "on", "y", "yes":
		return true, true
	case "0", "f", "false", "off", "n", "no":
		return false, true
	}
	return false, false
}

// maxTransports bounds the cache: per-node CA files make one transport
// per node with auto-TLS.
const maxTransports = 256

type transportCache struct {
	mu     sync.Mutex
	byKey  map[string]*http.Client
	minTLS uint16
}

func newTransportCache(minVersion string) *transportCache {
	c := &transportCache{byKey: map[string]*http.Client{}}
	switch minVersion {
	case "1.2":
		c.minTLS = tls.VersionTLS12
	case "1.3":
		c.minTLS = tls.VersionTLS13
	}
	return c
}

// get returns the HTTP client for a verify setting. A CA file is keyed by
// its modification time and size as well, because a new ramdisk session
// rewrites the node's certificate in place.
func (c *transportCache) get(v verify, timeout time.Duration) (*http.Client, error) {
	key := "system"
	switch {
	case v.skip:
		key = "insecure"
	case v.path != "":
		st, err := os.Stat(v.path)
		if err != nil {
			return nil, fmt.Errorf("agent CA %s: %w", v.path, err)
		}
		key = fmt.Sprintf("ca:%s:%d:%d", v.path, st.ModTime().UnixNano(), st.Size())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if hc, ok := c.byKey[key]; ok {
		return hc, nil
	}
	cfg := &tls.Config{MinVersion: c.minTLS}
	if v.skip {
		cfg.InsecureSkipVerify = true
	} else if v.path != "" {
		pool, err := loadCAs(v.path)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if len(c.byKey) >= maxTransports {
		for k, hc := range c.byKey {
			hc.CloseIdleConnections()
			delete(c.byKey, k)
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	// The agent's proxy is never the conductor's: commands go straight to
	// the ramdisk on the provisioning network.
	tr.Proxy = nil
	hc := &http.Client{Transport: tr, Timeout: timeout}
	c.byKey[key] = hc
	return hc, nil
}

// loadCAs reads a CA bundle file, or every file of a directory as
// requests does with a CA directory.
func loadCAs(path string) (*x509.CertPool, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("agent CA %s: %w", path, err)
	}
	files := []string{path}
	if st.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("agent CA directory %s: %w", path, err)
		}
		files = files[:0]
		for _, e := range entries {
			if !e.IsDir() {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
	}
	pool := x509.NewCertPool()
	for _, f := range files {
		pem, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("agent CA %s: %w", f, err)
		}
		if !pool.AppendCertsFromPEM(pem) && !st.IsDir() {
			return nil, fmt.Errorf("agent CA %s: no PEM certificate found", f)
		}
	}
	return pool, nil
}

func (c *transportCache) closeIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, hc := range c.byKey {
		hc.CloseIdleConnections()
	}
}
