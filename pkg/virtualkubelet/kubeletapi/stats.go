package kubeletapi

import (
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/virtual-kubelet/virtual-kubelet/node/api/statsv1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The kubelet API's two views of a node's usage, from one Sample: the
// summary (/stats/summary) and the resource metrics (/metrics/resource,
// which metrics-server scrapes), with the kubelet's names and units.

// summary is the /stats/summary of node.
func summary(node string, s Sample) *statsv1alpha1.Summary {
	out := &statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{NodeName: node}}
	if !s.Node.Time.IsZero() {
		out.Node.CPU, out.Node.Memory = cpuStats(s.Node), memoryStats(s.Node)
	}
	for _, p := range s.Pods {
		ps := statsv1alpha1.PodStats{PodRef: statsv1alpha1.PodReference{Name: p.Name, Namespace: p.Namespace, UID: string(p.UID)}}
		var total CounterSample
		for _, c := range p.Containers {
			ps.Containers = append(ps.Containers, statsv1alpha1.ContainerStats{
				Name: c.Name, StartTime: metav1.NewTime(c.Start), CPU: cpuStats(c.CounterSample), Memory: memoryStats(c.CounterSample)})
			if ps.StartTime.IsZero() || c.Start.Before(ps.StartTime.Time) {
				ps.StartTime = metav1.NewTime(c.Start)
			}
			if c.Time.After(total.Time) {
				total.Time = c.Time
			}
			total.CPUNanos += c.CPUNanos
			total.NanoCores += c.NanoCores
			total.MemoryBytes += c.MemoryBytes
		}
		ps.CPU, ps.Memory = cpuStats(total), memoryStats(total)
		out.Pods = append(out.Pods, ps)
	}
	return out
}

func cpuStats(c CounterSample) *statsv1alpha1.CPUStats {
	return &statsv1alpha1.CPUStats{Time: metav1.NewTime(c.Time), UsageNanoCores: ptr.To(c.NanoCores), UsageCoreNanoSeconds: ptr.To(c.CPUNanos)}
}

func memoryStats(c CounterSample) *statsv1alpha1.MemoryStats {
	return &statsv1alpha1.MemoryStats{Time: metav1.NewTime(c.Time), WorkingSetBytes: ptr.To(c.MemoryBytes)}
}

// resourceMetrics is the /metrics/resource of a node: the kubelet's
// metric names, which metrics-server reads, each sample stamped with the
// time of its measure.
func resourceMetrics(s Sample) []*dto.MetricFamily {
	if s.Node.Time.IsZero() {
		return nil
	}
	nodeCPU := family("node_cpu_usage_seconds_total", "Cumulative cpu time consumed by the node in core-seconds", dto.MetricType_COUNTER)
	nodeMem := family("node_memory_working_set_bytes", "Current working set of the node in bytes", dto.MetricType_GAUGE)
	ctrCPU := family("container_cpu_usage_seconds_total", "Cumulative cpu time consumed by the container in core-seconds", dto.MetricType_COUNTER)
	ctrMem := family("container_memory_working_set_bytes", "Current working set of the container in bytes", dto.MetricType_GAUGE)
	ctrStart := family("container_start_time_seconds", "Start time of the container since unix epoch in seconds", dto.MetricType_GAUGE)
	nodeCPU.Metric = append(nodeCPU.Metric, sample(nil, seconds(s.Node.CPUNanos), s.Node.Time, true))
	nodeMem.Metric = append(nodeMem.Metric, sample(nil, float64(s.Node.MemoryBytes), s.Node.Time, false))
	for _, p := range s.Pods {
		for _, c := range p.Containers {
			labels := []*dto.LabelPair{label("container", c.Name), label("namespace", p.Namespace), label("pod", p.Name)}
			ctrCPU.Metric = append(ctrCPU.Metric, sample(labels, seconds(c.CPUNanos), c.Time, true))
			ctrMem.Metric = append(ctrMem.Metric, sample(labels, float64(c.MemoryBytes), c.Time, false))
			ctrStart.Metric = append(ctrStart.Metric, sample(labels, float64(c.Start.UnixNano())/1e9, c.Time, false))
		}
	}
	out := []*dto.MetricFamily{nodeCPU, nodeMem}
	if len(ctrCPU.Metric) > 0 {
		out = append(out, ctrCPU, ctrMem, ctrStart)
	}
	return out
}

func seconds(nanos uint64) float64 { return float64(nanos) / 1e9 }

func family(name, help string, typ dto.MetricType) *dto.MetricFamily {
	return &dto.MetricFamily{Name: ptr.To(name), Help: ptr.To(help), Type: typ.Enum()}
}

func label(name, value string) *dto.LabelPair {
	return &dto.LabelPair{Name: ptr.To(name), Value: ptr.To(value)}
}

func sample(labels []*dto.LabelPair, v float64, at time.Time, isCounter bool) *dto.Metric {
	m := &dto.Metric{Label: labels, TimestampMs: ptr.To(at.UnixMilli())}
	if isCounter {
		m.Counter = &dto.Counter{Value: ptr.To(v)}
	} else {
		m.Gauge = &dto.Gauge{Value: ptr.To(v)}
	}
	return m
}
