package kubeletapi

import (
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// PodUsage is what the provider last measured of the twin of one local pod.
type PodUsage struct {
	// Namespace, Name and UID are the local pod's.
	Namespace, Name string
	UID             types.UID
	// Timestamp is the end of the measured window, Window its length.
	Timestamp  time.Time
	Window     time.Duration
	Containers []ContainerUsage
}

// ContainerUsage is one container's usage over a window: a CPU rate and
// the memory working set at its end.
type ContainerUsage struct {
	Name string
	// NanoCores is the average CPU rate over the window.
	NanoCores uint64
	// MemoryBytes is the working set.
	MemoryBytes uint64
}

// forgetAfter is how long a container unmeasured (its pod gone, or its
// twin not measured since it was re-created) keeps its counter: a short
// gap resumes the same counter rather than starting one over.
const forgetAfter = 10 * time.Minute

// meter turns the rates the provider measures into the cumulative CPU
// counters the kubelet API serves, for one virtual node.
//
// Why: metrics-server computes a pod's CPU usage as the increase of a
// cumulative counter (container_cpu_usage_seconds_total) between two
// scrapes, divided by the time between their timestamps. The provider's
// metrics.k8s.io API gives instead an average rate over a window that ends
// at a timestamp. So each container's counter is the integral of those
// rates: the first measure adds rate × window (the counter starts at the
// window's start, which is reported as the container's start time), and
// each later measure with a newer timestamp adds rate × the time since the
// previous one (exact when the provider's windows follow each other, as
// its metrics-server's scrapes do; an estimate over a longer gap). A
// measure whose timestamp did not move adds nothing, and the counter keeps
// its timestamp, so metrics-server sees no new sample rather than a wrong
// one. Counters are kept by local pod UID and container name: a twin
// re-created on the provider continues its local pod's counter.
//
// The node's counter grows by every container's increase, so it never
// decreases when a pod goes; its timestamp is the newest measure's.
// Counters live in memory: after a restart they start over with a new
// start time, which metrics-server reads as restarted containers.
type meter struct {
	mu         sync.Mutex
	containers map[containerKey]*counter
	nodeCPU    uint64 // core-nanoseconds
	nodeTime   time.Time
	// unavailable and rejected are what was last logged about the
	// provider's metrics (scrape).
	unavailable, rejected string
}

type containerKey struct {
	uid  types.UID
	name string
}

type counter struct {
	start, time time.Time
	cpu         uint64 // core-nanoseconds
	memory      uint64
	nanoCores   uint64
	seen        time.Time
}

// Sample is the cumulative state of a node's containers after a measure,
// what the kubelet API serves.
type Sample struct {
	// Node is the virtual node's total; its Time is zero while no
	// container was ever measured.
	Node CounterSample
	Pods []PodSample
}

// PodSample is the counters of one local pod's containers.
type PodSample struct {
	Namespace, Name string
	UID             types.UID
	Containers      []ContainerSample
}

// ContainerSample is the counter of one container.
type ContainerSample struct {
	Name string
	// Start is when the counter started.
	Start time.Time
	CounterSample
}

// CounterSample is a cumulative CPU counter and the memory working set
// at Time, with the rate of the last measure.
type CounterSample struct {
	Time        time.Time
	CPUNanos    uint64 // core-nanoseconds used since the counter started
	NanoCores   uint64
	MemoryBytes uint64
}

func newMeter() *meter { return &meter{containers: map[containerKey]*counter{}} }

// observe adds the measures of usage (taken at now) to the counters and
// returns the sample of the pods measured.
func (m *meter) observe(usage []PodUsage, now time.Time) Sample {
	m.mu.Lock()
	defer m.mu.Unlock()
	var s Sample
	var memory, nanoCores uint64
	for _, p := range usage {
		ps := PodSample{Namespace: p.Namespace, Name: p.Name, UID: p.UID}
		for _, c := range p.Containers {
			k := containerKey{uid: p.UID, name: c.Name}
			ctr, ok := m.containers[k]
			switch {
			case !ok:
				ctr = &counter{start: p.Timestamp.Add(-p.Window), time: p.Timestamp}
				ctr.cpu = integrate(c.NanoCores, p.Window)
				m.containers[k] = ctr
				m.nodeCPU += ctr.cpu
			case p.Timestamp.After(ctr.time):
				add := integrate(c.NanoCores, p.Timestamp.Sub(ctr.time))
				ctr.cpu += add
				ctr.time = p.Timestamp
				m.nodeCPU += add
			}
			ctr.memory, ctr.nanoCores, ctr.seen = c.MemoryBytes, c.NanoCores, now
			if ctr.time.After(m.nodeTime) {
				m.nodeTime = ctr.time
			}
			memory += ctr.memory
			nanoCores += ctr.nanoCores
			ps.Containers = append(ps.Containers, ContainerSample{Name: c.Name, Start: ctr.start,
				CounterSample: CounterSample{Time: ctr.time, CPUNanos: ctr.cpu, NanoCores: ctr.nanoCores, MemoryBytes: ctr.memory}})
		}
		if len(ps.Containers) > 0 {
			s.Pods = append(s.Pods, ps)
		}
	}
	for k, ctr := range m.containers {
		if now.Sub(ctr.seen) > forgetAfter {
			delete(m.containers, k)
		}
	}
	sort.Slice(s.Pods, func(i, j int) bool {
		a, b := s.Pods[i], s.Pods[j]
		return a.Namespace < b.Namespace || (a.Namespace == b.Namespace && a.Name < b.Name)
	})
	s.Node = CounterSample{Time: m.nodeTime, CPUNanos: m.nodeCPU, NanoCores: nanoCores, MemoryBytes: memory}
	return s
}

// integrate is the CPU time, in core-nanoseconds, that nanoCores used for d.
func integrate(nanoCores uint64, d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	return uint64(float64(nanoCores) * d.Seconds())
}
