package collection

import (
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/errs"
)

func sp(s string) *string { return &s }
func ip(n int) *int       { return &n }
func bp(b bool) *bool     { return &b }

func wantErr(t *testing.T, err error, code int, msg string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok || e.Code != code || e.Message != msg {
		t.Fatalf("got %v, want %d %q", err, code, msg)
	}
}

// TestPagination walks 2,500 items with limit 1000 following next links,
// parsing each link back as a client would.
func TestPagination(t *testing.T) {
	items := make([]string, 2500)
	for i := range items {
		items[i] = uuid.NewString()
	}
	page := func(q url.Values) ([]string, string) {
		lim, err := Integer("limit", optional(q, "limit"))
		if err != nil {
			t.Fatal(err)
		}
		limit, err := ValidateLimit(lim, 1000)
		if err != nil {
			t.Fatal(err)
		}
		marker, err := UUID("marker", optional(q, "marker"))
		if err != nil {
			t.Fatal(err)
		}
		dir, err := ValidateSortDir(optional(q, "sort_dir"))
		if err != nil {
			t.Fatal(err)
		}
		start := 0
		if marker != nil {
			for i, it := range items {
				if it == *marker {
					start = i + 1
				}
			}
		}
		got := items[start:min(start+limit, len(items))]
		last := ""
		if len(got) > 0 {
			last = got[len(got)-1]
		}
		return got, Next("http://127.0.0.1:6385", "nodes", len(got), limit, last, StringList(optional(q, "fields")),
			Param{"sort_key", "id"}, Param{"sort_dir", dir}, Param{"detail", bp(true)})
	}
	var seen []string
	next := "http://127.0.0.1:6385/v1/nodes?limit=5000"
	pages := 0
	for next != "" {
		u, err := url.Parse(next)
		if err != nil {
			t.Fatal(err)
		}
		got, n := page(u.Query())
		seen = append(seen, got...)
		if n != "" {
			want := fmt.Sprintf("http://127.0.0.1:6385/v1/nodes?sort_key=id&sort_dir=asc&detail=True&limit=1000&marker=%s", got[len(got)-1])
			if n != want {
				t.Fatalf("next %q, want %q", n, want)
			}
		}
		next = n
		pages++
	}
	if pages != 3 || !reflect.DeepEqual(seen, items) {
		t.Fatalf("%d pages, %d items seen", pages, len(seen))
	}
}

func optional(q url.Values, k string) *string {
	if !q.Has(k) {
		return nil
	}
	v := q.Get(k)
	return &v
}

func TestNext(t *testing.T) {
	cases := []struct {
		name         string
		count, limit int
		fields       []string
		params       []Param
		want         string
	}{
		{"short page", 3, 4, nil, nil, ""},
		{"empty page", 0, 0, nil, nil, ""},
		{"limit zero (instance_uuid)", 1, 0, nil, nil, ""},
		{"fields after params", 1, 1, []string{"uuid", "description"},
			[]Param{{"sort_key", "id"}, {"sort_dir", "desc"}},
			"http://h/v1/chassis?sort_key=id&sort_dir=desc&fields=uuid,description&limit=1&marker=M"},
		{"python values", 1, 1, nil,
			[]Param{{"maintenance", bp(false)}, {"detail", true}, {"owner", nil}},
			"http://h/v1/chassis?maintenance=False&detail=True&owner=None&limit=1&marker=M"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Next("http://h", "chassis", c.count, c.limit, "M", c.fields, c.params...); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestLinks(t *testing.T) {
	got := SelfAndBookmark("https://api.example.com/baremetal", "nodes", "1be26c0b-03f2-4d2e-ae87-c02d7f33c123")
	want := []Link{
		{Href: "https://api.example.com/baremetal/v1/nodes/1be26c0b-03f2-4d2e-ae87-c02d7f33c123", Rel: "self"},
		{Href: "https://api.example.com/baremetal/nodes/1be26c0b-03f2-4d2e-ae87-c02d7f33c123", Rel: "bookmark"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
	if u := BuildURL("http://h", "nodes", "?limit=1", true); u != "http://h/nodes?limit=1" {
		t.Fatal(u)
	}
	if u := BuildURL("http://h", "chassis", "c1/nodes", false); u != "http://h/v1/chassis/c1/nodes" {
		t.Fatal(u)
	}
}

func TestValidation(t *testing.T) {
	t.Run("limit", func(t *testing.T) {
		for _, c := range []struct {
			in   *string
			want int
		}{{nil, 1000}, {sp("5"), 5}, {sp(" 1_0 "), 10}, {sp("+7"), 7}, {sp("5000"), 1000}} {
			n, err := Integer("limit", c.in)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := ValidateLimit(n, 1000); err != nil || got != c.want {
				t.Fatalf("%v: %d %v", c.in, got, err)
			}
		}
		_, err := Integer("limit", sp("abc"))
		wantErr(t, err, 400, "Expected an integer for limit: abc")
		_, err = Integer("limit", sp("1.5"))
		wantErr(t, err, 400, "Expected an integer for limit: 1.5")
		for _, n := range []int{0, -1} {
			_, err = ValidateLimit(ip(n), 1000)
			wantErr(t, err, 400, "Limit must be positive")
		}
	})
	t.Run("sort", func(t *testing.T) {
		_, err := ValidateSortDir(sp("up"))
		wantErr(t, err, 400, "Invalid sort direction: up. Acceptable values are 'asc' or 'desc'")
		if d, err := ValidateSortDir(sp("desc")); err != nil || d != "desc" {
			t.Fatal(d, err)
		}
		invalid := []string{"properties", "driver_info", "extra"}
		wantErr(t, ValidateSortKey("extra", invalid), 400, "The sort_key value extra is an invalid field for sorting")
		if err := ValidateSortKey("name", invalid); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("marker", func(t *testing.T) {
		_, err := UUID("marker", sp("xyz"))
		wantErr(t, err, 400, "Expected UUID for marker: xyz")
		for _, ok := range []string{"1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "1BE26C0B03F24D2EAE87C02D7F33C123"} {
			if _, err := UUID("marker", sp(ok)); err != nil {
				t.Fatal(ok, err)
			}
		}
	})
	t.Run("detail", func(t *testing.T) {
		_, err := Boolean("detail", sp("maybe"))
		wantErr(t, err, 400, "Invalid detail: Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'")
		for in, want := range map[string]bool{"Yes": true, " on ": true, "0": false, "F": false} {
			if b, err := Boolean("detail", sp(in)); err != nil || *b != want {
				t.Fatal(in, err)
			}
		}
	})
	t.Run("fields", func(t *testing.T) {
		f := StringList(sp("UUID, name,,uuid ,Extra"))
		if !reflect.DeepEqual(f, []string{"uuid", "name", "extra"}) {
			t.Fatal(f)
		}
		wantErr(t, CheckAllowSpecifyFields(f, microversion.Version{Major: 1, Minor: 7}), 406, "Request not acceptable.")
		if err := CheckAllowSpecifyFields(f, microversion.Version{Major: 1, Minor: 8}); err != nil {
			t.Fatal(err)
		}
		wantErr(t, CheckAllowedFields([]string{"uuid", "owner"}, microversion.Version{Major: 1, Minor: 49}), 406, "Request not acceptable.")
		if err := CheckAllowedFields([]string{"uuid", "owner"}, microversion.Version{Major: 1, Minor: 50}); err != nil {
			t.Fatal(err)
		}
		wantErr(t, CheckInvalidFields([]string{"uuid", "bogus", "zz", "bogus"}, []string{"uuid", "name"}), 400, `Field(s) "bogus, zz" are not valid`)
	})
	t.Run("return fields", func(t *testing.T) {
		defaults := []string{"uuid", "name"}
		v40, v43 := microversion.Version{Major: 1, Minor: 40}, microversion.Version{Major: 1, Minor: 43}
		_, err := ReturnFields(nil, nil, bp(true), sp("true"), defaults, DetailAllowed(v40), nil)
		wantErr(t, err, 400, "Invalid query parameter ?detail=True received.")
		_, err = ReturnFields([]string{"uuid"}, sp("uuid"), bp(true), sp("1"), defaults, DetailAllowed(v43), nil)
		wantErr(t, err, 400, "Can not specify ?detail=True and fields in the same request.")
		_, err = ReturnFields([]string{"uuid", "name"}, sp("uuid,name"), nil, nil, defaults, true, func() bool { return false })
		wantErr(t, err, 400, "Invalid query parameter ?fields=['uuid', 'name'] received.")
		if f, _ := ReturnFields(nil, nil, nil, nil, defaults, true, nil); !reflect.DeepEqual(f, defaults) {
			t.Fatal(f)
		}
		if f, _ := ReturnFields(nil, nil, bp(true), nil, defaults, true, nil); f != nil {
			t.Fatal(f)
		}
		if f, _ := ReturnFields([]string{"uuid"}, nil, bp(false), nil, defaults, true, nil); !reflect.DeepEqual(f, []string{"uuid"}) {
			t.Fatal(f)
		}
	})
}

func TestOutputFiltering(t *testing.T) {
	node := func() map[string]any {
		return map[string]any{"uuid": "u", "name": "n", "owner": "o", "health": "ok", "extra": map[string]any{}, "links": []Link{}}
	}
	n := node()
	Sanitize(n, []string{"uuid", "owner"})
	if keys(n) != "links,owner,uuid" {
		t.Fatal(keys(n))
	}
	n = node()
	Sanitize(n, nil)
	if keys(n) != "extra,health,links,name,owner,uuid" {
		t.Fatal(keys(n))
	}
	n = node()
	HideVersionedFields(n, microversion.Version{Major: 1, Minor: 50})
	if keys(n) != "extra,links,name,owner,uuid" {
		t.Fatal(keys(n))
	}
	n = node()
	HideVersionedFields(n, microversion.Version{Major: 1, Minor: 1})
	if keys(n) != "extra,links,uuid" {
		t.Fatal(keys(n))
	}
}

func keys(m map[string]any) string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	slices.Sort(k)
	return strings.Join(k, ",")
}

// IsUUIDLike's check of 36 characters answers as Parse and the comparison
// of the normalized forms do.
func TestIsUUIDLikeHyphenatedForm(t *testing.T) {
	slow := func(v string) bool {
		u, err := uuid.Parse(v)
		return err == nil && strings.ReplaceAll(strings.ToLower(u.String()), "-", "") == strings.ReplaceAll(strings.ToLower(v), "-", "")
	}
	base := "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
	inputs := []string{base, strings.ToUpper(base), "1BE26c0b-03F2-4d2e-ae87-c02d7f33c12g",
		"1be26c0b003f2-4d2e-ae87-c02d7f33c123", "1be26c0b-03f2-4d2e-ae87-c02d7f33c12-",
		"{1be26c0b-03f2-4d2e-ae87-c02d7f33c1}", "1be26c0b-03f2-4d2e-ae87-c02d7f33c12é"[:36]}
	for i := range len(base) {
		for _, c := range []byte{'-', 'x', 'F', '0', ' '} {
			b := []byte(base)
			b[i] = c
			inputs = append(inputs, string(b))
		}
	}
	for _, v := range inputs {
		if len(v) != 36 {
			t.Fatalf("%q: not 36 characters", v)
		}
		if got, want := IsUUIDLike(v), slow(v); got != want {
			t.Errorf("IsUUIDLike(%q) = %v, Parse says %v", v, got, want)
		}
	}
}
