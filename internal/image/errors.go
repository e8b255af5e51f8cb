package image

import "github.com/openkeel/ironic/internal/errs"

func isErrsError(err error) bool {
	_, ok := errs.As(err)
	return ok
}
