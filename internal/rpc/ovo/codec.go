// Package ovo is the encoding of RPC arguments and results as upstream's
// serialised versioned objects (oslo.versionedobjects as
// ironic/objects/base.py uses it), shared by every transport: the
// JSON-RPC client and server (package jsonrpc), the oslo.messaging
// transport (package oslo) and the in-process one, so that a Python
// Ironic API or conductor reads what ours write and the reverse.
//
// A model value (internal/model: Node, Port, Portgroup, Allocation,
// VolumeConnector, VolumeTarget) travels as
//
//	{"ironic_object.name": "Node", "ironic_object.namespace": "ironic",
//	 "ironic_object.version": "1.37", "ironic_object.data": {...},
//	 "ironic_object.changes": ["extra"]}
//
// where data holds the fields the version has (datetimes as upstream's
// isotime, "2026-12-02T13:26:01Z"; a node's traits as a TraitList object)
// and changes the fields the sender changed.
//
// The API of the package, for a transport:
//
//	c, err := ovo.NewCodec(cfg.StringOf(config.DefaultPinReleaseVersion))
//	raw, err := json.Marshal(ovo.Wrap(c, node, "extra"))  // encode at the pinned version
//	var o ovo.Obj[model.Node]; json.Unmarshal(raw, &o)    // decode any compatible version
//	o.V, o.Changes
//	c.CanSendVersion("1.57")                               // the RPC version cap of the pin
//
// Encoding writes each object at the version the pin names
// ([DEFAULT]/pin_release_version; the latest when unpinned), dropping the
// fields newer than that (upstream's obj_make_compatible). Decoding takes
// any version compatible with ours (same major, minor not newer) and
// leaves the fields it lacks at their zero value, as upstream leaves them
// unset; a bare model JSON (no ironic_object.name) is read as it is, so
// that a peer of ours from before this encoding still gets through.
package ovo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Namespace is the project namespace of Ironic's objects.
const Namespace = "ironic"

// Primitive is a serialised versioned object.
type Primitive struct {
	Name      string                     `json:"ironic_object.name"`
	Namespace string                     `json:"ironic_object.namespace"`
	Version   string                     `json:"ironic_object.version"`
	Data      map[string]json.RawMessage `json:"ironic_object.data"`
	Changes   []string                   `json:"ironic_object.changes,omitempty"`
}

// Codec writes objects at the versions of a pinned release and reads
// objects of any compatible version.
type Codec struct {
	pin     string
	release Release
}

// NewCodec returns the codec of [DEFAULT]/pin_release_version pin ("" for
// none: objects at their latest versions, no RPC version cap).
func NewCodec(pin string) (*Codec, error) {
	r, err := ReleaseFor(pin)
	if err != nil {
		return nil, err
	}
	return &Codec{pin: pin, release: r}, nil
}

// Latest is the unpinned codec.
func Latest() *Codec {
	c, _ := NewCodec("")
	return c
}

// Pinned reports whether a release is pinned: the peers may then be an
// upstream Ironic of that release.
func (c *Codec) Pinned() bool { return c != nil && c.pin != "" }

// Pin is the pinned release name, "" when none.
func (c *Codec) Pin() string {
	if c == nil {
		return ""
	}
	return c.pin
}

// RPCVersionCap is the highest RPC API version the peers of the pinned
// release answer, "" when unpinned.
func (c *Codec) RPCVersionCap() string {
	if !c.Pinned() {
		return ""
	}
	return c.release.RPC
}

// APIVersionCap is the highest REST API microversion the pinned release
// serves, "" when unpinned: a pinned API serves no newer one, as
// upstream's, since the conductors of the release lack what is newer.
func (c *Codec) APIVersionCap() string {
	if !c.Pinned() {
		return ""
	}
	return c.release.API
}

// CanSendVersion reports whether a call of RPC version v may be sent.
func (c *Codec) CanSendVersion(v string) bool { return CanSendVersion(v, c.RPCVersionCap()) }

// Version is the version objects of class are written in.
func (c *Codec) Version(class *Class) string {
	if c == nil {
		return class.Latest
	}
	if v, ok := c.release.Objects[class.Name]; ok {
		return v
	}
	return class.Latest
}

// timeFields are the DateTimeField fields of the classes the RPC carries.
var timeFields = map[string]bool{
	"created_at": true, "updated_at": true, "provision_updated_at": true,
	"inspection_finished_at": true, "inspection_started_at": true,
}

// emptyIsNone are the node fields whose "" in our model is upstream's
// None (NULL in the database): an interface or state not set.
var emptyIsNone = map[string]bool{
	"power_state": true, "target_power_state": true, "target_provision_state": true,
	"bios_interface": true, "boot_interface": true, "console_interface": true, "deploy_interface": true,
	"firmware_interface": true, "inspect_interface": true, "management_interface": true,
	"network_interface": true, "power_interface": true, "raid_interface": true, "rescue_interface": true,
	"storage_interface": true, "vendor_interface": true,
}

// isotime is oslo.versionedobjects' datetime format: seconds, UTC as Z.
const isotime = "2006-01-02T15:04:05Z"

// Encode writes v (a model value or pointer of a class the RPC carries)
// at the codec's version of its class; changes are the fields the
// receiver is to take as changed (those the version lacks are left out).
func (c *Codec) Encode(v any, changes []string) (*Primitive, error) {
	class := classOf(v)
	if class == nil {
		return nil, fmt.Errorf("encode %T: not a versioned object the RPC carries", v)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", class.Name, err)
	}
	// Sized for the class so that the decoder never grows it.
	all := make(map[string]json.RawMessage, len(class.Fields)+8)
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, fmt.Errorf("encode %s: %w", class.Name, err)
	}
	version := c.Version(class)
	fields := class.FieldsAt(version)
	p := &Primitive{Name: class.Name, Namespace: Namespace, Version: version, Data: make(map[string]json.RawMessage, len(fields))}
	for _, f := range fields {
		val, ok := all[f]
		if !ok {
			continue
		}
		val, keep, err := c.encodeField(class, f, val)
		if err != nil {
			return nil, fmt.Errorf("encode %s.%s: %w", class.Name, f, err)
		}
		if keep {
			p.Data[f] = val
		}
	}
	for _, f := range changes {
		if _, ok := p.Data[f]; ok && !slices.Contains(p.Changes, f) {
			p.Changes = append(p.Changes, f)
		}
	}
	return p, nil
}

// encodeField turns a field's model JSON into upstream's primitive, or
// leaves it out (keep false) where upstream's object would leave it unset:
// an id or created_at not given yet, traits not loaded.
func (c *Codec) encodeField(class *Class, f string, val json.RawMessage) (json.RawMessage, bool, error) {
	null := isNull(val)
	empty := string(val) == `""`
	switch {
	case empty && (f == "uuid" || f == "provision_state" || f == "state"):
		// Not chosen yet: upstream's create fills them in.
		return nil, false, nil
	case empty && class == NodeClass && emptyIsNone[f]:
		return json.RawMessage("null"), true, nil
	case f == "id":
		return val, string(val) != "0", nil
	case timeFields[f]:
		if null {
			return val, true, nil
		}
		var t time.Time
		if err := json.Unmarshal(val, &t); err != nil {
			return nil, false, err
		}
		if t.IsZero() {
			return nil, false, nil
		}
		out, err := json.Marshal(t.UTC().Format(isotime))
		return out, true, err
	case null && class.NotNull[f] != "":
		return json.RawMessage(class.NotNull[f]), true, nil
	case class == NodeClass && f == "traits":
		if null {
			return nil, false, nil
		}
		var names []string
		if err := json.Unmarshal(val, &names); err != nil {
			return nil, false, err
		}
		out, err := json.Marshal(c.traitList(names))
		return out, true, err
	}
	return val, true, nil
}

// traitList is a node's traits as upstream's TraitList of Trait objects.
// Their node_id is left out: the node carries it.
func (c *Codec) traitList(names []string) *Primitive {
	objects := make([]*Primitive, 0, len(names))
	for _, n := range names {
		trait, _ := json.Marshal(n)
		objects = append(objects, &Primitive{Name: TraitClass.Name, Namespace: Namespace, Version: c.Version(TraitClass),
			Data: map[string]json.RawMessage{"trait": trait}})
	}
	list, _ := json.Marshal(objects)
	return &Primitive{Name: TraitListClass.Name, Namespace: Namespace, Version: c.Version(TraitListClass),
		Data: map[string]json.RawMessage{"objects": list}}
}

// IsPrimitive reports whether raw is a serialised versioned object.
func IsPrimitive(raw json.RawMessage) bool {
	var probe struct {
		Name *string `json:"ironic_object.name"`
	}
	return isObject(raw) && json.Unmarshal(raw, &probe) == nil && probe.Name != nil
}

// Decode reads raw, a serialised object (or bare model JSON) of out's
// class, into out (a pointer to the model value) and returns the fields
// the sender changed.
func Decode(raw json.RawMessage, out any) ([]string, error) {
	class := classOf(out)
	if class == nil {
		return nil, fmt.Errorf("decode into %T: not a versioned object the RPC carries", out)
	}
	// One parse tells a primitive from bare model JSON and reads it; only
	// when it fails is the input probed again, to say which it was.
	var p struct {
		Primitive
		Name *string `json:"ironic_object.name"`
	}
	err := errNotObject
	if isObject(raw) {
		err = json.Unmarshal(raw, &p)
	}
	switch {
	case err != nil && IsPrimitive(raw):
		return nil, fmt.Errorf("decode %s: %w", class.Name, err)
	case err != nil || p.Name == nil:
		if err := json.Unmarshal(raw, out); err != nil {
			return nil, fmt.Errorf("decode %s: %w", class.Name, err)
		}
		return nil, nil
	}
	p.Primitive.Name = *p.Name
	return decodePrimitive(class, &p.Primitive, out)
}

// errNotObject marks input that cannot be a primitive.
var errNotObject = errors.New("not a JSON object")

// decodePrimitive reads p, a primitive of class, into out.
func decodePrimitive(class *Class, p *Primitive, out any) ([]string, error) {
	if p.Name != class.Name || p.Namespace != Namespace {
		return nil, fmt.Errorf("decode %s: got object %s of namespace %q", class.Name, p.Name, p.Namespace)
	}
	if !Compatible(p.Version, class.Latest) {
		return nil, fmt.Errorf("decode %s: version %s is not compatible with %s", class.Name, p.Version, class.Latest)
	}
	// The object is written as it is: the values are JSON a decoder or
	// encoder has already checked and the names the class's own, so no
	// second validation pass through json.Marshal. A not-null field the
	// sender left out takes upstream's default.
	b := make([]byte, 0, 256)
	b = append(b, '{')
	field := func(f string, val []byte) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, f...)
		b = append(b, '"', ':')
		b = append(b, val...)
	}
	for f, def := range class.NotNull {
		if _, sent := p.Data[f]; !sent {
			field(f, []byte(def))
		}
	}
	for f, val := range p.Data {
		if !class.has(f) {
			continue
		}
		if class == NodeClass && f == "traits" && !isNull(val) {
			names, err := traitNames(val)
			if err != nil {
				return nil, fmt.Errorf("decode Node.traits: %w", err)
			}
			val, _ = json.Marshal(names)
		}
		field(f, val)
	}
	b = append(b, '}')
	if err := json.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("decode %s: %w", class.Name, err)
	}
	var changes []string
	for _, f := range p.Changes {
		if class.has(f) {
			changes = append(changes, f)
		}
	}
	return changes, nil
}

// Transcode returns v as a peer decodes what c encodes: the fields c's
// version lacks dropped, datetimes at upstream's whole seconds, free-form
// numbers as float64, unset fields at upstream's defaults. It is
// Decode(json.Marshal(Wrap(c, v))) without the serialisation between,
// which changes nothing.
func Transcode[T any](c *Codec, v *T) (*T, error) {
	if v == nil {
		return nil, nil
	}
	p, err := c.Encode(v, nil)
	if err != nil {
		return nil, err
	}
	out := new(T)
	if _, err := decodePrimitive(classOf(out), p, out); err != nil {
		return nil, err
	}
	return out, nil
}

// traitNames reads a TraitList primitive.
func traitNames(raw json.RawMessage) ([]string, error) {
	var list Primitive
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, err
	}
	if list.Name != TraitListClass.Name {
		return nil, fmt.Errorf("got object %s, want TraitList", list.Name)
	}
	var objects []Primitive
	if raw := list.Data["objects"]; !isNull(raw) {
		if err := json.Unmarshal(raw, &objects); err != nil {
			return nil, err
		}
	}
	names := make([]string, 0, len(objects))
	for _, o := range objects {
		var name string
		if err := json.Unmarshal(o.Data["trait"], &name); err != nil {
			return nil, fmt.Errorf("trait: %w", err)
		}
		names = append(names, name)
	}
	return names, nil
}

// Obj carries a model value of type T (model.Node…) through encoding/json
// as a serialised versioned object: marshalled at the version of its
// codec, unmarshalled from any compatible version. A nil V is null.
type Obj[T any] struct {
	V *T
	// Changes are the fields the sender changed.
	Changes []string
	codec   *Codec
	// created marks every field carried as changed.
	created bool
}

// Wrap returns v ready to be marshalled by c (nil c: latest versions).
func Wrap[T any](c *Codec, v *T, changes ...string) Obj[T] {
	return Obj[T]{V: v, Changes: changes, codec: c}
}

// WrapNew returns v, an object being created, ready to be marshalled by
// c: every field it carries is a change, as for an object upstream's API
// builds from a request (its create() writes only the changed fields).
func WrapNew[T any](c *Codec, v *T) Obj[T] {
	return Obj[T]{V: v, codec: c, created: true}
}

// MarshalJSON writes the serialised object.
func (o Obj[T]) MarshalJSON() ([]byte, error) {
	if o.V == nil {
		return []byte("null"), nil
	}
	p, err := o.codec.Encode(o.V, o.Changes)
	if err != nil {
		return nil, err
	}
	if o.created {
		p.Changes = p.Changes[:0]
		for f := range p.Data {
			p.Changes = append(p.Changes, f)
		}
		slices.Sort(p.Changes)
	}
	return json.Marshal(p)
}

// UnmarshalJSON reads a serialised object.
func (o *Obj[T]) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		o.V, o.Changes = nil, nil
		return nil
	}
	v := new(T)
	changes, err := Decode(b, v)
	if err != nil {
		return err
	}
	o.V, o.Changes = v, changes
	return nil
}

func isNull(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

func isObject(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}
