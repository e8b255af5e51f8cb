package requestctx_test

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/requestctx"
)

func TestRequestIDs(t *testing.T) {
	cases := []struct {
		name         string
		ctx          context.Context
		id, globalID string
	}{
		{"empty", context.Background(), "", ""},
		{"own id only", requestctx.WithRequestID(context.Background(), "req-a"), "req-a", ""},
		{"global only", requestctx.WithGlobalRequestID(context.Background(), "req-g"), "", "req-g"},
		{"both", requestctx.WithGlobalRequestID(requestctx.WithRequestID(context.Background(), "req-a"), "req-g"), "req-a", "req-g"},
		{"inner wins", requestctx.WithRequestID(requestctx.WithRequestID(context.Background(), "req-a"), "req-b"), "req-b", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := requestctx.RequestID(c.ctx); got != c.id {
				t.Errorf("RequestID = %q, want %q", got, c.id)
			}
			if got := requestctx.GlobalRequestID(c.ctx); got != c.globalID {
				t.Errorf("GlobalRequestID = %q, want %q", got, c.globalID)
			}
		})
	}
}
