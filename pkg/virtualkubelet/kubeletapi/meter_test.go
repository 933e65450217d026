package kubeletapi

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
)

// usageAt is one container's measure of pod ns/p (UID u), window 15 s.
func usageAt(at time.Time, u string, nanoCores, mem uint64) PodUsage {
	return PodUsage{Namespace: "ns", Name: "p", UID: typesUID(u), Timestamp: at, Window: 15 * time.Second,
		Containers: []ContainerUsage{{Name: "c", NanoCores: nanoCores, MemoryBytes: mem}}}
}

// TestMeterIntegrates: the counter is the integral of the measured rates,
// starts at the first window's start, does not move on a repeated measure,
// and the node's counter never decreases when a pod goes.
func TestMeterIntegrates(t *testing.T) {
	m := newMeter()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Half a core over the first 15 s window: 7.5 core-seconds.
	s := m.observe([]PodUsage{usageAt(t0, "a", 5e8, 100)}, t0)
	c := s.Pods[0].Containers[0]
	if c.CPUNanos != 7.5e9 || !c.Start.Equal(t0.Add(-15*time.Second)) || !c.Time.Equal(t0) || c.MemoryBytes != 100 {
		t.Fatalf("first measure: %+v", c)
	}
	// The provider has not measured again: nothing moves.
	s = m.observe([]PodUsage{usageAt(t0, "a", 5e8, 100)}, t0.Add(5*time.Second))
	if c := s.Pods[0].Containers[0]; c.CPUNanos != 7.5e9 || !c.Time.Equal(t0) {
		t.Fatalf("repeated measure moved the counter: %+v", c)
	}
	// One core over the next 15 s: 15 more core-seconds.
	t1 := t0.Add(15 * time.Second)
	s = m.observe([]PodUsage{usageAt(t1, "a", 1e9, 200)}, t1)
	if c := s.Pods[0].Containers[0]; c.CPUNanos != 22.5e9 || !c.Time.Equal(t1) || c.MemoryBytes != 200 {
		t.Fatalf("second measure: %+v", c)
	}
	if s.Node.CPUNanos != 22.5e9 || s.Node.MemoryBytes != 200 || !s.Node.Time.Equal(t1) {
		t.Fatalf("node after two measures: %+v", s.Node)
	}
	// The pod goes, another comes: the node's counter keeps growing.
	t2 := t1.Add(15 * time.Second)
	s = m.observe([]PodUsage{usageAt(t2, "b", 2e8, 50)}, t2)
	if len(s.Pods) != 1 || s.Pods[0].UID != "b" || s.Node.CPUNanos != 22.5e9+3e9 || s.Node.MemoryBytes != 50 {
		t.Fatalf("after the pod changed: %+v", s)
	}
	// An old measure of b does not move anything back.
	s = m.observe([]PodUsage{usageAt(t1, "b", 9e9, 50)}, t2)
	if s.Node.CPUNanos != 25.5e9 || !s.Node.Time.Equal(t2) {
		t.Fatalf("an older measure moved the node: %+v", s.Node)
	}
	// Unseen containers are forgotten after a while.
	m.observe(nil, t2.Add(forgetAfter+time.Minute))
	if len(m.containers) != 0 {
		t.Errorf("%d counters kept after %s unseen", len(m.containers), forgetAfter)
	}
}

// TestResourceMetrics: /metrics/resource carries the kubelet's metric
// names and labels, in seconds, stamped with the measure's time, and
// nothing before any measure.
func TestResourceMetrics(t *testing.T) {
	if got := resourceMetrics(Sample{}); got != nil {
		t.Errorf("no measure yet: %v, want nothing", got)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newMeter().observe([]PodUsage{usageAt(t0, "a", 5e8, 100)}, t0)
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range resourceMetrics(s) {
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	ms := t0.UnixMilli()
	for _, want := range []string{
		"node_cpu_usage_seconds_total 7.5 " + itoa(ms),
		"node_memory_working_set_bytes 100 " + itoa(ms),
		`container_cpu_usage_seconds_total{container="c",namespace="ns",pod="p"} 7.5 ` + itoa(ms),
		`container_memory_working_set_bytes{container="c",namespace="ns",pod="p"} 100 ` + itoa(ms),
		`container_start_time_seconds{container="c",namespace="ns",pod="p"} 1.767225585e+09 ` + itoa(ms),
	} {
		if !strings.Contains(buf.String(), want+"\n") {
			t.Errorf("missing %q in\n%s", want, buf.String())
		}
	}
	sum := summary("liqo-x", s)
	if sum.Node.NodeName != "liqo-x" || *sum.Node.CPU.UsageCoreNanoSeconds != 7.5e9 || len(sum.Pods) != 1 ||
		*sum.Pods[0].Containers[0].CPU.UsageNanoCores != 5e8 || *sum.Pods[0].Memory.WorkingSetBytes != 100 {
		t.Errorf("summary: %+v", sum)
	}
}
