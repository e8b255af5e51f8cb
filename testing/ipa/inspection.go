package ipa

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// IPA's retry of the inspection callback (inspector.py): 5 attempts,
// exponential wait between 5 and 30 seconds, on connection errors, 409
// and 5xx.
const (
	inspectionAttempts = 5
	inspectionWaitMin  = 5 * time.Second
	inspectionWaitMax  = 30 * time.Second
)

// ContinueInspection is IPA's call_inspector against Ironic: POST
// /v1/continue_inspection with no microversion header, the body being the
// collectors' data (pluginData) with "inventory" and "error" (pluginData's
// "error", else null) set. It returns the decoded answer (lookup's shape
// when Ironic has a node for the agent); any other status of 400 or more is
// an *APIError, which IPA logs before falling back to lookup.
func (c *IronicClient) ContinueInspection(ctx context.Context, inventory, pluginData map[string]any) (map[string]any, error) {
	body := map[string]any{}
	for k, v := range pluginData {
		body[k] = v
	}
	body["inventory"] = inventory
	if _, ok := body["error"]; !ok {
		body["error"] = nil
	}
	wait := inspectionWaitMin
	for attempt := 1; ; attempt++ {
		resp, data, err := c.request(ctx, http.MethodPost, "/v1/continue_inspection", body, nil)
		retry := err != nil || resp.StatusCode >= 500 || resp.StatusCode == http.StatusConflict
		if !retry || attempt == inspectionAttempts {
			if err != nil {
				return nil, err
			}
			if resp.StatusCode >= 400 {
				return nil, &APIError{Status: resp.StatusCode, Text: errorText(resp.StatusCode, data)}
			}
			var out map[string]any
			if err := json.Unmarshal(data, &out); err != nil {
				return nil, fmt.Errorf("ipa: continue_inspection answer: %w", err)
			}
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("ipa: continue_inspection: %w", ctx.Err())
		case <-time.After(wait):
		}
		wait = min(wait*2, inspectionWaitMax)
	}
}
