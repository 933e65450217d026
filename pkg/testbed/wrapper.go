package testbed

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// buildGroup is one wrapper Go module that builds a set of upstream commands
// from a single pinned module release.
type buildGroup struct {
	name    string // cache folder prefix: kubernetes, etcd, kwok
	module  string
	version string
	// commands are the main packages to build; the binary is named after
	// the last path element, or binName when the package is the module root.
	commands []string
	binName  string
	// replaces, computed lazily for kubernetes, map staging modules to releases.
	replaces func(ctx context.Context, goBin, dir string) ([]string, error)
	ldflags  []string
	// after runs once the binaries are built (kwok writes its stage file).
	after func(ctx context.Context, goBin, dir string) error
	// estimate tells the user how long a cold build takes on 2 cores.
	estimate string
	// static builds without cgo: the binary runs in a scratch image.
	static bool
	// sources are extra files written into the wrapper module (a main
	// package of our own, such as the pause program); with no module, the
	// wrapper module is the program itself.
	sources map[string][]byte
}

// buildGroups lists the wrapper modules to build: the control plane always,
// and the real nodes' binaries (kubelet, kube-proxy, CoreDNS,
// metrics-server, pause) only when realNodes is set, since they double a
// cold build.
func buildGroups(v Versions, realNodes bool) ([]buildGroup, error) {
	staging, err := stagingVersion(v.Kubernetes)
	if err != nil {
		return nil, err
	}
	minor := strings.Split(strings.TrimPrefix(v.Kubernetes, "v"), ".")[1]
	var ld []string
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		ld = append(ld, "-X", pkg+".gitVersion="+v.Kubernetes, "-X", pkg+".gitMajor=1",
			"-X", pkg+".gitMinor="+minor, "-X", pkg+".gitTreeState=clean")
	}
	groups := []buildGroup{
		{
			name: "etcd", module: "go.etcd.io/etcd/server/v3", version: v.Etcd,
			commands: []string{"go.etcd.io/etcd/server/v3"}, binName: "etcd",
			estimate: "~1 min",
		},
		{
			name: "kubernetes", module: "k8s.io/kubernetes", version: v.Kubernetes,
			commands: []string{
				"k8s.io/kubernetes/cmd/kube-apiserver",
				"k8s.io/kubernetes/cmd/kube-controller-manager",
				"k8s.io/kubernetes/cmd/kube-scheduler",
				"k8s.io/kubernetes/cmd/kubectl",
			},
			replaces: func(ctx context.Context, goBin, dir string) ([]string, error) {
				return stagingReplaces(ctx, goBin, dir, v.Kubernetes, staging)
			},
			ldflags:  ld,
			estimate: "~6 min",
		},
		{
			name: "kwok", module: "sigs.k8s.io/kwok", version: v.Kwok,
			commands: []string{"sigs.k8s.io/kwok/cmd/kwok"},
			after:    writeKwokStages,
			estimate: "~2 min",
		},
	}
	if !realNodes {
		return groups, nil
	}
	return append(groups,
		buildGroup{
			name: "kubernetes-node", module: "k8s.io/kubernetes", version: v.Kubernetes,
			commands: []string{"k8s.io/kubernetes/cmd/kubelet", "k8s.io/kubernetes/cmd/kube-proxy"},
			replaces: func(ctx context.Context, goBin, dir string) ([]string, error) {
				return stagingReplaces(ctx, goBin, dir, v.Kubernetes, staging)
			},
			ldflags: ld,
			// Most packages are in the build cache after the control plane.
			estimate: "~1 min",
		},
		buildGroup{
			name: "coredns", module: "github.com/coredns/coredns", version: v.CoreDNS,
			commands: []string{"github.com/coredns/coredns"}, binName: "coredns",
			static: true, estimate: "~2½ min",
		},
		buildGroup{
			name: "metrics-server", module: "sigs.k8s.io/metrics-server", version: v.MetricsServer,
			commands: []string{"sigs.k8s.io/metrics-server/cmd/metrics-server"},
			static:   true, estimate: "~3 min",
		},
		buildGroup{
			name: "pause", version: pauseVersion,
			commands: []string{"liqo-testbed/pause"}, binName: "pause",
			static: true, sources: map[string][]byte{"main.go": pauseSource}, estimate: "a few seconds",
		},
	), nil
}

func (g buildGroup) dirName() string { return g.name + "-" + g.version }

func (g buildGroup) commandNames() []string {
	names := make([]string, len(g.commands))
	for i, c := range g.commands {
		names[i] = path.Base(c)
		if (c == g.module || g.module == "") && g.binName != "" {
			names[i] = g.binName
		}
	}
	return names
}

// build writes the wrapper module into dir/src and builds its commands into
// dir/bin, marking dir complete only when everything succeeded.
func (g buildGroup) build(ctx context.Context, goBin, dir string, progress io.Writer) error {
	src := filepath.Join(dir, "src")
	bin := filepath.Join(dir, "bin")
	for _, d := range []string{src, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	fmt.Fprintf(progress, "testbed: building %s %s from the Go module proxy (first build %s on 2 cores)\n",
		strings.Join(g.commandNames(), ", "), g.version, g.estimate)
	start := time.Now()

	if err := g.writeModule(ctx, goBin, src); err != nil {
		return err
	}
	if err := runWithProgress(goCmd(ctx, goBin, src, "mod", "tidy"), progress, "resolving modules", 30*time.Second); err != nil {
		return err
	}
	args := []string{"build", "-trimpath", "-ldflags", strings.Join(append([]string{"-s", "-w"}, g.ldflags...), " ")}
	if len(g.commands) == 1 {
		args = append(args, "-o", filepath.Join(bin, g.commandNames()[0]))
	} else {
		args = append(args, "-o", bin+string(filepath.Separator))
	}
	args = append(args, g.commands...)
	compile := goCmd(ctx, goBin, src, args...)
	if g.static {
		compile.Env = append(compile.Env, "CGO_ENABLED=0")
	}
	if err := runWithProgress(compile, progress, "compiling "+g.name, 30*time.Second); err != nil {
		return err
	}
	if g.after != nil {
		if err := g.after(ctx, goBin, dir); err != nil {
			return err
		}
	}
	fmt.Fprintf(progress, "testbed: built %s in %s\n", strings.Join(g.commandNames(), ", "), time.Since(start).Round(time.Second))
	return os.WriteFile(filepath.Join(dir, completeMarker), []byte(g.module+" "+g.version+"\n"), 0o644)
}

// writeModule writes go.mod and a tools file importing every command, so
// that `go mod tidy` records the full go.sum the build needs.
func (g buildGroup) writeModule(ctx context.Context, goBin, src string) error {
	var mod bytes.Buffer
	fmt.Fprintf(&mod, "module liqo-testbed/%s\n\ngo 1.24\n", g.name)
	if g.module != "" {
		fmt.Fprintf(&mod, "\nrequire %s %s\n", g.module, g.version)
	}
	for name, data := range g.sources {
		if err := os.WriteFile(filepath.Join(src, name), data, 0o644); err != nil {
			return err
		}
	}
	if g.module == "" {
		return os.WriteFile(filepath.Join(src, "go.mod"), mod.Bytes(), 0o644)
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), mod.Bytes(), 0o644); err != nil {
		return err
	}
	if g.replaces != nil {
		reps, err := g.replaces(ctx, goBin, src)
		if err != nil {
			return err
		}
		mod.WriteString("\nreplace (\n")
		for _, r := range reps {
			mod.WriteString("\t" + r + "\n")
		}
		mod.WriteString(")\n")
		if err := os.WriteFile(filepath.Join(src, "go.mod"), mod.Bytes(), 0o644); err != nil {
			return err
		}
	}
	var tools bytes.Buffer
	tools.WriteString("//go:build tools\n\n// Package tools pins the commands this wrapper module builds.\npackage tools\n\nimport (\n")
	for _, c := range g.commands {
		fmt.Fprintf(&tools, "\t_ %q\n", c)
	}
	tools.WriteString(")\n")
	return os.WriteFile(filepath.Join(src, "tools.go"), tools.Bytes(), 0o644)
}

// stagingReplaces reads k8s.io/kubernetes' own go.mod, whose replace lines
// point every k8s.io staging module at ./staging, and maps each of them to
// its published release instead.
func stagingReplaces(ctx context.Context, goBin, dir, k8s, staging string) ([]string, error) {
	out, err := goCmd(ctx, goBin, dir, "mod", "download", "-json", "k8s.io/kubernetes@"+k8s).Output()
	if err != nil {
		return nil, fmt.Errorf("downloading k8s.io/kubernetes@%s: %w", k8s, exitDetail(err))
	}
	var info struct{ GoMod string }
	if err := json.Unmarshal(out, &info); err != nil || info.GoMod == "" {
		return nil, fmt.Errorf("reading the download info of k8s.io/kubernetes@%s: %v", k8s, err)
	}
	f, err := os.Open(info.GoMod)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var reps []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 3 && fields[1] == "=>" && strings.HasPrefix(fields[2], "./staging/") {
			reps = append(reps, fmt.Sprintf("%s => %s %s", fields[0], fields[0], staging))
		}
	}
	if len(reps) == 0 {
		return nil, fmt.Errorf("k8s.io/kubernetes@%s has no staging replace lines in %s", k8s, info.GoMod)
	}
	return reps, sc.Err()
}

// writeKwokStages concatenates kwok's shipped stages into one config file.
func writeKwokStages(ctx context.Context, goBin, dir string) error {
	out, err := goCmd(ctx, goBin, filepath.Join(dir, "src"), "list", "-m", "-json", "sigs.k8s.io/kwok").Output()
	if err != nil {
		return fmt.Errorf("locating the kwok module: %w", exitDetail(err))
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		return fmt.Errorf("locating the kwok module: %v", err)
	}
	var all bytes.Buffer
	for _, f := range kwokStageFiles {
		data, err := os.ReadFile(filepath.Join(info.Dir, f))
		if err != nil {
			return fmt.Errorf("reading kwok stage: %w", err)
		}
		all.WriteString("---\n")
		all.Write(data)
		all.WriteString("\n")
	}
	return os.WriteFile(filepath.Join(dir, "stages.yaml"), all.Bytes(), 0o644)
}

func goCmd(ctx context.Context, goBin, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = dir
	// The wrapper modules live outside any workspace and must resolve freely.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod -buildvcs=false"))
	return cmd
}

func exitDetail(err error) error {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
	}
	return err
}
