package swift

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func call(t *testing.T, method, u, token string, hdr map[string]string, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body)) //nolint:noctx // test
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func TestFixture(t *testing.T) {
	f := New(t).ValidateTokens(func(tok string) bool { return tok == "good" })
	acct := f.AccountURL("p1")
	if st, _, _ := call(t, "PUT", acct+"/c", "bad", nil, ""); st != http.StatusUnauthorized {
		t.Fatalf("bad token: %d", st)
	}
	if st, _, _ := call(t, "PUT", acct+"/c/o", "good", nil, "x"); st != http.StatusNotFound {
		t.Fatalf("object in a missing container: %d", st)
	}
	if st, _, _ := call(t, "PUT", acct+"/c", "good", nil, ""); st != http.StatusCreated {
		t.Fatalf("create container: %d", st)
	}
	if st, _, _ := call(t, "PUT", acct+"/c", "good", nil, ""); st != http.StatusAccepted {
		t.Fatalf("existing container: %d", st)
	}
	if st, _, _ := call(t, "PUT", acct+"/c/o", "good", map[string]string{"X-Delete-At": "1"}, "x"); st != http.StatusBadRequest {
		t.Fatalf("X-Delete-At in the past: %d", st)
	}
	if st, _, _ := call(t, "PUT", acct+"/c/o", "good", map[string]string{"X-Object-Meta-Color": "blue"}, "data"); st != http.StatusCreated {
		t.Fatalf("put object: %d", st)
	}
	st, h, body := call(t, "GET", acct+"/c/o", "good", nil, "")
	if st != http.StatusOK || body != "data" || h.Get("X-Object-Meta-Color") != "blue" || h.Get("Etag") != "8d777f385d3dfec8815d20f7496026dc" {
		t.Fatalf("get object: %d %q %v", st, body, h)
	}
	if st, _, body := call(t, "GET", acct+"/c", "good", nil, ""); st != http.StatusOK || body != "o\n" {
		t.Fatalf("listing: %d %q", st, body)
	}
	if st, _, _ := call(t, "DELETE", acct+"/c", "good", nil, ""); st != http.StatusConflict {
		t.Fatalf("delete a container with objects: %d", st)
	}
	if st, _, _ := call(t, "POST", acct, "good", map[string]string{"X-Account-Meta-Temp-URL-Key": "k"}, ""); st != http.StatusNoContent {
		t.Fatalf("post account: %d", st)
	}
	if _, h, _ := call(t, "HEAD", acct, "good", nil, ""); h.Get("X-Account-Meta-Temp-Url-Key") != "k" {
		t.Fatalf("account metadata %v", h)
	}
	// Another account does not share the key.
	if _, h, _ := call(t, "HEAD", f.AccountURL("p2"), "good", nil, ""); h.Get("X-Account-Meta-Temp-Url-Key") != "" {
		t.Fatalf("account metadata leaked: %v", h)
	}
	if st, _, _ := call(t, "DELETE", acct+"/c/o", "good", nil, ""); st != http.StatusNoContent {
		t.Fatalf("delete object: %d", st)
	}
	if st, _, _ := call(t, "DELETE", acct+"/c/o", "good", nil, ""); st != http.StatusNotFound {
		t.Fatalf("delete a missing object: %d", st)
	}
	if f.Objects("AUTH_p1", "c") == nil || len(f.Objects("AUTH_p1", "c")) != 0 {
		t.Fatalf("objects left %v", f.Objects("AUTH_p1", "c"))
	}
	f.Fail(http.StatusInternalServerError)
	if st, _, _ := call(t, "HEAD", acct, "good", nil, ""); st != http.StatusInternalServerError {
		t.Fatalf("injected failure: %d", st)
	}
}

// TestListingPages: a container listing takes prefix, marker and limit
// and stops at the listing limit, so clients page with marker.
func TestListingPages(t *testing.T) {
	f := New(t).ListingLimit(2)
	for _, n := range []string{"a/1", "a/2", "a/3", "b/1"} {
		f.PutObject("AUTH_p", "c", n, []byte(n))
	}
	c := f.AccountURL("p") + "/c"
	for _, tc := range []struct{ query, want string }{
		{"", "a/1\na/2\n"},
		{"?marker=a/2", "a/3\nb/1\n"},
		{"?marker=b/1", ""},
		{"?prefix=a/&marker=a/1", "a/2\na/3\n"},
		{"?limit=1&marker=a/1", "a/2\n"},
	} {
		if _, _, body := call(t, "GET", c+tc.query, "", nil, ""); body != tc.want {
			t.Errorf("GET %s: %q, want %q", tc.query, body, tc.want)
		}
	}
	if st, _, body := call(t, "GET", c+"?format=json&marker=a/3", "", nil, ""); st != http.StatusOK || body != `[{"name":"b/1"}]`+"\n" {
		t.Fatalf("json listing: %d %q", st, body)
	}
	if st, _, _ := call(t, "GET", c+"?limit=3", "", nil, ""); st != http.StatusPreconditionFailed {
		t.Fatalf("limit over the listing limit: %d", st)
	}
}
