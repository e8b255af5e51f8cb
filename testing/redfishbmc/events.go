package redfishbmc

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

const (
	eventServiceURI  = root + "/EventService"
	subscriptionsURI = eventServiceURI + "/Subscriptions"
)

// eventTypes are the EventTypesForSubscription the emulator offers.
var eventTypes = []string{"Alert", "ResourceAdded", "ResourceRemoved", "ResourceUpdated", "StatusChange"}

// subscription is an EventDestination.
type subscription struct {
	ID          string
	Destination string
	Protocol    string
	Context     string
	EventTypes  []string
	HTTPHeaders []any
}

// Subscription is what tests read of an event subscription.
type Subscription struct {
	ID, Destination, Protocol, Context string
	EventTypes                         []string
}

// Subscriptions lists the event subscriptions, oldest first.
func (b *BMC) Subscriptions() []Subscription {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Subscription, 0, len(b.subs))
	for _, s := range b.subs {
		out = append(out, Subscription{ID: s.ID, Destination: s.Destination, Protocol: s.Protocol, Context: s.Context,
			EventTypes: slices.Clone(s.EventTypes)})
	}
	return out
}

func renderSubscription(s *subscription) map[string]any {
	// HttpHeaders are write-only, as the Redfish schema says.
	return map[string]any{
		"@odata.id": subscriptionsURI + "/" + s.ID, "@odata.type": "#EventDestination.v1_9_0.EventDestination",
		"Id": s.ID, "Name": "Event Subscription " + s.ID, "Destination": s.Destination, "Protocol": s.Protocol,
		"Context": s.Context, "EventTypes": s.EventTypes, "SubscriptionType": "RedfishEvent",
	}
}

// eventRoute answers the EventService and its Subscriptions collection
// (POST creates, DELETE of a member removes it).
func (b *BMC) eventRoute(r *http.Request, path string, body []byte) response {
	switch path {
	case eventServiceURI:
		return b.getOnly(r, func() any {
			return map[string]any{"@odata.id": path, "@odata.type": "#EventService.v1_7_0.EventService",
				"Id": "EventService", "Name": "Event Service", "ServiceEnabled": true,
				"EventTypesForSubscription": eventTypes, "Subscriptions": link(subscriptionsURI)}
		})
	case subscriptionsURI:
		switch r.Method {
		case http.MethodGet:
			members := make([]string, 0, len(b.subs))
			for _, s := range b.subs {
				members = append(members, subscriptionsURI+"/"+s.ID)
			}
			return response{status: http.StatusOK, body: collection(path, "EventDestinationCollection", members...)}
		case http.MethodPost:
			return b.createSubscription(body)
		}
		return methodNotAllowed()
	}
	id, ok := strings.CutPrefix(path, subscriptionsURI+"/")
	if !ok {
		return notFound(path)
	}
	i := slices.IndexFunc(b.subs, func(s *subscription) bool { return s.ID == id })
	if i < 0 {
		return notFound(path)
	}
	switch r.Method {
	case http.MethodGet:
		return response{status: http.StatusOK, body: renderSubscription(b.subs[i])}
	case http.MethodDelete:
		b.subs = slices.Delete(b.subs, i, i+1)
		return noContent
	}
	return methodNotAllowed()
}

func (b *BMC) createSubscription(body []byte) response {
	var req struct {
		Destination string
		Protocol    string
		Context     string
		EventTypes  []string
		HTTPHeaders []any `json:"HttpHeaders"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return badRequest("Base.1.8.MalformedJSON", "The request body is not valid JSON: %v", err)
	}
	if !strings.HasPrefix(req.Destination, "http://") && !strings.HasPrefix(req.Destination, "https://") {
		return badRequest("Base.1.8.PropertyValueFormatError", "The value %s for the property Destination is of a different format than the property can accept.", req.Destination)
	}
	if req.Protocol != "Redfish" {
		return badRequest("Base.1.8.PropertyValueNotInList", "The value %s for the property Protocol is not in the list of acceptable values.", req.Protocol)
	}
	for _, t := range req.EventTypes {
		if !slices.Contains(eventTypes, t) {
			return badRequest("Base.1.8.PropertyValueNotInList", "The value %s for the property EventTypes is not in the list of acceptable values.", t)
		}
	}
	b.nextSub++
	s := &subscription{ID: strconv.Itoa(b.nextSub), Destination: req.Destination, Protocol: req.Protocol,
		Context: req.Context, EventTypes: req.EventTypes, HTTPHeaders: req.HTTPHeaders}
	b.subs = append(b.subs, s)
	loc := subscriptionsURI + "/" + s.ID
	return response{status: http.StatusCreated, headers: map[string]string{"Location": loc}, body: renderSubscription(s)}
}
