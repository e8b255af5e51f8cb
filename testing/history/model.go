// Package history records what concurrent API clients did to nodes and
// checks that the history is linearizable against a sequential model of a
// node, with github.com/anishathalye/porcupine.
//
// The model covers what the workload (workload.go) writes: a few keys of
// extra, properties, instance_info and driver_info, maintenance and its
// reason, a few traits, the provision states between enroll, manageable and
// available, and the power state. Every answer the API can give narrows
// what the node must have been at the operation's linearization point:
// a 200 to a PATCH means every operation of the patch applied (and the
// node it returns is the node after the write), a 400 means one of them
// could not (a replace or remove of a key that is absent), a 404 to a
// trait removal means the trait was absent, a 409 means nothing happened.
// An answer that did not come (transport error) or a 5xx leaves the
// outcome unknown: the write may or may not have happened.
package history

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
)

// Field is one of the node's dictionaries the workload writes.
type Field uint8

// The dictionaries, in the order the model keeps them.
const (
	Extra Field = iota
	Properties
	InstanceInfo
	DriverInfo
	numFields
)

var fieldNames = [numFields]string{"extra", "properties", "instance_info", "driver_info"}

func (f Field) String() string { return fieldNames[f] }

// NumKeys is how many keys of each dictionary the workload uses: few, so
// that concurrent operations collide.
const NumKeys = 3

// NumTraits is how many traits the workload adds and removes.
const NumTraits = 3

// KeyName is the dictionary key number k stands for.
func KeyName(k int) string { return fmt.Sprintf("h%d", k) }

// TraitName is the trait number i stands for.
func TraitName(i int) string { return fmt.Sprintf("CUSTOM_H%d", i) }

// Provision is the part of the provision state machine the workload walks.
type Provision uint8

// Provision states; ProvisionOther stands for any other state read, which
// the model never reaches, so that reading it is a violation.
const (
	Enroll Provision = iota
	Verifying
	Manageable
	Cleaning
	Available
	CleanFailed
	ProvisionOther
)

var provisionNames = []string{"enroll", "verifying", "manageable", "cleaning", "available", "clean failed"}

func (p Provision) String() string {
	if int(p) < len(provisionNames) {
		return provisionNames[p]
	}
	return "other"
}

// ParseProvision maps an API provision_state to the model's.
func ParseProvision(s string) Provision {
	if i := slices.Index(provisionNames, s); i >= 0 {
		return Provision(i)
	}
	return ProvisionOther
}

// Power is a power state; PowerNone is null (never read from the BMC).
type Power uint8

// Power states; PowerOther stands for anything else read.
const (
	PowerNone Power = iota
	PowerOn
	PowerOff
	PowerOther
)

func (p Power) String() string {
	switch p {
	case PowerNone:
		return "null"
	case PowerOn:
		return "power on"
	case PowerOff:
		return "power off"
	}
	return "other"
}

// ParsePower maps an API power_state (nil for null) to the model's.
func ParsePower(s *string) Power {
	switch {
	case s == nil:
		return PowerNone
	case *s == "power on":
		return PowerOn
	case *s == "power off":
		return PowerOff
	}
	return PowerOther
}

// State is what the model knows of one node. It is comparable with ==.
type State struct {
	// Dicts holds the value of each workload key ("" when absent).
	Dicts       [numFields][NumKeys]string
	Maintenance bool
	// Reason is maintenance_reason ("" when null).
	Reason string
	// Traits has bit i set when TraitName(i) is a trait of the node.
	Traits    uint8
	Provision Provision
	Power     Power
	// PendingPower is the target of a power request answered 202 whose
	// action has not been recorded yet (PowerNone when there is none).
	PendingPower Power
}

// Kind is the kind of an operation.
type Kind uint8

// Operation kinds.
const (
	Read Kind = iota
	Patch
	SetMaintenance
	UnsetMaintenance
	AddTrait
	RemoveTrait
	Manage
	Provide
	SetPower
)

// PatchOp is one JSON patch operation on a workload key.
type PatchOp struct {
	Op    string // add, replace or remove
	Field Field
	Key   int
	Value string // for add and replace
}

func (p PatchOp) String() string {
	if p.Op == "remove" {
		return fmt.Sprintf("remove %s/%s", p.Field, KeyName(p.Key))
	}
	return fmt.Sprintf("%s %s/%s=%s", p.Op, p.Field, KeyName(p.Key), p.Value)
}

// Input is one operation as sent.
type Input struct {
	// Node is the index of the node (the history's partition).
	Node  int
	Kind  Kind
	Patch []PatchOp
	// Reason is the maintenance reason sent ("" sends no body).
	Reason string
	Trait  int
	Power  Power
}

func (in Input) String() string {
	switch in.Kind {
	case Read:
		return "GET"
	case Patch:
		ops := make([]string, len(in.Patch))
		for i, p := range in.Patch {
			ops[i] = p.String()
		}
		return "PATCH [" + strings.Join(ops, ", ") + "]"
	case SetMaintenance:
		if in.Reason == "" {
			return "PUT maintenance"
		}
		return fmt.Sprintf("PUT maintenance reason=%s", in.Reason)
	case UnsetMaintenance:
		return "DELETE maintenance"
	case AddTrait:
		return "PUT traits/" + TraitName(in.Trait)
	case RemoveTrait:
		return "DELETE traits/" + TraitName(in.Trait)
	case Manage:
		return "provision manage"
	case Provide:
		return "provision provide"
	case SetPower:
		return "power " + in.Power.String()
	}
	return "?"
}

// Output is the answer to one operation.
type Output struct {
	// Unknown is set when no answer came or the answer was a 5xx: the
	// operation may or may not have taken effect.
	Unknown bool
	Status  int
	// Node is the node the answer carried (GET and PATCH answered 200).
	Node *State
	// Detail is the error text or fault, for reports.
	Detail string
}

func (out Output) String() string {
	var b strings.Builder
	if out.Unknown {
		b.WriteString("unknown ")
	}
	fmt.Fprintf(&b, "%d", out.Status)
	if out.Node != nil {
		b.WriteString(" " + out.Node.Describe())
	}
	if out.Detail != "" {
		fmt.Fprintf(&b, " (%s)", out.Detail)
	}
	return b.String()
}

// Describe renders the state compactly: only what is set.
func (s State) Describe() string {
	var parts []string
	for f := range numFields {
		var kv []string
		for k, v := range s.Dicts[f] {
			if v != "" {
				kv = append(kv, KeyName(k)+"="+v)
			}
		}
		if len(kv) > 0 {
			parts = append(parts, fmt.Sprintf("%s{%s}", Field(f), strings.Join(kv, ",")))
		}
	}
	if s.Maintenance {
		parts = append(parts, fmt.Sprintf("maintenance(%q)", s.Reason))
	} else if s.Reason != "" {
		parts = append(parts, fmt.Sprintf("no maintenance but reason %q", s.Reason))
	}
	var traits []string
	for i := range NumTraits {
		if s.Traits&(1<<i) != 0 {
			traits = append(traits, TraitName(i))
		}
	}
	if len(traits) > 0 {
		parts = append(parts, "traits"+fmt.Sprint(traits))
	}
	parts = append(parts, s.Provision.String(), s.Power.String())
	if s.PendingPower != PowerNone {
		parts = append(parts, "→"+s.PendingPower.String())
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// Model is the sequential specification of a node.
type Model struct {
	// Crashes allows what a conductor killed mid-task leaves behind: a
	// node in verifying goes back to enroll, one in cleaning to clean
	// failed, and a pending power action may never happen.
	Crashes bool
}

// Step returns every state the node can be in after in answered out, when
// it was in s before; none when the answer is impossible. Conductor work
// that an earlier 202 started (verifying, cleaning, a power action)
// completes at any time, so it may or may not have happened before in.
func (m Model) Step(s State, in Input, out Output) []State {
	var next []State
	for _, c := range m.settle(s) {
		for _, n := range m.apply(c, in, out) {
			if !slices.Contains(next, n) {
				next = append(next, n)
			}
		}
	}
	return next
}

// settle lists the states the node's background conductor work can have
// brought s to.
func (m Model) settle(s State) []State {
	provs := []Provision{s.Provision}
	switch s.Provision {
	case Verifying:
		provs = append(provs, Manageable)
		if m.Crashes {
			provs = append(provs, Enroll)
		}
	case Cleaning:
		provs = append(provs, Available)
		if m.Crashes {
			provs = append(provs, CleanFailed)
		}
	}
	type power struct{ now, pending Power }
	powers := []power{{s.Power, s.PendingPower}}
	if s.PendingPower != PowerNone {
		powers = append(powers, power{s.PendingPower, PowerNone})
		if m.Crashes {
			powers = append(powers, power{s.Power, PowerNone})
		}
	}
	out := make([]State, 0, len(provs)*len(powers))
	for _, p := range provs {
		for _, w := range powers {
			c := s
			c.Provision, c.Power, c.PendingPower = p, w.now, w.pending
			out = append(out, c)
		}
	}
	return out
}

// apply is the effect of in on a settled state c, given the answer.
func (m Model) apply(c State, in Input, out Output) []State {
	if in.Kind == Read {
		if !out.Unknown && out.Status == 200 && out.Node != nil && c.Matches(*out.Node) {
			return []State{c}
		}
		return nil
	}
	after, res := effect(c, in)
	if out.Unknown {
		if res == applied {
			return []State{c, after}
		}
		return []State{c}
	}
	// A node locked by another task refuses any write and changes
	// nothing; which task held it the model does not track.
	if out.Status == 409 {
		return []State{c}
	}
	if res == applied && out.Status == successStatus[in.Kind] {
		if in.Kind == Patch && (out.Node == nil || !after.Matches(*out.Node)) {
			return nil
		}
		return []State{after}
	}
	if res == refused && out.Status == refusalStatus(in) {
		return []State{c}
	}
	return nil
}

// successStatus is the answer to a write that took effect.
var successStatus = map[Kind]int{
	Patch: 200, SetMaintenance: 202, UnsetMaintenance: 202, AddTrait: 204, RemoveTrait: 204,
	Manage: 202, Provide: 202, SetPower: 202,
}

// refusalStatus is the answer to a write that effect refuses: 404 for a
// trait the node does not have (NodeTraitNotFound), 400 otherwise (a
// patch of an absent key; InvalidStateRequested).
func refusalStatus(in Input) int {
	if in.Kind == RemoveTrait {
		return 404
	}
	return 400
}

// outcome is what a write can do to a settled state.
type outcome uint8

const (
	// applied: the write succeeds and effect's state is the node after.
	applied outcome = iota
	// refused: the API answers refusalStatus and nothing changes.
	refused
	// locked: only 409 NodeLocked (or no answer) is possible, because the
	// state means the node's lock is held.
	locked
)

// effect is the node after in succeeds on c, or why it cannot.
func effect(c State, in Input) (State, outcome) {
	switch in.Kind {
	case Patch:
		for _, p := range in.Patch {
			slot := &c.Dicts[p.Field][p.Key]
			switch p.Op {
			case "add":
				*slot = p.Value
			case "replace":
				if *slot == "" {
					return c, refused
				}
				*slot = p.Value
			case "remove":
				if *slot == "" {
					return c, refused
				}
				*slot = ""
			}
		}
	case SetMaintenance:
		c.Maintenance, c.Reason = true, in.Reason
	case UnsetMaintenance:
		c.Maintenance, c.Reason = false, ""
	case AddTrait:
		c.Traits |= 1 << in.Trait
	case RemoveTrait:
		if c.Traits&(1<<in.Trait) == 0 {
			return c, refused
		}
		c.Traits &^= 1 << in.Trait
	case Manage:
		switch c.Provision {
		case Enroll:
			c.Provision = Verifying
		case Available, CleanFailed:
			c.Provision = Manageable
		default:
			return c, refused
		}
	case Provide:
		if c.Provision != Manageable {
			return c, refused
		}
		c.Provision = Cleaning
	case SetPower:
		// The API refuses power actions while cleaning; otherwise the
		// exclusive lock is held from the request until the action is
		// recorded, so a second request is accepted only after it.
		if c.Provision == Cleaning {
			return c, refused
		}
		if c.PendingPower != PowerNone {
			return c, locked
		}
		c.PendingPower = in.Power
	}
	return c, applied
}

// Matches reports whether a node read from the API is s, apart from the
// pending power target (read as target_power_state, which the model does
// not compare).
func (s State) Matches(read State) bool {
	read.PendingPower = s.PendingPower
	return s == read
}

// Hash is an FNV hash of the state, for porcupine's cache.
func (s State) Hash() uint64 {
	h := fnv.New64a()
	for f := range numFields {
		for _, v := range s.Dicts[f] {
			h.Write([]byte(v))
			h.Write([]byte{0})
		}
	}
	h.Write([]byte(s.Reason))
	var m byte
	if s.Maintenance {
		m = 1
	}
	h.Write([]byte{0, m, s.Traits, byte(s.Provision), byte(s.Power), byte(s.PendingPower)})
	return h.Sum64()
}
