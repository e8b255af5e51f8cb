package conductor

import (
	"context"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/rpc"
)

// Upstream's object_* calls are the oslo.versionedobjects indirection API
// that Python services use to run object methods on a conductor. No Go
// component uses them, and the serialised Python objects they carry have
// no counterpart here, so they are refused as a driver would refuse an
// unsupported extension.

func objectsUnsupported() error {
	return errs.NewMessage(errs.ClassUnsupportedDriverExtension, "Versioned object indirection is not supported by this conductor.")
}

// ObjectClassActionVersions is refused (see above).
func (c *Conductor) ObjectClassActionVersions(context.Context, string, rpc.ObjectClassActionVersionsArgs) (any, error) {
	return nil, objectsUnsupported()
}

// ObjectAction is refused (see above).
func (c *Conductor) ObjectAction(context.Context, string, rpc.ObjectActionArgs) (any, error) {
	return nil, objectsUnsupported()
}

// ObjectBackportVersions is refused (see above).
func (c *Conductor) ObjectBackportVersions(context.Context, string, any, map[string]string) (any, error) {
	return nil, objectsUnsupported()
}
