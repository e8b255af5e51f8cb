// Package respond writes the answers the resource handlers build with
// apiutil: a handler returns respond.JSON(w, status)(convert(...)), so the
// error of building the document and the writing of it are said once.
package respond

import (
	"net/http"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
)

// JSON answers status with the document its result function is given,
// or returns the error it is given instead.
func JSON(w http.ResponseWriter, status int) func(*apiutil.Dict, error) error {
	return func(d *apiutil.Dict, err error) error {
		if err != nil {
			return err
		}
		return api.WriteJSON(w, status, d)
	}
}

// NoContent answers 204, or returns err when there is one.
func NoContent(w http.ResponseWriter, err error) error {
	if err != nil {
		return err
	}
	api.WriteEmpty(w, http.StatusNoContent)
	return nil
}
