package main

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// stages records when an offloaded Deployment's pods pass each step of the
// pipeline: bound to the virtual node locally, created remotely, Running
// remotely, Running locally. It tells which step a slow run waits on.
type stages struct {
	mu    sync.Mutex
	n     int
	start time.Time
	seen  map[string]map[string]time.Duration // stage → pod name → when it first passed it
	at    map[string]time.Duration            // stage → when all n passed it
	order []string
}

func newStages(n int) *stages {
	return &stages{n: n, seen: map[string]map[string]time.Duration{}, at: map[string]time.Duration{},
		order: []string{"bound locally", "created remotely", "Running remotely", "Running locally"}}
}

func (s *stages) mark(stage, pod string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.start.IsZero() {
		return
	}
	if s.seen[stage] == nil {
		s.seen[stage] = map[string]time.Duration{}
	}
	if _, ok := s.seen[stage][pod]; !ok {
		s.seen[stage][pod] = time.Since(s.start)
	}
	if _, done := s.at[stage]; !done && len(s.seen[stage]) >= s.n {
		s.at[stage] = time.Since(s.start)
	}
}

// watch follows the pods of one namespace of cs, calling observe on each
// add and update, until stop is closed.
func watchPods(cs kubernetes.Interface, namespace string, stop <-chan struct{}, observe func(*corev1.Pod)) {
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(namespace))
	inf := f.Core().V1().Pods().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { observe(o.(*corev1.Pod)) },
		UpdateFunc: func(_, o any) { observe(o.(*corev1.Pod)) },
	})
	f.Start(stop)
	cache.WaitForCacheSync(stop, inf.HasSynced)
}

// follow starts the watches on both sides; begin marks the start time.
func (s *stages) follow(local kubernetes.Interface, localNS string, remote kubernetes.Interface, remoteNS string, stop <-chan struct{}) {
	watchPods(local, localNS, stop, func(p *corev1.Pod) {
		if p.Spec.NodeName != "" {
			s.mark("bound locally", p.Name)
		}
		if p.Status.Phase == corev1.PodRunning {
			s.mark("Running locally", p.Name)
		}
	})
	watchPods(remote, remoteNS, stop, func(p *corev1.Pod) {
		s.mark("created remotely", p.Name)
		if p.Status.Phase == corev1.PodRunning {
			s.mark("Running remotely", p.Name)
		}
	})
}

func (s *stages) begin() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start = time.Now()
}

func (s *stages) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var parts []string
	for _, st := range s.order {
		if d, ok := s.at[st]; ok {
			parts = append(parts, fmt.Sprintf("%s %s", st, ms(d)))
		} else {
			parts = append(parts, fmt.Sprintf("%s (%d of %d)", st, len(s.seen[st]), s.n))
		}
	}
	return strings.Join(parts, ", ")
}

// statusLag is, for each pod seen Running on both sides, how long after
// the remote pod the local one was seen Running: the time the status takes
// to come back. Sorted.
func (s *stages) statusLag() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []time.Duration
	for pod, local := range s.seen["Running locally"] {
		if remote, ok := s.seen["Running remotely"][pod]; ok {
			out = append(out, max(local-remote, 0))
		}
	}
	slices.Sort(out)
	return out
}
