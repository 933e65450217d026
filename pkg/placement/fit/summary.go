// Package fit computes what a provider's nodes can still take, the summary
// a provider publishes to each consumer in its ResourceSlices (status.fit),
// and answers, on the consumer, whether a pod fits one of them.
package fit

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
)

// Node is what the summary needs of one provider node that may run the
// consumer's pods.
type Node struct {
	// Free is the node's allocatable less the requests of its pods.
	Free corev1.ResourceList
	// Labels are the node's labels a consumer may select (PublishedLabels).
	Labels map[string]string
	// Taints are the node's NoSchedule and NoExecute taints.
	Taints []corev1.Taint
}

// quantum is the CPU step free resources are rounded down to, in
// millicores; memoryQuantum is memory's and ephemeral storage's, in bytes.
const (
	quantum       = 100
	memoryQuantum = 32 << 20
)

// Summarize groups nodes by what they can still take, rounded down, the
// largest first. When more than MaxFitGroups groups would remain, the nodes
// of each set of labels and taints are split, in order of free CPU and
// memory, into runs of neighbours, each group having the least of its run
// (of every resource): a group then understates some of its nodes, never
// overstates one, and every node is still counted. Only with more than
// MaxFitGroups sets of labels and taints are the smallest sets left out
// (Omitted). A pod the summary says fits, fits.
func Summarize(nodes []Node, now metav1.Time) authv1beta1.FitSummary {
	s := authv1beta1.FitSummary{Nodes: int32(len(nodes)), UpdateTime: now}
	index := map[string]int{}
	var groups []authv1beta1.NodeFit
	for _, n := range nodes {
		free := round(n.Free)
		k := key(free, n.Labels, n.Taints)
		if i, ok := index[k]; ok {
			groups[i].Count++
			continue
		}
		if len(groups) == authv1beta1.MaxFitGroups {
			groups, s.Omitted = runs(nodes, authv1beta1.MaxFitGroups)
			break
		}
		index[k] = len(groups)
		groups = append(groups, authv1beta1.NodeFit{Count: 1, Free: free, Labels: n.Labels, Taints: n.Taints})
	}
	slices.SortStableFunc(groups, func(a, b authv1beta1.NodeFit) int { return larger(a.Free, b.Free) })
	s.Groups = groups
	return s
}

// runs makes at most max groups of nodes: the sets of labels and taints
// get groups in proportion to their nodes (one at least; beyond max sets,
// the smallest get none and their nodes are omitted), and each set's
// nodes, ordered by free CPU then memory, are cut into that many runs of
// about equal length, each group holding the least of its run.
func runs(nodes []Node, max int) ([]authv1beta1.NodeFit, int32) {
	classes := map[string][]Node{}
	for _, n := range nodes {
		n.Free = round(n.Free)
		k := key(nil, n.Labels, n.Taints)
		classes[k] = append(classes[k], n)
	}
	sets := slices.Collect(maps.Values(classes))
	slices.SortStableFunc(sets, func(a, b []Node) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), cmp.Compare(key(nil, a[0].Labels, a[0].Taints), key(nil, b[0].Labels, b[0].Taints)))
	})
	var omitted int32
	if len(sets) > max {
		for _, set := range sets[max:] {
			omitted += int32(len(set))
		}
		sets = sets[:max]
	}
	total := 0
	for _, set := range sets {
		total += len(set)
	}
	var groups []authv1beta1.NodeFit
	spare := max - len(sets)
	for _, set := range sets {
		slices.SortStableFunc(set, func(a, b Node) int { return larger(a.Free, b.Free) })
		n := min(len(set), 1+spare*len(set)/total)
		for i := range n {
			run := set[i*len(set)/n : (i+1)*len(set)/n]
			groups = append(groups, authv1beta1.NodeFit{Count: int32(len(run)), Free: least(run), Labels: run[0].Labels, Taints: run[0].Taints})
		}
	}
	return groups, omitted
}

// least is, resource by resource, the least any node of run has free; a
// resource some node lacks is left out (zero).
func least(run []Node) corev1.ResourceList {
	out := run[0].Free.DeepCopy()
	for _, n := range run[1:] {
		for name, q := range out {
			other, ok := n.Free[name]
			switch {
			case !ok:
				delete(out, name)
			case other.Cmp(q) < 0:
				out[name] = other.DeepCopy()
			}
		}
	}
	return out
}

// round rounds free down: CPU to quantum millicores, memory and ephemeral
// storage to memoryQuantum bytes; other resources (pods, GPUs) are
// counted in units and kept as they are. Negative values (a node whose
// pods request more than it has) become zero.
func round(free corev1.ResourceList) corev1.ResourceList {
	out := make(corev1.ResourceList, len(free))
	for name, q := range free {
		switch name {
		case corev1.ResourceCPU:
			out[name] = *resource.NewMilliQuantity(floor(q.MilliValue(), int64(quantum)), resource.DecimalSI)
		case corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
			out[name] = *resource.NewQuantity(floor(q.Value(), memoryQuantum), resource.BinarySI)
		default:
			out[name] = *resource.NewQuantity(max(q.Value(), 0), resource.DecimalSI)
		}
	}
	return out
}

func floor(v, step int64) int64 {
	if v <= 0 {
		return 0
	}
	return v / step * step
}

// key identifies a group: its rounded free resources, labels and taints.
func key(free corev1.ResourceList, labels map[string]string, taints []corev1.Taint) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(free)) {
		q := free[name]
		fmt.Fprintf(&b, "%s=%s,", name, q.String())
	}
	b.WriteByte('|')
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		fmt.Fprintf(&b, "%s=%s,", k, labels[k])
	}
	b.WriteByte('|')
	ts := slices.Clone(taints)
	slices.SortFunc(ts, func(a, b corev1.Taint) int { return cmp.Compare(a.ToString(), b.ToString()) })
	for _, t := range ts {
		b.WriteString(t.ToString() + ",")
	}
	return b.String()
}

// larger orders free pieces largest first: by CPU, then memory.
func larger(a, b corev1.ResourceList) int {
	if c := b.Cpu().Cmp(*a.Cpu()); c != 0 {
		return c
	}
	return b.Memory().Cmp(*a.Memory())
}
