package apiutil

import (
	"fmt"

	"github.com/openkeel/ironic/internal/store"
)

// CreateErr maps the store's refusal to create rec (what names it) to
// upstream's class (AlreadyExists, DuplicateName, MAC taken…).
func CreateErr(err error, what string, rec any) error {
	if mapped := store.Ironic(err, rec); mapped != err {
		return mapped
	}
	return fmt.Errorf("create %s: %w", what, err)
}
