package ovo

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
)

// fill sets every exported field of the struct v points to at random:
// empty and set values, nil and empty maps, json.Number and float
// numbers at any depth, strings JSON must escape, sub-second and zero
// times.
func fill(r *rand.Rand, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if r.IntN(3) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(r, p.Elem())
		v.Set(p)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			if r.IntN(4) == 0 {
				v.SetZero()
				return
			}
			t := time.Unix(r.Int64N(2e9), r.Int64N(1e9)).In(time.FixedZone("x", 3600*r.IntN(5)))
			v.Set(reflect.ValueOf(t))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(r, v.Field(i))
			}
		}
	case reflect.String:
		v.SetString([]string{"", "x", "power on", "<a&b>", "ü\u2028", "1.44"}[r.IntN(6)])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(r.Int64N(5))
	case reflect.Slice:
		if r.IntN(3) == 0 {
			v.SetZero()
			return
		}
		s := reflect.MakeSlice(v.Type(), r.IntN(3), 3)
		for i := range s.Len() {
			fill(r, s.Index(i))
		}
		v.Set(s)
	case reflect.Map:
		if r.IntN(4) == 0 {
			v.SetZero()
			return
		}
		m := reflect.MakeMap(v.Type())
		for i := range r.IntN(4) {
			val := reflect.New(v.Type().Elem()).Elem()
			fill(r, val)
			m.SetMapIndex(reflect.ValueOf(fmt.Sprint("k", i)).Convert(v.Type().Key()), val)
		}
		v.Set(m)
	case reflect.Interface:
		val := []any{nil, "s", json.Number("12"), json.Number("1.5"), 2.5, true,
			map[string]any{"n": json.Number("3"), "l": []any{json.Number("4"), "<x>"}}, []any{}}[r.IntN(8)]
		if val != nil {
			v.Set(reflect.ValueOf(val))
		}
	}
}

// Transcode gives what the serialised object decodes to, for every class
// at the latest versions and pinned to the oldest release a rolling
// upgrade starts from, on randomly filled objects.
func TestTranscodeIsTheWire(t *testing.T) {
	pinned, err := NewCodec("21.4")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(29, 1))
	for i := range 400 {
		for _, c := range []*Codec{Latest(), pinned} {
			checkTranscode[model.Node](t, r, c, i)
			checkTranscode[model.Port](t, r, c, i)
			checkTranscode[model.Portgroup](t, r, c, i)
			checkTranscode[model.Allocation](t, r, c, i)
			checkTranscode[model.VolumeConnector](t, r, c, i)
			checkTranscode[model.VolumeTarget](t, r, c, i)
		}
	}
}

func checkTranscode[T any](t *testing.T, r *rand.Rand, c *Codec, i int) {
	t.Helper()
	in := new(T)
	fill(r, reflect.ValueOf(in).Elem())
	raw, err := json.Marshal(Wrap(c, in))
	if err != nil {
		t.Fatalf("%T %d: %v", in, i, err)
	}
	var want Obj[T]
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatalf("%T %d: %v", in, i, err)
	}
	got, err := Transcode(c, in)
	if err != nil {
		t.Fatalf("%T %d: %v", in, i, err)
	}
	if !reflect.DeepEqual(got, want.V) {
		t.Fatalf("%T %d pinned %q:\n got %+v\nwant %+v", in, i, c.Pin(), got, want.V)
	}
}

// Decode reads a primitive, bare model JSON and null, and refuses a
// primitive it cannot read, as the probe-then-parse reading did.
func TestDecodeForms(t *testing.T) {
	cases := []struct {
		raw, uuid, err string
	}{
		{raw: `{"uuid": "bare"}`, uuid: "bare"},
		{raw: `null`},
		{raw: `{"ironic_object.name": null, "uuid": "bare"}`, uuid: "bare"},
		{raw: `{"ironic_object.name": 5, "uuid": "bare"}`, uuid: "bare"},
		{raw: `{"ironic_object.name": "Node", "ironic_object.namespace": "ironic", "ironic_object.version": "1.44", "ironic_object.data": {"uuid": "p"}}`, uuid: "p"},
		{raw: `{"ironic_object.name": "Node", "ironic_object.data": 5}`, err: "decode Node: json: cannot unmarshal number into Go struct field"},
		{raw: `{"ironic_object.name": "Port", "ironic_object.namespace": "ironic", "ironic_object.version": "1.0", "ironic_object.data": {}}`, err: `decode Node: got object Port of namespace "ironic"`},
		{raw: `5`, err: "decode Node: json: cannot unmarshal number into Go value of type model.Node"},
		{raw: `{"uuid": 5}`, err: "decode Node: json: cannot unmarshal number into Go struct field Node.uuid of type string"},
	}
	for _, tc := range cases {
		var n model.Node
		_, err := Decode(json.RawMessage(tc.raw), &n)
		switch {
		case tc.err != "" && (err == nil || len(err.Error()) < len(tc.err) || err.Error()[:len(tc.err)] != tc.err):
			t.Errorf("%s: error %v, want %q…", tc.raw, err, tc.err)
		case tc.err == "" && (err != nil || n.UUID != tc.uuid):
			t.Errorf("%s: uuid %q error %v, want %q", tc.raw, n.UUID, err, tc.uuid)
		}
	}
}
