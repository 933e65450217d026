package reflection

import (
	"context"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/remotecluster"
)

// Providers holds the part of the reflection that belongs to a provider
// rather than to one of its virtual nodes: the twin namespaces, the
// reflected kinds (ConfigMaps, Secrets, Services, EndpointSlices, ...) and
// the ServiceAccount token Secrets. The twin namespaces are the provider's,
// shared by its nodes: one writer per remote object, whatever the number
// of nodes, so that two nodes never undo each other's copies. A provider's
// part is started by its first node's Run and stopped when its last node's
// Run returns. Safe for concurrent use; the zero value is ready.
type Providers struct {
	mu sync.Mutex
	// running is keyed by the provider's Cluster: new credentials make a
	// new Cluster, whose nodes start a part of their own.
	running map[*remotecluster.Cluster]*providerReflection
}

// providerReflection is the per-provider part of the reflection; reflector is the
// per-node part.
type providerReflection struct {
	// cfg is the configuration of the node that started the part, less
	// what belongs to a node (NodeName, HostIP, Workers): the nodes of one
	// process share the rest.
	cfg    Config
	remote client.Client
	logger klog.Logger
	refs   int
	stop   context.CancelFunc
	done   chan struct{}

	// kinds reflect the other kinds, by name.
	kinds map[string]resource
	// tokens keeps the offloaded pods' ServiceAccount token Secrets.
	tokens *tokens

	// syncMu runs one syncMaps at a time: the maps' and the offloadings'
	// handlers call it from two goroutines, and an older reading applied
	// after a newer one would stand until the next event.
	syncMu sync.Mutex
	mu     sync.RWMutex
	// namespaces holds the twin namespaces by local namespace name.
	namespaces map[string]*twin
	// nodes are the provider's virtual nodes running here.
	nodes map[*reflector]struct{}
	// refused holds the map's entries askedOnly refused, by local
	// namespace, with why: each is told once.
	refused map[string]string
}

// join gives node n the part of its provider (cfg.Remote), starting it if n
// is the provider's first node here, and attaches n to the twins. The
// returned function detaches n, and stops the part if n was the last.
func (ps *Providers) join(ctx context.Context, cfg Config, n *reflector) (*providerReflection, func(), error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p := ps.running[cfg.Remote]
	if p == nil {
		var err error
		if p, err = startProvider(ctx, cfg); err != nil {
			return nil, nil, err
		}
		if ps.running == nil {
			ps.running = map[*remotecluster.Cluster]*providerReflection{}
		}
		ps.running[cfg.Remote] = p
	}
	p.refs++
	p.addNode(n)
	return p, func() {
		p.removeNode(n)
		ps.mu.Lock()
		p.refs--
		last := p.refs == 0
		if last && ps.running[cfg.Remote] == p {
			delete(ps.running, cfg.Remote)
		}
		ps.mu.Unlock()
		if last {
			p.stop()
			<-p.done
		}
	}, nil
}

// startProvider starts the part of a provider: it lives as long as its
// nodes, not as the first one.
func startProvider(ctx context.Context, cfg Config) (*providerReflection, error) {
	cfg.NodeName, cfg.HostIP, cfg.Workers = "", "", 0
	p := &providerReflection{
		cfg:        cfg,
		remote:     cfg.Remote.Client,
		logger:     klog.FromContext(ctx).WithValues("provider", cfg.ProviderID),
		done:       make(chan struct{}),
		namespaces: map[string]*twin{},
		nodes:      map[*reflector]struct{}{},
	}
	var err error
	if p.kinds, err = p.resources(); err != nil {
		return nil, err
	}
	p.tokens = newTokens(cfg.Local, p.remote, p, cfg.LocalClusterID, cfg.ProviderID, p.logger, cfg.tokenOptions)
	pctx, stop := context.WithCancel(klog.NewContext(context.WithoutCancel(ctx), p.logger))
	p.stop = stop
	stopMaps, err := p.watchMaps(pctx)
	if err != nil {
		stop()
		return nil, err
	}
	go func() {
		defer close(p.done)
		var wg sync.WaitGroup
		for name, k := range p.kinds {
			wg.Go(func() { k.run(pctx, cfg.Kinds[name].Workers) })
		}
		wg.Go(func() { p.tokens.run(pctx) })
		<-pctx.Done()
		stopMaps()
		p.stopTwins()
		wg.Wait()
		dropMetrics(cfg.ProviderID, Pods)
	}()
	return p, nil
}

// addNode attaches a node to the twins; the EndpointSlices are forged
// again, since their endpoints on the provider's nodes are left out.
func (p *providerReflection) addNode(n *reflector) {
	p.mu.Lock()
	p.nodes[n] = struct{}{}
	for _, t := range p.namespaces {
		p.attach(n, t)
	}
	p.mu.Unlock()
	p.resync(EndpointSlices)
}

// removeNode detaches a node: its handlers on the twins go with its
// context.
func (p *providerReflection) removeNode(n *reflector) {
	p.mu.Lock()
	delete(p.nodes, n)
	for _, t := range p.namespaces {
		t.podsSynced.Delete(n)
	}
	p.mu.Unlock()
	p.resync(EndpointSlices)
}

// resync enqueues every object of a kind in every twin.
func (p *providerReflection) resync(kind string) {
	k, ok := p.kinds[kind]
	if !ok {
		return
	}
	p.mu.RLock()
	twins := make([]*twin, 0, len(p.namespaces))
	for _, t := range p.namespaces {
		if t.kindReady(kind) {
			twins = append(twins, t)
		}
	}
	p.mu.RUnlock()
	for _, t := range twins {
		k.enqueueNamespace(t.ctx, t)
	}
}

// nodeNames are the names of the provider's virtual nodes running here,
// sorted.
func (p *providerReflection) nodeNames() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	names := make([]string, 0, len(p.nodes))
	for n := range p.nodes {
		names = append(names, n.cfg.NodeName)
	}
	slices.Sort(names)
	return names
}

// inNamespace lists the local pods of a namespace bound to the provider's
// virtual nodes; complete is false while a node's pods are not all known
// (the token Secrets they need must not be taken for unused).
func (p *providerReflection) inNamespace(namespace string) (pods []*corev1.Pod, complete bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	complete = true
	for n := range p.nodes {
		if !n.podsSynced() {
			complete = false
			continue
		}
		ps, err := n.pods.Pods(namespace).List(labels.Everything())
		if err != nil {
			complete = false
			continue
		}
		pods = append(pods, ps...)
	}
	return pods, complete
}

// podOfNodes is the local pod of that name bound to one of the provider's
// virtual nodes, or nil.
func (p *providerReflection) podOfNodes(namespace, name string) *corev1.Pod {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for n := range p.nodes {
		if pod, err := n.pods.Pods(namespace).Get(name); err == nil {
			return pod
		}
	}
	return nil
}
