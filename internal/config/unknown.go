package config

import (
	"fmt"
	"sort"
)

// Unknown is a section or option of a configuration file that no table
// entry knows. oslo.config ignores such names without a word, so a
// misspelt option silently keeps its default; we ignore them too, but the
// service reports each one with the closest known name.
type Unknown struct {
	// Section is the section as written (folded as oslo.config folds it).
	Section string
	// Option is empty when the whole section is unknown.
	Option string
	// File is the configuration file that holds it.
	File string
	// Suggestion is the closest known name ("[api]" for a section,
	// "[api]/port" for an option), or empty when nothing is close.
	Suggestion string
}

// String says what was ignored and what was probably meant.
func (u Unknown) String() string {
	what := "unknown section [" + u.Section + "]"
	if u.Option != "" {
		what = "unknown option " + Name{u.Section, u.Option}.String()
	}
	s := fmt.Sprintf("%s in %s is ignored", what, u.File)
	if u.Suggestion != "" {
		s += "; did you mean " + u.Suggestion + "?"
	}
	return s
}

// Unknown lists the unknown sections and options of the files read, in
// file order; an unknown section is listed once, not each of its options.
func (c *Config) Unknown() []Unknown { return append([]Unknown(nil), c.unknown...) }

func findUnknown(files []*parsedFile) []Unknown {
	var out []Unknown
	for _, f := range files {
		seenSection := map[string]bool{}
		for _, n := range f.order {
			switch {
			case !registry.sections[n.Section]:
				if !seenSection[n.Section] {
					seenSection[n.Section] = true
					out = append(out, Unknown{Section: n.Section, File: f.path, Suggestion: suggestSection(n.Section)})
				}
			case !registry.known[n]:
				out = append(out, Unknown{Section: n.Section, Option: n.Name, File: f.path, Suggestion: suggestOption(n)})
			}
		}
	}
	return out
}

// suggestSection is the known section closest to s, if close enough.
func suggestSection(s string) string {
	names := make([]string, 0, len(registry.sections))
	for sec := range registry.sections {
		names = append(names, sec)
	}
	if best, ok := closest(s, names); ok {
		return "[" + best + "]"
	}
	return ""
}

// suggestOption is the current option name closest to n: a near name in its own
// section first; else the same or a near name in another section, for an
// option written under the wrong heading ([DEFAULT] port for [api] port).
func suggestOption(n Name) string {
	var here []string
	byName := map[string][]string{}
	for k := range registry.byName {
		if k.Section == n.Section {
			here = append(here, k.Name)
		}
		byName[k.Name] = append(byName[k.Name], k.Section)
	}
	if best, ok := closest(n.Name, here); ok {
		return Name{n.Section, best}.String()
	}
	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	best, ok := closest(n.Name, names)
	if !ok {
		return ""
	}
	sections := byName[best]
	sort.Strings(sections)
	return Name{sections[0], best}.String()
}

// closest returns the candidate nearest to s by edit distance, ties broken
// alphabetically; ok is false when none is within a third of the name's
// length (at least one edit, at most three), so that an unrelated name
// gets no suggestion.
func closest(s string, candidates []string) (string, bool) {
	limit := min(max(len(s)/3, 1), 3)
	sort.Strings(candidates)
	best, bestD := "", limit+1
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best, bestD <= limit
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and transpositions of adjacent bytes each
// count one, so "prot" is one edit from "port".
func editDistance(a, b string) int {
	// Three rows of the dynamic programme: two back, previous, current.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
