package history

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// op is one recorded operation of a hand-written history.
func op(client int, call, ret int64, in Input, out Output) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Return: ret, Output: out}
}

func patch(ops ...PatchOp) Input { return Input{Kind: Patch, Patch: ops} }

func add(f Field, k int, v string) PatchOp { return PatchOp{Op: "add", Field: f, Key: k, Value: v} }

func remove(f Field, k int) PatchOp { return PatchOp{Op: "remove", Field: f, Key: k} }

// node is a node as read, built from the zero state.
func node(edit func(*State)) *State {
	var s State
	edit(&s)
	return &s
}

func ok(status int, n *State) Output { return Output{Status: status, Node: n} }

var (
	read    = Input{Kind: Read}
	empty   = node(func(*State) {})
	extraA  = node(func(s *State) { s.Dicts[Extra][0] = "a" })
	propsB  = node(func(s *State) { s.Dicts[Properties][0] = "b" })
	bothAB  = node(func(s *State) { s.Dicts[Extra][0] = "a"; s.Dicts[Properties][0] = "b" })
	verify  = node(func(s *State) { s.Provision = Verifying })
	managed = node(func(s *State) { s.Provision = Manageable })
	avail   = node(func(s *State) { s.Provision = Available })
	powerOn = node(func(s *State) { s.Power = PowerOn })
)

func TestModel(t *testing.T) {
	cases := []struct {
		name    string
		crashes bool
		history []porcupine.Operation
		want    porcupine.CheckResult
	}{
		{"read your write", false, []porcupine.Operation{
			op(0, 0, 10, patch(add(Extra, 0, "a")), ok(200, extraA)),
			op(0, 11, 20, read, ok(200, extraA)),
		}, porcupine.Ok},
		{"concurrent patches of two dicts both survive", false, []porcupine.Operation{
			op(0, 0, 10, patch(add(Extra, 0, "a")), ok(200, extraA)),
			op(1, 0, 10, patch(add(Properties, 0, "b")), ok(200, bothAB)),
			op(0, 11, 20, read, ok(200, bothAB)),
		}, porcupine.Ok},
		{"a patch answers a node without the other's acknowledged key", false, []porcupine.Operation{
			op(0, 0, 10, patch(add(Extra, 0, "a")), ok(200, extraA)),
			op(1, 0, 10, patch(add(Properties, 0, "b")), ok(200, propsB)),
		}, porcupine.Illegal},
		{"an acknowledged key lost later", false, []porcupine.Operation{
			op(0, 0, 10, patch(add(Extra, 0, "a")), ok(200, extraA)),
			op(1, 5, 15, patch(add(Properties, 0, "b")), ok(200, bothAB)),
			op(0, 20, 30, read, ok(200, propsB)),
		}, porcupine.Illegal},
		{"removing an absent key is refused", false, []porcupine.Operation{
			op(0, 0, 10, patch(remove(Extra, 0)), Output{Status: 400}),
			op(0, 11, 20, read, ok(200, empty)),
		}, porcupine.Ok},
		{"removing an absent key succeeds", false, []porcupine.Operation{
			op(0, 0, 10, patch(remove(Extra, 0)), ok(200, empty)),
		}, porcupine.Illegal},
		{"a patch refused as a whole changes nothing", false, []porcupine.Operation{
			op(0, 0, 10, patch(add(Extra, 0, "a"), remove(Properties, 1)), Output{Status: 400}),
			op(0, 11, 20, read, ok(200, extraA)),
		}, porcupine.Illegal},
		{"a 409 changes nothing", false, []porcupine.Operation{
			op(0, 0, 10, patch(add(Extra, 0, "a")), Output{Status: 409}),
			op(0, 11, 20, read, ok(200, extraA)),
		}, porcupine.Illegal},
		{"a 503 may have taken effect", false, []porcupine.Operation{
			op(0, 0, 10, patch(add(Extra, 0, "a")), Output{Status: 503, Unknown: true}),
			op(0, 11, 20, read, ok(200, extraA)),
		}, porcupine.Ok},
		{"a 503 may not have taken effect", false, []porcupine.Operation{
			op(0, 0, 10, patch(add(Extra, 0, "a")), Output{Status: 503, Unknown: true}),
			op(0, 11, 20, read, ok(200, empty)),
		}, porcupine.Ok},
		{"a request without answer may take effect after later reads", false, []porcupine.Operation{
			op(0, 0, Infinity, patch(add(Extra, 0, "a")), Output{Unknown: true}),
			op(1, 11, 20, read, ok(200, empty)),
			op(1, 21, 30, read, ok(200, extraA)),
		}, porcupine.Ok},
		{"manage from enroll verifies, then manageable", false, []porcupine.Operation{
			op(0, 0, 10, Input{Kind: Manage}, Output{Status: 202}),
			op(0, 11, 20, read, ok(200, verify)),
			op(0, 21, 30, read, ok(200, managed)),
			op(0, 31, 40, Input{Kind: Manage}, Output{Status: 400}),
			op(0, 41, 50, Input{Kind: Provide}, Output{Status: 202}),
			op(0, 51, 60, read, ok(200, avail)),
		}, porcupine.Ok},
		{"provide from enroll", false, []porcupine.Operation{
			op(0, 0, 10, Input{Kind: Provide}, Output{Status: 202}),
		}, porcupine.Illegal},
		{"verifying never goes back without a crash", false, []porcupine.Operation{
			op(0, 0, 10, Input{Kind: Manage}, Output{Status: 202}),
			op(0, 11, 20, read, ok(200, empty)),
		}, porcupine.Illegal},
		{"a crash fails verifying back to enroll", true, []porcupine.Operation{
			op(0, 0, 10, Input{Kind: Manage}, Output{Status: 202}),
			op(0, 11, 20, read, ok(200, empty)),
		}, porcupine.Ok},
		{"power on is recorded after the 202", false, []porcupine.Operation{
			op(0, 0, 10, Input{Kind: SetPower, Power: PowerOn}, Output{Status: 202}),
			op(0, 11, 20, read, ok(200, empty)),
			op(0, 21, 30, read, ok(200, powerOn)),
		}, porcupine.Ok},
		{"a recorded power state reverted", false, []porcupine.Operation{
			op(0, 0, 10, Input{Kind: SetPower, Power: PowerOn}, Output{Status: 202}),
			op(0, 11, 20, read, ok(200, powerOn)),
			op(0, 21, 30, read, ok(200, empty)),
		}, porcupine.Illegal},
		{"acknowledged maintenance reverted by a concurrent patch", false, []porcupine.Operation{
			op(0, 0, 10, Input{Kind: SetMaintenance, Reason: "r"}, Output{Status: 202}),
			op(1, 5, 15, patch(add(Extra, 0, "a")), ok(200, extraA)),
			op(0, 20, 30, read, ok(200, extraA)),
		}, porcupine.Illegal},
		{"trait removal answers 404 when absent", false, []porcupine.Operation{
			op(0, 0, 10, Input{Kind: RemoveTrait, Trait: 1}, Output{Status: 404}),
			op(0, 11, 20, Input{Kind: AddTrait, Trait: 1}, Output{Status: 204}),
			op(0, 21, 30, Input{Kind: RemoveTrait, Trait: 1}, Output{Status: 204}),
			op(0, 31, 40, Input{Kind: RemoveTrait, Trait: 1}, Output{Status: 204}),
		}, porcupine.Illegal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Check(Model{Crashes: tc.crashes}, tc.history, 10*time.Second, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tc.want {
				t.Fatalf("verdict %s, want %s", res.Verdict, tc.want)
			}
			if tc.want == porcupine.Illegal && (len(res.Violations) == 0 || res.Visualization == "") {
				t.Fatalf("an illegal history without its report: %+v", res)
			}
		})
	}
}

// A violation names the node, writes the visualization and shows the
// operation that cannot come next with what the model expected instead.
func TestCheckReport(t *testing.T) {
	history := []porcupine.Operation{
		op(0, 0, 10, patch(add(Extra, 0, "a")), ok(200, extraA)),
		op(1, 5, 15, patch(add(Properties, 0, "b")), ok(200, bothAB)),
		op(2, 20, 30, read, ok(200, propsB)),
	}
	for i := range history {
		in := history[i].Input.(Input)
		in.Node = 3
		history[i].Input = in
	}
	res, err := Check(Model{}, history, 10*time.Second, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) != 1 {
		t.Fatalf("violations %q", res.Violations)
	}
	if _, err := os.Stat(res.Visualization); err != nil {
		t.Fatalf("visualization: %v", err)
	}
	v := res.Violations[0]
	t.Logf("report:\n%s", v)
	for _, want := range []string{
		"node 3: 2 of 3 operations linearize",
		"client 2 [0.0 ms, 0.0 ms] GET → 200 {properties{h0=b} enroll null}",
		"expected read {extra{h0=a} properties{h0=b} enroll null}",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("report lacks %q:\n%s", want, v)
		}
	}
}
