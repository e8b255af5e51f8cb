// Command record asks a live upstream Ironic (Debian's 21.4, run by
// reference-ironic.sh) for the answers to the corpus's steps and writes
// them to test/wire/recorded/, one file per scenario. Every scenario
// starts from an empty database (the script's reset). Scenarios written by
// hand from master's source are skipped.
//
//	go run ./test/wire/record [-keep] [scenario ...]
//
// With -print HOST:PORT it writes nothing and starts nothing: it prints
// the answers of the running server at that address instead (one that
// serves from an empty database), to see what a step yields.
//
// REFIRONIC_SCRIPT is the path of reference-ironic.sh (default
// ../shared/tools/reference-ironic.sh from the module root); REFIRONIC_DIR
// (default /tmp/refironic-wire) and REFIRONIC_PORT (default 6394) are the
// script's own knobs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/openkeel/ironic/test/wire"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
}

func run() error {
	keep := flag.Bool("keep", false, "leave the upstream instance running at the end")
	printFrom := flag.String("print", "", "print the answers of the server at this host:port instead of recording")
	flag.Parse()
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	ref := &reference{
		script: envOr("REFIRONIC_SCRIPT", filepath.Join(root, "..", "shared", "tools", "reference-ironic.sh")),
		dir:    envOr("REFIRONIC_DIR", "/tmp/refironic-wire"),
		port:   envOr("REFIRONIC_PORT", "6394"),
	}
	dir := filepath.Join(root, "test", "wire")
	corpus, err := wire.LoadCorpus(dir)
	if err != nil {
		return err
	}
	selected := func(sc *wire.Scenario) bool {
		return flag.NArg() == 0 || slices.Contains(flag.Args(), sc.Name)
	}
	if *printFrom != "" {
		return printAnswers(*printFrom, corpus, selected)
	}
	upstream, err := exec.Command("dpkg-query", "-W", "-f=python3-ironic ${Version}", "python3-ironic").Output()
	if err != nil {
		return fmt.Errorf("which upstream: %w", err)
	}
	if !*keep {
		defer ref.do("stop")
	}
	ctx := context.Background()
	var failed []string
	for _, sc := range corpus {
		if sc.Source != "" || !selected(sc) {
			continue
		}
		if err := ref.do("reset"); err != nil {
			return err
		}
		rec := &wire.Recording{Upstream: string(upstream)}
		for _, o := range wire.Run(ctx, "127.0.0.1:"+ref.port, sc) {
			if o.Err != nil {
				failed = append(failed, sc.Name+": "+o.Err.Error())
			}
			rec.Steps = append(rec.Steps, wire.RecordedStep{ID: o.Step.ID, Response: o.Response})
		}
		if err := rec.Save(wire.RecordingPath(dir, sc.Name)); err != nil {
			return err
		}
		fmt.Printf("%s: %d steps\n", sc.Name, len(rec.Steps))
	}
	if len(failed) > 0 {
		// The answers are written all the same: a step that upstream
		// cannot complete is a step to rewrite, and its answer shows why.
		return fmt.Errorf("steps that failed:\n  %s", strings.Join(failed, "\n  "))
	}
	return nil
}

func printAnswers(host string, corpus []*wire.Scenario, selected func(*wire.Scenario) bool) error {
	for _, sc := range corpus {
		if !selected(sc) {
			continue
		}
		var steps []wire.RecordedStep
		for _, o := range wire.Run(context.Background(), host, sc) {
			if o.Err != nil {
				fmt.Fprintln(os.Stderr, o.Err)
			}
			steps = append(steps, wire.RecordedStep{ID: o.Step.ID, Response: o.Response})
		}
		b, err := yaml.Marshal(map[string]any{sc.Name: steps})
		if err != nil {
			return err
		}
		os.Stdout.Write(b)
	}
	return nil
}

// reference is the upstream instance, driven by its script.
type reference struct {
	script, dir, port string
}

func (r *reference) do(verb string) error {
	cmd := exec.Command(r.script, verb)
	cmd.Env = append(os.Environ(), "REFIRONIC_DIR="+r.dir, "REFIRONIC_PORT="+r.port)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", r.script, verb, err, out)
	}
	return nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}
