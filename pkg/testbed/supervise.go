package testbed

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Supervise runs bin with args as a component of the cluster named name
// until ctx ends, starting it again whenever it exits (after 1 s, doubling
// up to 10 s), as a Deployment restarts its pod. Its output goes to
// LogPath(name); report, when set, is told of each exit. The returned
// channel closes once ctx has ended and the process has stopped: end ctx
// and wait for it before stopping the cluster, or the process is started
// again against a dead control plane.
func (c *Cluster) Supervise(ctx context.Context, name, bin string, args []string, report func(error)) (<-chan struct{}, error) {
	if slices.Contains(stopOrder, name) {
		return nil, fmt.Errorf("cluster %q: %q is a control-plane component", c.Name, name)
	}
	start := func() (*process, error) {
		p := &process{name: name, bin: bin, args: args, logPath: c.LogPath(name)}
		if err := p.start(); err != nil {
			return nil, fmt.Errorf("cluster %q: %w", c.Name, err)
		}
		c.mu.Lock()
		c.procs[name] = p
		c.mu.Unlock()
		return p, nil
	}
	p, err := start()
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		backoff := wait.Backoff{Duration: time.Second, Factor: 2, Cap: 10 * time.Second, Steps: math.MaxInt32}
		for {
			select {
			case <-ctx.Done():
				p.stop(10 * time.Second)
				return
			case <-p.done:
			}
			if report != nil {
				report(p.exitError())
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff.Step()):
			}
			next, err := start()
			if err != nil {
				if report != nil {
					report(err)
				}
				continue // p is still the exited one: its done is closed
			}
			p = next
		}
	}()
	return done, nil
}
