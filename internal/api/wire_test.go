package api

import (
	"net/http"
	"strconv"
	"testing"
)

// echoQuery answers 200 with the query string the handler was given.
func echoQuery(w http.ResponseWriter, r *http.Request, _ *RequestContext) error {
	return WriteJSON(w, http.StatusOK, Object{{"query", r.URL.RawQuery}})
}

// fault is the body of an Ironic fault with faultcode Client.
func fault(msg string) string {
	return `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"` + msg + `\", \"debuginfo\": null}"}`
}

// webob is the body of an exception raised while routing.
func webob(code int, title, desc string) string {
	return `{"error_message": "{\"code\": ` + strconv.Itoa(code) + `, \"title\": \"` + title + `\", \"description\": \"` + desc + `\"}"}`
}

// TestWireRows replays the rows of issue #19 the router answers
// (malformed path or method, lenient input, error body shape): each
// expectation was observed from upstream 21.4 (Debian python3-ironic
// 21.4.4, noauth, fake-hardware) unless its comment names master's source.
func TestWireRows(t *testing.T) {
	echo := map[string]HandlerFunc{}
	for _, id := range []string{"GET /v1/nodes", "GET /v1/nodes/detail", "GET /v1/nodes/{node_ident}",
		"GET /v1/nodes/{node_ident}/states", "DELETE /v1/nodes/{node_ident}", "POST /v1/nodes"} {
		echo[id] = echoQuery
	}
	h := New(Deps{Logger: quiet, Handlers: echo, Authorize: AllowAll})
	type hdr = map[string]string
	for _, tc := range []struct {
		name, method, path, version string
		header                      hdr
		body                        string
		status                      int
		versioned                   bool // the answer carries the version headers
		want                        string
	}{
		// malformed path or method
		{"collection DELETE", "DELETE", "/v1/nodes", "", nil, "", 400, true,
			fault("Missing mandatory parameter: node_ident")},
		{"collection PATCH", "PATCH", "/v1/nodes", "1.82", nil, "", 400, true,
			fault("Missing mandatory parameter: node_ident")},
		{"collection DELETE chassis", "DELETE", "/v1/chassis", "", nil, "", 400, true,
			fault("Missing mandatory parameter: chassis_uuid")},
		// 21.4 names port_uuid; master's PortsController.patch takes
		// port_ident (ironic/api/controllers/v1/port.py).
		{"collection PATCH ports", "PATCH", "/v1/ports", "", nil, "", 400, true,
			fault("Missing mandatory parameter: port_ident")},
		{"heartbeat without node", "POST", "/v1/heartbeat", "1.82", nil, "", 400, true,
			fault("Missing mandatory parameter: node_ident")},
		// Master (inspection_rule.py) documents a bulk DELETE its
		// controller does not implement: its request_parameter_schema
		// wrapper fails with IndexError (500) on the missing parameter;
		// the 4xx is the one of every other collection DELETE.
		{"bulk DELETE of inspection rules", "DELETE", "/v1/inspection_rules", "1.96", nil, "", 400, true,
			fault("Missing mandatory parameter: inspection_rule_uuid")},
		{"POST on an object", "POST", "/v1/nodes/n1", "1.82", nil, "", 400, true,
			fault(`Schema error for node: 'n1' is not of type 'object'`)},
		{"surplus element is get_one's fields", "GET", "/v1/nodes/n1/bogus", "1.82", nil, "", 200, true,
			`{"query": "fields=bogus"}`},
		{"OPTIONS", "OPTIONS", "/v1/nodes", "", nil, "", 200, false, ""},
		{"OPTIONS below the version range", "OPTIONS", "/v1/nodes", "9.9", nil, "", 200, false, ""},
		{"double leading slash", "GET", "//v1/nodes", "", nil, "", 200, true, `{"query": ""}`},
		{"detail with a trailing slash", "GET", "/v1/nodes/detail/", "", nil, "", 404, true,
			fault("Resource could not be found.")},
		{"unknown method", "FOO", "/v1/nodes", "", nil, "", 405, false, webob(405, "Method Not Allowed", "")},
		{"DELETE with a JSON body", "DELETE", "/v1/nodes/n1", "1.82", nil, `{"a": 1}`, 400, true,
			fault("Unexpected arguments: a")},
		{"DELETE with a form body", "DELETE", "/v1/nodes/n1", "1.82",
			hdr{"Content-Type": "application/x-www-form-urlencoded"}, "x", 400, true, fault("Unexpected arguments: x")},

		// lenient input that upstream refuses
		{"Accept HTML", "GET", "/v1/nodes", "", hdr{"Accept": "text/html"}, "", 406, false,
			`{"error_message": "<html>\n <head>\n  <title>406 Not Acceptable</title>\n </head>\n <body>\n  <h1>406 Not Acceptable</h1>\n  The resource could not be generated that was acceptable to your browser\n(content of type text/html. <br /><br />\n\n </body>\n</html>"}`},
		{"Accept XML", "GET", "/v1/nodes", "", hdr{"Accept": "application/xml"}, "", 406, false,
			`{"error_message": "406 Not Acceptable\n\nThe resource could not be generated that was acceptable to your browser (content of type application/xml. \n\n "}`},
		{"Accept plain text on the root", "GET", "/", "", hdr{"Accept": "text/plain"}, "", 406, false,
			`{"error_message": "406 Not Acceptable\n\nThe resource could not be generated that was acceptable to your browser (content of type text/plain. \n\n "}`},
		{"Accept XML or anything", "GET", "/v1/nodes", "", hdr{"Accept": "application/xml, */*;q=0.1"}, "", 200, true, `{"query": ""}`},
		{"Accept unparsable", "GET", "/v1/nodes", "", hdr{"Accept": "foo"}, "", 200, true, `{"query": ""}`},
		{"repeated fields", "GET", "/v1/nodes?fields=uuid&fields=name", "1.82", nil, "", 400, true,
			fault(`Expected string for fields: ['uuid', 'name']`)},
		{"repeated limit", "GET", "/v1/nodes?limit=1&limit=2", "1.82", nil, "", 400, true,
			fault(`Expected an integer for limit: ['1', '2']`)},
		{"repeated boolean", "GET", "/v1/nodes?detail=true&detail=false", "1.82", nil, "", 400, true,
			fault(`Invalid detail: Unrecognized value '['true', 'false']', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'`)},
		{"unknown query argument", "GET", "/v1/nodes/n1/states?foo=1", "1.82", nil, "", 400, true,
			fault("Unexpected arguments: foo")},
		{"unknown query arguments", "GET", "/v1/nodes/n1/states?foo=1&bar=2", "1.82", nil, "", 400, true,
			fault("Unexpected arguments: bar, foo")},

		// error body shape
		{"malformed node identifier", "GET", "/v1/nodes/bad%20ident!", "1.82", nil, "", 400, false,
			webob(400, "Bad Request", "Expected UUID or name for node: bad ident!")},
		{"non-ASCII node identifier", "GET", "/v1/nodes/%C3%A9", "1.82", nil, "", 400, false,
			webob(400, "Bad Request", `Expected UUID or name for node: \\u00e9`)},
		{"invalid UTF-8 in the path", "GET", "/v1/nodes/%ff", "1.82", nil, "", 400, false, webob(400, "Bad Request", "")},
		{"sub-resource name as identifier", "GET", "/v1/nodes/ports", "1.82", nil, "", 404, false, webob(404, "Not Found", "")},
		// pecan reaches the attribute controllers (states, management,
		// maintenance, vendor_passthru) before NodesController._lookup, so
		// their handler checks the identifier; the heartbeat is no node
		// sub-resource at all.
		{"malformed identifier below states", "GET", "/v1/nodes/bad%20ident!/states", "1.82", nil, "", 200, true, `{"query": ""}`},
		{"malformed identifier below a controller without methods", "GET", "/v1/nodes/bad%20ident!/management", "1.82", nil, "", 400, false,
			webob(400, "Bad Request", "Expected UUID or name for node: bad ident!")},
		{"malformed identifier where states has no method", "POST", "/v1/nodes/bad%20ident!/states", "1.82", nil, "", 400, false,
			webob(400, "Bad Request", "Expected UUID or name for node: bad ident!")},
		{"controller without methods", "GET", "/v1/nodes/n1/management", "1.82", nil, "", 405, false, webob(405, "Method Not Allowed", "")},
		{"below a controller without methods", "GET", "/v1/nodes/n1/management/bogus", "1.82", nil, "", 405, false, webob(405, "Method Not Allowed", "")},
		{"driver raid controller", "GET", "/v1/drivers/fake-hardware/raid", "1.82", nil, "", 405, false, webob(405, "Method Not Allowed", "")},
		{"heartbeat collection GET", "GET", "/v1/heartbeat", "1.82", nil, "", 405, false, webob(405, "Method Not Allowed", "")},
		{"lookup with an element", "GET", "/v1/lookup/x", "1.82", nil, "", 405, false, webob(405, "Method Not Allowed", "")},
		{"surplus vif element is the body", "POST", "/v1/nodes/n1/vifs/x", "1.82", nil, "", 400, true,
			fault(`Schema error for vif: 'x' is not of type 'object'`)},
		{"surplus patch element", "PATCH", "/v1/chassis/x/y", "1.82", nil, "", 400, true,
			fault(`Schema error for patch: 'y' is not of type 'array'`)},
		{"two elements below the VIF controller", "GET", "/v1/nodes/n1/vifs/x/y", "1.82", nil, "", 405, false, webob(405, "Method Not Allowed", "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest(tc.method, tc.path, tc.version, tc.body)
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			rec := record(h, req)
			if rec.Code != tc.status || rec.Body.String() != tc.want {
				t.Fatalf("%d %s\nwant %d %s", rec.Code, rec.Body, tc.status, tc.want)
			}
			if got := rec.Header().Get("X-OpenStack-Ironic-API-Version") != ""; got != tc.versioned {
				t.Errorf("version headers %v, want %v", got, tc.versioned)
			}
			if tc.want == "" && rec.Header().Get("Content-Type") != "" {
				t.Errorf("Content-Type %q on an empty answer", rec.Header().Get("Content-Type"))
			}
		})
	}
}

// TestAuthorizeFailsClosed: a router built without a policy check refuses
// every route that has policies with the 403 of a refused rule, and still
// serves the public documents.
func TestAuthorizeFailsClosed(t *testing.T) {
	h := New(Deps{Logger: quiet, Handlers: map[string]HandlerFunc{"GET /v1/nodes": echoQuery}})
	rec := serve(h, "GET", "/v1/nodes", "", "")
	if want := fault("Access was denied to the following resource: baremetal:node:list_all"); rec.Code != 403 || rec.Body.String() != want {
		t.Fatalf("%d %s, want 403 %s", rec.Code, rec.Body, want)
	}
	if rec := serve(h, "GET", "/v1", "", ""); rec.Code != 200 {
		t.Fatalf("GET /v1: %d %s", rec.Code, rec.Body)
	}
}

// TestWebobPages: a routing exception for a client whose Accept does not
// make JSON pecan's choice is webob's page (HTML, webob's JSON or plain
// text) wrapped in error_message. Observed from upstream 21.4 (Debian
// python3-ironic 21.4.4), whose pecan, webob and ParsableErrorMiddleware
// master keeps.
func TestWebobPages(t *testing.T) {
	h := New(Deps{Logger: quiet, Handlers: map[string]HandlerFunc{"GET /v1/nodes": echoQuery}, Authorize: AllowAll})
	wrap := func(page string) string {
		b, _ := Marshal(Object{{"error_message", page}})
		return string(b)
	}
	for _, tc := range []struct {
		name, method, path, version, accept string
		status                              int
		want                                string
	}{
		{"404 plain", "GET", "/v1/nosuch", "", "text/plain", 404,
			"404 Not Found\n\nThe resource could not be found.\n\n   "},
		{"404 HTML", "GET", "/nosuch", "", "text/html", 404,
			"<html>\n <head>\n  <title>404 Not Found</title>\n </head>\n <body>\n  <h1>404 Not Found</h1>\n  The resource could not be found.<br /><br />\n\n\n\n </body>\n</html>"},
		{"405 plain", "PUT", "/v1/nodes", "", "application/xml", 405,
			"405 Method Not Allowed\n\nThe method PUT is not allowed for this resource. \n\n "},
		{"405 HTML", "PUT", "/v1/nodes", "", "text/html", 405,
			"<html>\n <head>\n  <title>405 Method Not Allowed</title>\n </head>\n <body>\n  <h1>405 Method Not Allowed</h1>\n  The method PUT is not allowed for this resource. <br /><br />\n\n </body>\n</html>"},
		{"400 with detail plain", "GET", "/v1/nodes/bad%20x!", "1.82", "text/plain", 400,
			"400 Bad Request\n\nThe server could not comply with the request since it is either malformed or otherwise incorrect.\n\n Expected UUID or name for node: bad x!  "},
		{"400 with detail HTML", "GET", "/v1/nodes/bad%20x!", "1.82", "text/html", 400,
			"<html>\n <head>\n  <title>400 Bad Request</title>\n </head>\n <body>\n  <h1>400 Bad Request</h1>\n  The server could not comply with the request since it is either malformed or otherwise incorrect.<br /><br />\nExpected UUID or name for node: bad x!\n\n\n </body>\n</html>"},
		// pecan prefers text/plain on equal quality; webob then JSON.
		{"400 webob JSON", "GET", "/v1/nodes/bad%20x!", "1.82", "application/json, text/plain", 400,
			`{"message": "The server could not comply with the request since it is either malformed or otherwise incorrect.<br /><br />\nExpected UUID or name for node: bad x!\n\n", "code": "400 Bad Request", "title": "Bad Request"}`},
		// An Accept webob cannot parse takes every offer: HTML.
		{"bare 400 unparsable Accept", "GET", "/v1/nodes/%ff", "1.82", "foo", 400,
			"<html>\n <head>\n  <title>400 Bad Request</title>\n </head>\n <body>\n  <h1>400 Bad Request</h1>\n  The server could not comply with the request since it is either malformed or otherwise incorrect.<br /><br />\n\n\n\n </body>\n</html>"},
		{"406 version plain", "GET", "/v1/nodes", "1.200", "text/plain", 406,
			"406 Not Acceptable\n\nThe resource could not be generated that was acceptable to your browser (content of type text/plain. \n\n Version 1.200 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.115]."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest(tc.method, tc.path, tc.version, "")
			req.Header.Set("Accept", tc.accept)
			rec := record(h, req)
			if want := wrap(tc.want); rec.Code != tc.status || rec.Body.String() != want {
				t.Fatalf("%d %s\nwant %d %s", rec.Code, rec.Body, tc.status, want)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
	// The API's Allow header stays on a 405 page.
	req := newRequest("PUT", "/v1/nodes", "", "")
	req.Header.Set("Accept", "text/plain")
	if allow := record(h, req).Header().Get("Allow"); allow != "DELETE, GET, PATCH, POST" {
		t.Errorf("Allow %q", allow)
	}
}

// TestMalformedEscape: the API listener hands /v1/nodes/%zz on as
// cheroot's PATH_INFO (see internal/httpserver/cheroot.go), where the
// identifier check refuses it. Observed from upstream 21.4 and from its
// application behind cheroot alike.
func TestMalformedEscape(t *testing.T) {
	h := New(Deps{Logger: quiet, Authorize: AllowAll})
	rec := record(h, newRequest("GET", "/v1/nodes/%25zz", "1.82", ""))
	if want := webob(400, "Bad Request", "Expected UUID or name for node: %zz"); rec.Code != 400 || rec.Body.String() != want {
		t.Fatalf("%d %s\nwant 400 %s", rec.Code, rec.Body, want)
	}
}
