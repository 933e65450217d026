package offload

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// ClusterSelector turns --selector flags, each a label selector
// ("region in (a,b), !staging"), into the NodeSelector of a
// NamespaceOffloading: one term per flag, so the flags are ORed and the
// requirements inside one flag ANDed. No flag gives no terms, which selects
// every peered cluster.
func ClusterSelector(flags []string) (corev1.NodeSelector, error) {
	var out corev1.NodeSelector
	for _, f := range flags {
		if strings.TrimSpace(f) == "" {
			return corev1.NodeSelector{}, fmt.Errorf("--selector must not be empty")
		}
		reqs, err := labels.ParseToRequirements(f)
		if err != nil {
			return corev1.NodeSelector{}, fmt.Errorf("--selector %q: %w", f, err)
		}
		term := corev1.NodeSelectorTerm{}
		for i := range reqs {
			r := &reqs[i]
			op, err := nodeSelectorOperator(r.Operator())
			if err != nil {
				return corev1.NodeSelector{}, fmt.Errorf("--selector %q: %w", f, err)
			}
			req := corev1.NodeSelectorRequirement{Key: r.Key(), Operator: op}
			if op != corev1.NodeSelectorOpExists && op != corev1.NodeSelectorOpDoesNotExist {
				req.Values = r.Values().List()
			}
			term.MatchExpressions = append(term.MatchExpressions, req)
		}
		out.NodeSelectorTerms = append(out.NodeSelectorTerms, term)
	}
	return out, nil
}

func nodeSelectorOperator(op selection.Operator) (corev1.NodeSelectorOperator, error) {
	switch op {
	case selection.Equals, selection.DoubleEquals, selection.In:
		return corev1.NodeSelectorOpIn, nil
	case selection.NotEquals, selection.NotIn:
		return corev1.NodeSelectorOpNotIn, nil
	case selection.Exists:
		return corev1.NodeSelectorOpExists, nil
	case selection.DoesNotExist:
		return corev1.NodeSelectorOpDoesNotExist, nil
	case selection.GreaterThan:
		return corev1.NodeSelectorOpGt, nil
	case selection.LessThan:
		return corev1.NodeSelectorOpLt, nil
	}
	return "", fmt.Errorf("operator %q has no cluster selector equivalent", op)
}
