package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/liqo-go/liqo/pkg/proc"
)

// Binaries holds the absolute paths of the testbed executables.
type Binaries struct {
	Etcd              string
	APIServer         string
	ControllerManager string
	Scheduler         string
	Kubectl           string
	Kwok              string
	// KwokStages is a kwok configuration file holding the node and pod
	// lifecycle stages shipped with the pinned kwok release.
	KwokStages string

	// The real nodes' binaries, empty unless built with RealNodes.
	Kubelet   string
	KubeProxy string
	// CoreDNS and Pause are static binaries for the images the testbed
	// serves from its registry.
	CoreDNS string
	Pause   string
	// MetricsServer is the static metrics-server binary of its image.
	MetricsServer string
	// Versions are the releases these binaries are of.
	Versions Versions
}

// HasRealNodeBinaries tells whether the real nodes' binaries were built.
func (b *Binaries) HasRealNodeBinaries() bool { return b.Kubelet != "" }

// BuildOptions configures EnsureBinaries.
type BuildOptions struct {
	// CacheDir holds one folder per pinned release; DefaultCacheDir() if empty.
	CacheDir string
	// Versions to build; DefaultVersions if zero.
	Versions Versions
	// Progress receives human-readable progress lines; nothing is printed if nil.
	Progress io.Writer
	// Go is the go command; "go" looked up on PATH if empty.
	Go string
	// RealNodes also builds kubelet, kube-proxy, CoreDNS, metrics-server
	// and the pause program (another ~11 minutes on a cold cache).
	RealNodes bool
}

// DefaultCacheDir is where binaries are cached unless told otherwise:
// $LIQO_TESTBED_CACHE, else $XDG_CACHE_HOME/liqo-go/testbed, else
// $HOME/.cache/liqo-go/testbed. It is never inside the repository.
func DefaultCacheDir() string {
	if d := os.Getenv("LIQO_TESTBED_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "liqo-go", "testbed")
	}
	return filepath.Join(os.TempDir(), "liqo-go-testbed-cache")
}

// kwokStageFiles are the stages, relative to the kwok module, that make
// simulated nodes Ready (with leases) and pods go through their lifecycle.
var kwokStageFiles = []string{
	"kustomize/stage/node/fast/node-initialize.yaml",
	"kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
	"kustomize/stage/pod/fast/pod-ready.yaml",
	"kustomize/stage/pod/fast/pod-complete.yaml",
	"kustomize/stage/pod/fast/pod-delete.yaml",
}

// EnsureBinaries returns the testbed binaries, building from the Go module
// proxy whatever the cache lacks. Concurrent callers, in one process or many,
// are serialized by a file lock, so a build happens once.
func EnsureBinaries(ctx context.Context, opts BuildOptions) (*Binaries, error) {
	if opts.CacheDir == "" {
		opts.CacheDir = DefaultCacheDir()
	}
	if opts.Versions == (Versions{}) {
		opts.Versions = DefaultVersions
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	groups, err := buildGroups(opts.Versions, opts.RealNodes)
	if err != nil {
		return nil, err
	}
	bins := binariesIn(opts.CacheDir, opts.Versions, opts.RealNodes)
	if allComplete(opts.CacheDir, groups) {
		return bins, nil
	}

	if err := os.MkdirAll(opts.CacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the testbed cache %s: %w", opts.CacheDir, err)
	}
	unlock, err := lockFile(ctx, filepath.Join(opts.CacheDir, "build.lock"), "building the binaries", opts.Progress)
	if err != nil {
		return nil, err
	}
	defer unlock()

	goBin, err := findGo(opts.Go)
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		dir := filepath.Join(opts.CacheDir, g.dirName())
		if complete(dir) {
			continue
		}
		if err := g.build(ctx, goBin, dir, opts.Progress); err != nil {
			return nil, fmt.Errorf("building %s: %w", strings.Join(g.commandNames(), ", "), err)
		}
	}
	return bins, nil
}

func binariesIn(cache string, v Versions, realNodes bool) *Binaries {
	k8s := filepath.Join(cache, "kubernetes-"+v.Kubernetes, "bin")
	kwok := filepath.Join(cache, "kwok-"+v.Kwok)
	b := &Binaries{
		Etcd:              filepath.Join(cache, "etcd-"+v.Etcd, "bin", "etcd"),
		APIServer:         filepath.Join(k8s, "kube-apiserver"),
		ControllerManager: filepath.Join(k8s, "kube-controller-manager"),
		Scheduler:         filepath.Join(k8s, "kube-scheduler"),
		Kubectl:           filepath.Join(k8s, "kubectl"),
		Kwok:              filepath.Join(kwok, "bin", "kwok"),
		KwokStages:        filepath.Join(kwok, "stages.yaml"),
		Versions:          v,
	}
	if realNodes {
		node := filepath.Join(cache, "kubernetes-node-"+v.Kubernetes, "bin")
		b.Kubelet = filepath.Join(node, "kubelet")
		b.KubeProxy = filepath.Join(node, "kube-proxy")
		b.CoreDNS = filepath.Join(cache, "coredns-"+v.CoreDNS, "bin", "coredns")
		b.Pause = filepath.Join(cache, "pause-"+pauseVersion, "bin", "pause")
		b.MetricsServer = filepath.Join(cache, "metrics-server-"+v.MetricsServer, "bin", "metrics-server")
	}
	return b
}

func findGo(goBin string) (string, error) {
	if goBin == "" {
		goBin = "go"
	}
	path, err := exec.LookPath(goBin)
	if err != nil {
		return "", fmt.Errorf("the testbed builds Kubernetes, etcd and kwok from source and needs the Go toolchain (1.24 or newer), "+
			"but %q was not found: install Go from https://go.dev/dl and put it on PATH (%w)", goBin, err)
	}
	return path, nil
}

const completeMarker = ".complete"

func complete(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, completeMarker))
	return err == nil
}

func allComplete(cache string, groups []buildGroup) bool {
	for _, g := range groups {
		if !complete(filepath.Join(cache, g.dirName())) {
			return false
		}
	}
	return true
}

// lockFile takes an exclusive flock, telling the user when it has to wait
// for another process that is busy with what.
func lockFile(ctx context.Context, path, what string, progress io.Writer) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		fmt.Fprintf(progress, "testbed: another process is %s; waiting for %s\n", what, path)
		locked := make(chan error, 1)
		go func() { locked <- syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }()
		select {
		case err := <-locked:
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("locking %s: %w", path, err)
			}
		case <-ctx.Done():
			f.Close() // releases the pending flock with the descriptor
			return nil, ctx.Err()
		}
	}
	return func() { f.Close() }, nil
}

// runWithProgress runs cmd, printing a heartbeat line every interval so
// that a long build never looks hung.
func runWithProgress(cmd *exec.Cmd, progress io.Writer, what string, interval time.Duration) error {
	var out strings.Builder
	cmd.Stdout = &out
	cmd.Stderr = &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("%s: %w\n%s", strings.Join(cmd.Args, " "), err, proc.LastLines(out.String(), 40))
			}
			return nil
		case <-tick.C:
			fmt.Fprintf(progress, "testbed:   still %s (%s elapsed)\n", what, time.Since(start).Round(time.Second))
		}
	}
}
