package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// freeAddr returns a loopback address with a port free at the time of the
// call, for a manager's pprof endpoint.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// profiler fetches the managers' pprof profiles into dir and prints their
// top entries: where each manager's CPU time and allocations go on the hot
// path.
type profiler struct {
	dir string
	// addrs are the managers' pprof addresses, by cluster name.
	addrs map[string]string
	// seconds is how long a CPU profile lasts.
	seconds int
	// apiServers are admin clients of the clusters, by name: their API
	// servers serve /debug/pprof too (kube-apiserver's --profiling), and
	// they do most of the work a pod costs.
	apiServers map[string]rest.Interface
	// controllerManagers are the clusters' kube-controller-manager pprof
	// URLs, by name (testbed ClusterSpec.APIServerProfiling).
	controllerManagers map[string]string
}

// cpu starts a CPU profile of every manager, kube-controller-manager and
// API server, lasting p.seconds from now; wait returns once all are
// written (name is the files' prefix) and their top entries printed to
// stderr.
func (p *profiler) cpu(ctx context.Context, name string) (wait func()) {
	seconds := strconv.Itoa(p.seconds)
	// One profile to take: what it is, its file, and how to write it there.
	type profile struct {
		what, file string
		get        func(file string) error
	}
	var profiles []profile
	add := func(cluster, what, suffix string, get func(file string) error) {
		profiles = append(profiles, profile{cluster + " " + what, filepath.Join(p.dir, fmt.Sprintf("%s-%s%s-cpu.pb.gz", name, cluster, suffix)), get})
	}
	for cluster, addr := range p.addrs {
		add(cluster, "manager", "", func(file string) error {
			return fetch(ctx, "http://"+addr+"/debug/pprof/profile?seconds="+seconds, file)
		})
	}
	for cluster, url := range p.controllerManagers {
		add(cluster, "kube-controller-manager", "-kube-controller-manager", func(file string) error {
			return fetch(ctx, url+"/profile?seconds="+seconds, file)
		})
	}
	for cluster, rc := range p.apiServers {
		add(cluster, "API server", "-apiserver", func(file string) error {
			raw, err := rc.Get().AbsPath("/debug/pprof/profile").Param("seconds", seconds).
				Timeout(time.Duration(p.seconds+30) * time.Second).DoRaw(ctx)
			if err != nil {
				return err
			}
			return os.WriteFile(file, raw, 0o644)
		})
	}
	var wg sync.WaitGroup
	for _, pr := range profiles {
		wg.Go(func() {
			if err := pr.get(pr.file); err != nil {
				fmt.Fprintf(os.Stderr, "bench: CPU profile of the %s: %v\n", pr.what, err)
			}
		})
	}
	return func() {
		wg.Wait()
		for _, pr := range profiles {
			p.top(pr.file, pr.what+", CPU", "-sample_index=cpu")
		}
	}
}

// allocs fetches every manager's allocation profile (cumulative since it
// started) and prints its top entries by bytes allocated, and by bytes in
// use now (after a garbage collection: what the heap holds).
func (p *profiler) allocs(ctx context.Context, name string) {
	for cluster, addr := range p.addrs {
		file := filepath.Join(p.dir, fmt.Sprintf("%s-%s-allocs.pb.gz", name, cluster))
		if err := fetch(ctx, "http://"+addr+"/debug/pprof/allocs?gc=1", file); err != nil {
			fmt.Fprintf(os.Stderr, "bench: allocation profile of the %s manager: %v\n", cluster, err)
			continue
		}
		p.top(file, cluster+" manager, bytes allocated", "-sample_index=alloc_space")
		p.top(file, cluster+" manager, bytes in use", "-sample_index=inuse_space")
	}
}

// top prints the profile's top entries by cumulative share (what each
// function and everything it calls cost), as go tool pprof shows them.
func (p *profiler) top(file, what, index string) {
	if _, err := os.Stat(file); err != nil {
		return
	}
	out, err := exec.Command("go", "tool", "pprof", "-top", "-cum", "-nodecount=40", index, file).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: go tool pprof %s: %v\n%s", file, err, out)
		return
	}
	fmt.Fprintf(os.Stderr, "bench: profile %s (%s):\n%s\n", what, file, out)
}

// profileClient fetches profiles from processes of this machine's testbed:
// the controller managers serve theirs over TLS with a self-signed
// certificate, on loopback.
var profileClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

func fetch(ctx context.Context, url, file string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := profileClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s: %s: %s", url, resp.Status, body)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
