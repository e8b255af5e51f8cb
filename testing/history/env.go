package history

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// EnvInt reads a positive integer setting of a history test from the
// environment, def when unset.
func EnvInt(t testing.TB, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// EnvDuration reads a positive duration setting of a history test from
// the environment, def when unset.
func EnvDuration(t testing.TB, name string, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive duration", name, v)
	}
	return d
}
