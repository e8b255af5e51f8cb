package respond

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/openkeel/ironic/internal/api/apiutil"
)

func TestJSON(t *testing.T) {
	d := apiutil.NewDict()
	d.Set("b", 1)
	d.Set("a", nil)
	w := httptest.NewRecorder()
	if err := JSON(w, http.StatusCreated)(d, nil); err != nil {
		t.Fatal(err)
	}
	if w.Code != http.StatusCreated || w.Body.String() != `{"b": 1, "a": null}` {
		t.Errorf("%d %s", w.Code, w.Body)
	}
	boom := errors.New("boom")
	w = httptest.NewRecorder()
	if err := JSON(w, http.StatusOK)(nil, boom); err != boom || w.Body.Len() != 0 {
		t.Errorf("error answer: %v, wrote %q", err, w.Body)
	}
}

func TestNoContent(t *testing.T) {
	w := httptest.NewRecorder()
	if err := NoContent(w, nil); err != nil || w.Code != http.StatusNoContent || w.Body.Len() != 0 {
		t.Errorf("%v %d %q", err, w.Code, w.Body)
	}
	boom := errors.New("boom")
	w = httptest.NewRecorder()
	if err := NoContent(w, boom); err != boom || w.Body.Len() != 0 {
		t.Errorf("error answer: %v, wrote %q", err, w.Body)
	}
}
