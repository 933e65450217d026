package offloading

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/liqo-go/liqo/pkg/consts"
)

// SelectClusters returns the IDs of the peered clusters whose virtual nodes
// match the selector; no terms selects every peered cluster, as the
// documentation's `nodeSelectorTerms: []` example expects.
func SelectClusters(selector *corev1.NodeSelector, virtualNodes []corev1.Node) ([]string, error) {
	ids := map[string]bool{}
	var match func(*corev1.Node) bool
	if selector == nil || len(selector.NodeSelectorTerms) == 0 {
		match = func(*corev1.Node) bool { return true }
	} else {
		ns, err := nodeaffinity.NewNodeSelector(selector)
		if err != nil {
			return nil, fmt.Errorf("the cluster selector is not valid: %w", err)
		}
		match = ns.Match
	}
	for i := range virtualNodes {
		n := &virtualNodes[i]
		id := n.Labels[consts.RemoteClusterIDLabel]
		if n.Labels[consts.TypeLabel] != consts.TypeVirtualNode || id == "" {
			continue
		}
		if match(n) {
			ids[id] = true
		}
	}
	out := make([]string, 0, len(ids))
	for id := range ids {
		out = append(out, id)
	}
	sort.Strings(out)
	return out, nil
}
