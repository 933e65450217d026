package virtualkubelet

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
)

// maxMessage bounds the Ready condition's message: a failing /readyz
// answers with the list of every check, too long to be read in kubectl.
const maxMessage = 300

// provider is the virtual-kubelet NodeProvider of one virtual node. Its Ping
// is the health check of the remote cluster, so that the node controller's
// ping loop is the only timer probing the remote cluster.
//
// Ping never fails because of the remote cluster: the node controller stops
// writing both the Node's status and its Lease while pings fail, so the
// Node would only go Unknown after the control plane's grace period, with
// no reason given. Instead a failed probe is a Ready=False status, pushed
// at once through the NotifyNodeStatus callback.
type provider struct {
	cfg     NodeConfig
	probe   Probe
	started time.Time
	logger  logr.Logger

	mu                sync.Mutex
	state             remoteState
	checked           bool
	versionFromRemote bool
	notify            func(*corev1.Node)

	// changed holds at most one pending change: the node written is built
	// when the change is forwarded, so changes in between coalesce.
	changed chan struct{}

	// gate lets RunNode wait for a probe in flight before it returns: the
	// node controller calls Ping on a goroutine it never waits for.
	gate   sync.RWMutex
	closed bool
}

func newProvider(cfg NodeConfig, pr Probe, logger logr.Logger) *provider {
	now := time.Now()
	return &provider{
		cfg:     cfg,
		probe:   pr,
		started: now,
		logger:  logger,
		state:   remoteState{since: now},
		changed: make(chan struct{}, 1),
	}
}

// Ping probes the remote cluster; see provider.
func (p *provider) Ping(ctx context.Context) error {
	p.gate.RLock()
	defer p.gate.RUnlock()
	if !p.closed {
		p.check(ctx)
	}
	return ctx.Err()
}

// NotifyNodeStatus records the callback that writes a new Node status.
func (p *provider) NotifyNodeStatus(_ context.Context, cb func(*corev1.Node)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notify = cb
}

// close waits for a Ping in flight and makes later ones no-ops.
func (p *provider) close() {
	p.gate.Lock()
	defer p.gate.Unlock()
	p.closed = true
}

// check probes the remote cluster once and records the outcome.
func (p *provider) check(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, p.cfg.HealthCheckTimeout)
	defer cancel()
	err := p.probe.Ready(pctx)
	version := ""
	if err == nil && p.needVersion() {
		// A failure only leaves the version to the next probe.
		version, _ = p.probe.ServerVersion(pctx)
	}
	if ctx.Err() != nil {
		// Stopping: the aborted probe says nothing about the remote cluster.
		return
	}
	p.record(err, version, time.Now())
}

// record updates the state with a probe's outcome and flags a change only
// when readiness flips or the version becomes known, so that a steady
// state writes nothing.
func (p *provider) record(err error, version string, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	changed := false
	if ready := err == nil; !p.checked || ready != p.state.ready {
		wasReady := p.nodeReady()
		p.state.ready = ready
		p.state.since = now
		// A first probe that fails (the consumer restarted during an
		// outage) starts no grace: the node's pods may have been without
		// their provider for long already.
		p.state.graced = !ready && p.checked && p.cfg.UnreachableGrace > 0
		p.checked = true
		if p.nodeReady() != wasReady {
			p.state.readySince = now
		}
		p.state.message = ""
		if ready {
			p.logger.Info("the remote cluster is reachable")
		} else {
			p.state.message = truncate("the remote cluster's API server is not ready: " + err.Error())
			p.logger.Info("the remote cluster is unreachable", "error", err.Error())
		}
		changed = true
	}
	if p.state.graced && now.Sub(p.state.since) >= p.cfg.UnreachableGrace {
		p.state.graced = false
		p.state.readySince = now
		p.logger.Info("the remote cluster is still unreachable at the end of the grace: the node turns NotReady", "grace", p.cfg.UnreachableGrace)
		changed = true
	}
	if version != "" && (!p.versionFromRemote || version != p.state.version) {
		p.versionFromRemote = true
		changed = changed || version != p.state.version
		p.state.version = version
	}
	if changed {
		select {
		case p.changed <- struct{}{}:
		default:
		}
	}
}

// nodeReady is the Node's Ready condition: reachable, or unreachable
// within the grace. Called with mu held.
func (p *provider) nodeReady() bool {
	return p.state.ready || p.state.graced
}

// discardChange forgets a pending change, once the Node to be registered
// already shows it.
func (p *provider) discardChange() {
	select {
	case <-p.changed:
	default:
	}
}

func (p *provider) needVersion() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.versionFromRemote
}

// setFallbackVersion sets the version shown until the remote one is known.
func (p *provider) setFallbackVersion(v string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.versionFromRemote {
		p.state.version = v
	}
}

// node builds the Node for the current state.
func (p *provider) node() *corev1.Node {
	p.mu.Lock()
	defer p.mu.Unlock()
	return buildNode(p.cfg, p.state, p.started)
}

// forward writes the changes through the node controller and reports
// readiness to ready (once at start, then at every flip), until ctx is done
// or the controller stops. It waits for the controller's loop to run (the
// running channel) because nothing drains the controller's one-slot update
// channel before: a second update would block forever. For the same
// reason RunNode stops the controller only after forward has returned.
func (p *provider) forward(ctx context.Context, running, stopped <-chan struct{}, ready func(bool, string)) {
	select {
	case <-ctx.Done():
		return
	case <-stopped:
		return
	case <-running:
	}
	p.mu.Lock()
	last, why := p.nodeReady(), p.reason()
	p.mu.Unlock()
	if ready != nil {
		ready(last, why)
	}
	lastWhy := why
	for {
		select {
		case <-ctx.Done():
			return
		case <-stopped:
			return
		case <-p.changed:
		}
		p.mu.Lock()
		notify, node, now, why := p.notify, buildNode(p.cfg, p.state, p.started), p.nodeReady(), p.reason()
		p.mu.Unlock()
		if notify != nil {
			notify(node)
		}
		if ready != nil && (now != last || why != lastWhy) {
			ready(now, why)
		}
		last, lastWhy = now, why
	}
}

// reason is the Ready condition's reason. Called with mu held.
func (p *provider) reason() string {
	switch {
	case p.state.ready:
		return ReasonRemoteReachable
	case p.state.graced:
		return ReasonUnreachableInGrace
	}
	return ReasonRemoteUnreachable
}

func truncate(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	// Cutting bytes may split a rune; drop the broken tail.
	return strings.ToValidUTF8(s[:maxMessage-3], "") + "..."
}
