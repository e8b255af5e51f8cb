package wire

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Diff lists every difference between the expected answer and the one
// given, one readable line each; none when they are the same to a client.
func Diff(want, got Response) []string {
	var out []string
	if want.Status != got.Status {
		out = append(out, fmt.Sprintf("status: want %d, got %d", want.Status, got.Status))
	}
	wh, gh := canonicalHeaders(want.Headers), canonicalHeaders(got.Headers)
	for _, k := range headerNames(wh, gh) {
		w, wok := wh[k]
		g, gok := gh[k]
		switch {
		case wok && !gok:
			out = append(out, fmt.Sprintf("header %s: want %q, got none", k, w))
		case !wok && gok:
			out = append(out, fmt.Sprintf("header %s: want none, got %q", k, g))
		case w != g:
			out = append(out, fmt.Sprintf("header %s: want %q, got %q", k, w, g))
		}
	}
	wd, werr := decodeJSON([]byte(want.Body))
	gd, gerr := decodeJSON([]byte(got.Body))
	switch {
	case want.Body == got.Body:
	case werr == nil && gerr == nil:
		out = append(out, diffJSON("body", wd, gd)...)
	default:
		out = append(out, fmt.Sprintf("body: want %s, got %s", quoteBody(want.Body), quoteBody(got.Body)))
	}
	return out
}

// Subset lists how got fails to hold every field of want's JSON body
// (extra fields in got are fine), besides the status and the headers want
// names: for hand-written answers to large objects whose every field is
// not worth spelling.
func Subset(want, got Response) []string {
	// Only the headers the expectation names are compared.
	named := map[string]string{}
	gh := canonicalHeaders(got.Headers)
	for k := range canonicalHeaders(want.Headers) {
		if v, ok := gh[k]; ok {
			named[k] = v
		}
	}
	full := Diff(Response{Status: want.Status, Headers: want.Headers}, Response{Status: got.Status, Headers: named})
	if want.Body == "" {
		if got.Body != "" {
			full = append(full, fmt.Sprintf("body: want no body, got %s", quoteBody(got.Body)))
		}
		return full
	}
	wd, werr := decodeJSON([]byte(want.Body))
	gd, gerr := decodeJSON([]byte(got.Body))
	if werr != nil || gerr != nil {
		return append(full, fmt.Sprintf("body: want JSON holding %s, got %s", quoteBody(want.Body), quoteBody(got.Body)))
	}
	return append(full, subsetJSON("body", wd, gd)...)
}

func canonicalHeaders(h map[string]string) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[http.CanonicalHeaderKey(k)] = v
	}
	return out
}

func quoteBody(s string) string {
	if s == "" {
		return "no body"
	}
	const max = 400
	if len(s) > max {
		s = s[:max] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// diffJSON lists the paths where two JSON values differ.
func diffJSON(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		var out []string
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			wv, wok := w[k]
			gv, gok := g[k]
			p := path + "." + k
			switch {
			case !gok:
				out = append(out, fmt.Sprintf("%s: want %s, got none", p, short(wv)))
			case !wok:
				out = append(out, fmt.Sprintf("%s: want none, got %s", p, short(gv)))
			default:
				out = append(out, diffJSON(p, wv, gv)...)
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok {
			break
		}
		if len(w) != len(g) {
			return []string{fmt.Sprintf("%s: want %d items %s, got %d items %s", path, len(w), short(w), len(g), short(g))}
		}
		var out []string
		for i := range w {
			out = append(out, diffJSON(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return out
	}
	if short(want) != short(got) {
		return []string{fmt.Sprintf("%s: want %s, got %s", path, short(want), short(got))}
	}
	return nil
}

// subsetJSON lists where got lacks or contradicts a part of want.
func subsetJSON(path string, want, got any) []string {
	if w, ok := want.(map[string]any); ok {
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object holding %s, got %s", path, short(want), short(got))}
		}
		var out []string
		for _, k := range sortedKeys(w) {
			gv, gok := g[k]
			if !gok {
				out = append(out, fmt.Sprintf("%s.%s: want %s, got none", path, k, short(w[k])))
				continue
			}
			out = append(out, subsetJSON(path+"."+k, w[k], gv)...)
		}
		return out
	}
	return diffJSON(path, want, got)
}

func short(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	s := strings.TrimSuffix(b.String(), "\n")
	const max = 300
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// describe is a step's request in one line, for failure messages.
func describe(st *Step) string {
	if st.Raw != "" {
		line, _, _ := strings.Cut(st.Raw, "\n")
		return "raw " + line
	}
	s := st.Method + " " + st.Path
	if st.Version != "" {
		s += " @" + st.Version
	}
	return s
}
