package charttest

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const dockerfilePath = "../../../Dockerfile"

// instruction is one Dockerfile instruction with continuations joined.
type instruction struct {
	Cmd  string // upper case
	Args string
	Line int
}

// parseDockerfile reads the instructions of a Dockerfile: comments and
// blank lines dropped, backslash continuations joined. Heredocs are refused
// rather than misread.
func parseDockerfile(src string) ([]instruction, error) {
	var out []instruction
	var cur strings.Builder
	start := 0
	for i, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if strings.Contains(trimmed, "<<") {
			return nil, fmt.Errorf("line %d: heredocs are not parsed", i+1)
		}
		if s, ok := strings.CutSuffix(trimmed, `\`); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(trimmed)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{Cmd: strings.ToUpper(cmd), Args: strings.Join(strings.Fields(args), " "), Line: start})
		cur.Reset()
	}
	if cur.Len() > 0 {
		return nil, fmt.Errorf("line %d: continuation at end of file", start)
	}
	return out, nil
}

// stage is one FROM and what follows it.
type stage struct {
	From, Name string
	Body       []instruction
}

func stages(ins []instruction) []stage {
	var out []stage
	for _, in := range ins {
		if in.Cmd == "FROM" {
			f := strings.Fields(in.Args)
			s := stage{From: f[len(f)-1]}
			if len(f) >= 3 && strings.EqualFold(f[len(f)-2], "AS") {
				s.From, s.Name = f[len(f)-3], f[len(f)-1]
			}
			out = append(out, s)
			continue
		}
		if len(out) > 0 {
			out[len(out)-1].Body = append(out[len(out)-1].Body, in)
		}
	}
	return out
}

var (
	pinnedTag = regexp.MustCompile(`^[a-z0-9./-]+:[A-Za-z0-9._-]*[0-9][A-Za-z0-9._-]*$`)
	digest    = regexp.MustCompile(`@sha256:[a-f0-9]{64}$`)
	remoteSrc = regexp.MustCompile(`(?i)^(https?|ftp|git)://|^git@`)
)

// checkDockerfile lists what is wrong with a Dockerfile against the
// image rules: base images pinned, no remote ADD, a numeric non-root USER
// in the final stage, and exactly the runtime packages the binary needs.
func checkDockerfile(src string, runtimePackages []string) []string {
	ins, err := parseDockerfile(src)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	st := stages(ins)
	if len(st) < 2 {
		problems = append(problems, fmt.Sprintf("%d stage(s): the build and the runtime must be separate stages", len(st)))
	}
	names := map[string]bool{}
	for _, s := range st {
		if !names[s.From] && !pinnedTag.MatchString(s.From) && !digest.MatchString(s.From) {
			problems = append(problems, fmt.Sprintf("base image %q is not pinned by a version tag or digest", s.From))
		}
		if strings.HasSuffix(s.From, ":latest") {
			problems = append(problems, fmt.Sprintf("base image %q uses latest", s.From))
		}
		if s.Name != "" {
			names[s.Name] = true
		}
	}
	for _, in := range ins {
		if in.Cmd != "ADD" {
			continue
		}
		for _, f := range strings.Fields(in.Args) {
			if remoteSrc.MatchString(f) {
				problems = append(problems, fmt.Sprintf("line %d: ADD of a URL (%s)", in.Line, f))
			}
		}
	}
	if len(st) == 0 {
		return append(problems, "no FROM")
	}
	final := st[len(st)-1]
	user := ""
	var packages []string
	for _, in := range final.Body {
		switch in.Cmd {
		case "USER":
			user = in.Args
		case "RUN":
			for cmd := range strings.SplitSeq(in.Args, "&&") {
				f := strings.Fields(cmd)
				i := slices.Index(f, "install")
				if i < 1 || !strings.HasSuffix(f[i-1], "apt-get") {
					continue
				}
				if !slices.Contains(f, "--no-install-recommends") {
					problems = append(problems, fmt.Sprintf("line %d: apt-get install without --no-install-recommends", in.Line))
				}
				for _, a := range f[i+1:] {
					if !strings.HasPrefix(a, "-") {
						packages = append(packages, a)
					}
				}
			}
		}
	}
	uid, _, _ := strings.Cut(user, ":")
	switch {
	case user == "":
		problems = append(problems, "the final stage sets no USER: it would run as root")
	case !regexp.MustCompile(`^[0-9]+$`).MatchString(uid):
		problems = append(problems, fmt.Sprintf("USER %q is not numeric: the kubelet cannot check runAsNonRoot", user))
	case strings.TrimLeft(uid, "0") == "":
		problems = append(problems, fmt.Sprintf("USER %q is root", user))
	}
	slices.Sort(packages)
	want := slices.Clone(runtimePackages)
	slices.Sort(want)
	if !slices.Equal(packages, want) {
		problems = append(problems, fmt.Sprintf("runtime packages %v, want exactly %v", packages, want))
	}
	return problems
}

// runtimePackages are what the binary shells out to (and the CA roots).
var runtimePackages = []string{"ca-certificates", "dosfstools", "ipmitool", "mtools", "qemu-utils", "socat", "xorriso"}

func TestDockerfile(t *testing.T) {
	src, err := os.ReadFile(dockerfilePath)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkDockerfile(string(src), runtimePackages) {
		t.Error(p)
	}
}

// TestDockerfileChecks: each rule catches the Dockerfile that breaks it.
func TestDockerfileChecks(t *testing.T) {
	good := `FROM golang:1.26.8-trixie AS build
RUN go build -o /out/ironic ./cmd/ironic
FROM debian:13.1-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ipmitool socat
COPY --from=build /out/ironic /usr/bin/ironic
USER 10001:10001
`
	pkgs := []string{"ipmitool", "socat"}
	if p := checkDockerfile(good, pkgs); len(p) > 0 {
		t.Fatalf("the good Dockerfile fails: %v", p)
	}
	cases := []struct{ name, from, to, want string }{
		{"unpinned base", "FROM debian:13.1-slim", "FROM debian", "not pinned"},
		{"latest base", "FROM debian:13.1-slim", "FROM debian:latest", "latest"},
		{"moving tag", "FROM debian:13.1-slim", "FROM debian:trixie-slim", "not pinned"},
		{"no user", "USER 10001:10001\n", "", "no USER"},
		{"root user", "USER 10001:10001", "USER 0", "root"},
		{"named user", "USER 10001:10001", "USER ironic", "not numeric"},
		{"remote add", "COPY --from=build", "ADD https://example.com/x /x\nCOPY --from=build", "ADD of a URL"},
		{"extra package", "ipmitool socat", "ipmitool socat curl", "want exactly"},
		{"missing package", "ipmitool socat", "ipmitool", "want exactly"},
		{"recommends", "--no-install-recommends ", "", "without --no-install-recommends"},
		{"one stage", "FROM golang:1.26.8-trixie AS build\nRUN go build -o /out/ironic ./cmd/ironic\n", "", "separate stages"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := strings.Replace(good, c.from, c.to, 1)
			if bad == good {
				t.Fatalf("case does not change the Dockerfile")
			}
			p := checkDockerfile(bad, pkgs)
			if !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, c.want) }) {
				t.Errorf("problems %v lack %q", p, c.want)
			}
		})
	}
}

// TestImageLayout builds the binary as the Dockerfile does and lays out its
// links the way the Dockerfile's RUN ln -s lines do, then checks that each
// upstream program name runs the mode it names.
func TestImageLayout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	src, err := os.ReadFile(dockerfilePath)
	if err != nil {
		t.Fatal(err)
	}
	ins, err := parseDockerfile(string(src))
	if err != nil {
		t.Fatal(err)
	}
	st := stages(ins)
	final := st[len(st)-1]
	root := t.TempDir()
	binary := ""
	var entrypoint string
	for _, in := range final.Body {
		switch in.Cmd {
		case "COPY":
			f := strings.Fields(in.Args)
			if strings.HasPrefix(f[0], "--from=") && strings.HasSuffix(f[len(f)-2], "/ironic") {
				binary = f[len(f)-1]
			}
		case "ENTRYPOINT":
			entrypoint = strings.Trim(strings.TrimSuffix(strings.TrimPrefix(in.Args, "["), "]"), `"`)
		}
	}
	if binary == "" || entrypoint != binary {
		t.Fatalf("binary copied to %q, ENTRYPOINT %q", binary, entrypoint)
	}
	dst := filepath.Join(root, binary)
	build := exec.Command("go", "build", "-trimpath", "-o", dst, "./cmd/ironic")
	build.Dir = "../../.."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// The runtime stage carries no Go toolchain and need not carry the C
	// library the build stage has: the binary must be static.
	exe, err := elf.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	for _, p := range exe.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s is dynamically linked (has an ELF interpreter)", binary)
		}
	}
	if libs, err := exe.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v (%v)", binary, libs, err)
	}
	links := map[string]string{}
	for _, in := range final.Body {
		if in.Cmd != "RUN" {
			continue
		}
		for cmd := range strings.SplitSeq(in.Args, "&&") {
			f := strings.Fields(cmd)
			if len(f) == 4 && f[0] == "ln" && f[1] == "-s" {
				links[f[3]] = f[2]
				if err := os.Symlink(f[2], filepath.Join(root, f[3])); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// A program name fixes the mode, so an extra word is refused by that
	// mode, and the refusal names it.
	want := map[string]string{"ironic-api": "api takes no arguments", "ironic-conductor": "conductor takes no arguments"}
	for name, msg := range want {
		path := filepath.Join(filepath.Dir(binary), name)
		if _, ok := links[path]; !ok {
			t.Errorf("the Dockerfile links no %s", path)
			continue
		}
		var stderr bytes.Buffer
		cmd := exec.Command(filepath.Join(root, path), "extra")
		cmd.Stderr = &stderr
		err := cmd.Run()
		if err == nil || !strings.Contains(stderr.String(), msg) {
			t.Errorf("%s extra: err %v, stderr %q; want %q", name, err, stderr.String(), msg)
		}
	}
	dbsync := filepath.Join(filepath.Dir(binary), "ironic-dbsync")
	if _, ok := links[dbsync]; !ok {
		t.Errorf("the Dockerfile links no %s", dbsync)
	}
}
