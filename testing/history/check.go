package history

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Infinity is the return time of an operation whose answer never came:
// it may take effect at any time after its call.
const Infinity = math.MaxInt64

// Porcupine is m as porcupine's model, with the history partitioned by
// node: nodes share nothing, so each is checked on its own.
func (m Model) Porcupine() porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Partition: partition,
		Init:      func() []any { return []any{State{}} },
		Step: func(state, input, output any) []any {
			var out []any
			for _, s := range m.Step(state.(State), input.(Input), output.(Output)) {
				out = append(out, s)
			}
			return out
		},
		Equal: func(a, b any) bool { return a.(State) == b.(State) },
		Hash:  func(s any) uint64 { return s.(State).Hash() },
		DescribeOperation: func(input, output any) string {
			return fmt.Sprintf("%s → %s", input.(Input), output.(Output))
		},
		DescribeState: func(s any) string { return s.(State).Describe() },
	}
	return nm.ToModel()
}

// partition splits a history by node, in node order.
func partition(history []porcupine.Operation) [][]porcupine.Operation {
	byNode := map[int][]porcupine.Operation{}
	for _, op := range history {
		n := op.Input.(Input).Node
		byNode[n] = append(byNode[n], op)
	}
	nodes := make([]int, 0, len(byNode))
	for n := range byNode {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	out := make([][]porcupine.Operation, len(nodes))
	for i, n := range nodes {
		out[i] = byNode[n]
	}
	return out
}

// Result is the outcome of a check.
type Result struct {
	// Verdict is porcupine's: Ok, Illegal, or Unknown when the check ran
	// out of time.
	Verdict porcupine.CheckResult
	// Visualization is the HTML file porcupine drew the history in, when
	// the history is not linearizable.
	Visualization string
	// Violations describes, per node that failed, the operations that no
	// order can explain.
	Violations []string
}

// Check checks history against m within timeout. When the history is not
// linearizable it writes porcupine's visualization to dir and explains each
// failing node: the longest prefix porcupine could linearize, the model's
// states after it, and the operations that could not come next, each with
// the reason.
func Check(m Model, history []porcupine.Operation, timeout time.Duration, dir string) (Result, error) {
	pm := m.Porcupine()
	verdict, info := porcupine.CheckOperationsVerbose(pm, history, timeout)
	res := Result{Verdict: verdict}
	if verdict != porcupine.Illegal {
		return res, nil
	}
	f, err := os.CreateTemp(dir, "history-*.html")
	if err != nil {
		return res, fmt.Errorf("visualization file: %w", err)
	}
	f.Close()
	if err := porcupine.VisualizePath(pm, info, f.Name()); err != nil {
		return res, fmt.Errorf("visualize history: %w", err)
	}
	res.Visualization, _ = filepath.Abs(f.Name())
	parts := partition(history)
	for i, partials := range info.PartialLinearizationsOperations() {
		longest := longestPartial(partials)
		if len(longest) == len(parts[i]) {
			continue
		}
		res.Violations = append(res.Violations, m.explain(parts[i], longest))
	}
	return res, nil
}

func longestPartial(partials [][]porcupine.Operation) []porcupine.Operation {
	var longest []porcupine.Operation
	for _, p := range partials {
		if len(p) > len(longest) {
			longest = p
		}
	}
	return longest
}

// explain describes why the node's history part stops at prefix: the
// states the model is in after it, and every operation that could have
// come next (no operation outside the prefix returned before it was
// called) with the answer the model expected instead.
func (m Model) explain(part, prefix []porcupine.Operation) string {
	node := part[0].Input.(Input).Node
	states := []State{{}}
	for _, op := range prefix {
		var next []State
		for _, s := range states {
			for _, n := range m.Step(s, op.Input.(Input), op.Output.(Output)) {
				if !slices.Contains(next, n) {
					next = append(next, n)
				}
			}
		}
		states = next
	}
	done := map[opKey]bool{}
	for _, op := range prefix {
		done[key(op)] = true
	}
	var rest []porcupine.Operation
	minReturn := int64(Infinity)
	for _, op := range part {
		if !done[key(op)] {
			rest = append(rest, op)
			minReturn = min(minReturn, op.Return)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "node %d: %d of %d operations linearize; after them the node is one of:\n", node, len(prefix), len(part))
	for _, s := range states {
		fmt.Fprintf(&b, "    %s\n", s.Describe())
	}
	if len(prefix) > 0 {
		fmt.Fprintf(&b, "  last linearized operations:\n")
		for _, op := range prefix[max(0, len(prefix)-5):] {
			fmt.Fprintf(&b, "    %s\n", describeOp(op))
		}
	}
	fmt.Fprintf(&b, "  none of these can come next:\n")
	for _, op := range rest {
		if op.Call > minReturn {
			continue
		}
		fmt.Fprintf(&b, "    %s\n", describeOp(op))
		for _, s := range states {
			fmt.Fprintf(&b, "      from %s: %s\n", s.Describe(), m.expected(s, op.Input.(Input)))
		}
	}
	return b.String()
}

type opKey struct {
	client    int
	call, ret int64
}

func key(op porcupine.Operation) opKey { return opKey{op.ClientId, op.Call, op.Return} }

// describeOp names an operation with its client and times in
// milliseconds from the start of the run.
func describeOp(op porcupine.Operation) string {
	ret := "∞"
	if op.Return != Infinity {
		ret = fmt.Sprintf("%.1f", float64(op.Return)/1e6)
	}
	return fmt.Sprintf("client %d [%.1f ms, %s ms] %s → %s", op.ClientId, float64(op.Call)/1e6, ret, op.Input.(Input), op.Output.(Output))
}

// expected says what the model allows in as answers from s (after any
// background conductor work).
func (m Model) expected(s State, in Input) string {
	var alts []string
	for _, c := range m.settle(s) {
		if in.Kind == Read {
			alts = append(alts, "read "+c.Describe())
			continue
		}
		after, res := effect(c, in)
		switch res {
		case applied:
			if in.Kind == Patch {
				alts = append(alts, fmt.Sprintf("%d returning %s", successStatus[in.Kind], after.Describe()))
			} else {
				alts = append(alts, fmt.Sprintf("%d then %s", successStatus[in.Kind], after.Describe()))
			}
		case refused:
			alts = append(alts, fmt.Sprint(refusalStatus(in)))
		}
	}
	if in.Kind != Read {
		alts = append(alts, "409")
	}
	return "expected " + strings.Join(slices.Compact(alts), " or ")
}
