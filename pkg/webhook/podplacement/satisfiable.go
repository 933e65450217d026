package podplacement

import (
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// satisfiable tells whether some node could, by its labels and name, match
// both the nodeSelector and one of the terms (nil terms: no required
// affinity). It reasons on the requirements alone, not on the nodes that
// exist: it finds contradictions such as "liqo.io/type In virtual-node" next
// to "liqo.io/type NotIn virtual-node", not a label no node happens to have.
func satisfiable(terms []corev1.NodeSelectorTerm, nodeSelector map[string]string) bool {
	noAffinity := terms == nil
	if noAffinity {
		terms = []corev1.NodeSelectorTerm{{}}
	}
	for _, t := range terms {
		if isEmpty(t) && !noAffinity {
			// An empty term of a required affinity matches no node.
			continue
		}
		labels := constraints{}
		for k, v := range nodeSelector {
			labels.add(corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpIn, Values: []string{v}})
		}
		for _, r := range t.MatchExpressions {
			labels.add(r)
		}
		fields := constraints{}
		for _, r := range t.MatchFields {
			fields.add(r)
		}
		if labels.possible() && fields.possible() {
			return true
		}
	}
	return false
}

// constraints collects, per key, what a conjunction of requirements asks of
// one label (or field) value.
type constraints map[string]*keyConstraint

type keyConstraint struct {
	mustExist, mustNotExist bool
	// in is nil while no In requirement was seen; then the values allowed
	// by all of them.
	in    []string
	notIn []string
	// gt and lt bound the value as an integer (Gt, Lt).
	gt, lt *int64
}

func (c constraints) add(r corev1.NodeSelectorRequirement) {
	k := c[r.Key]
	if k == nil {
		k = &keyConstraint{}
		c[r.Key] = k
	}
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		k.mustExist = true
		if k.in == nil {
			k.in = slices.Clone(r.Values)
			if k.in == nil {
				k.in = []string{}
			}
		} else {
			k.in = slices.DeleteFunc(k.in, func(v string) bool { return !slices.Contains(r.Values, v) })
		}
	case corev1.NodeSelectorOpNotIn:
		k.notIn = append(k.notIn, r.Values...)
	case corev1.NodeSelectorOpExists:
		k.mustExist = true
	case corev1.NodeSelectorOpDoesNotExist:
		k.mustNotExist = true
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		k.mustExist = true
		if len(r.Values) != 1 {
			return
		}
		n, err := strconv.ParseInt(r.Values[0], 10, 64)
		if err != nil {
			return
		}
		if r.Operator == corev1.NodeSelectorOpGt && (k.gt == nil || n > *k.gt) {
			k.gt = &n
		}
		if r.Operator == corev1.NodeSelectorOpLt && (k.lt == nil || n < *k.lt) {
			k.lt = &n
		}
	}
}

// possible tells whether some value (or its absence) meets every key's
// constraint.
func (c constraints) possible() bool {
	for _, k := range c {
		if !k.possible() {
			return false
		}
	}
	return true
}

func (k *keyConstraint) possible() bool {
	if k.mustNotExist {
		return !k.mustExist
	}
	bounded := k.gt != nil || k.lt != nil
	fits := func(v string) bool {
		if slices.Contains(k.notIn, v) {
			return false
		}
		if !bounded {
			return true
		}
		n, err := strconv.ParseInt(v, 10, 64)
		return err == nil && (k.gt == nil || n > *k.gt) && (k.lt == nil || n < *k.lt)
	}
	if k.in != nil {
		return slices.ContainsFunc(k.in, fits)
	}
	if k.gt != nil && k.lt != nil {
		// NotIn cannot exclude every integer in between: "7" and "07"
		// are different values of the same number.
		return *k.lt-*k.gt >= 2
	}
	// Infinitely many values are left, NotIn only excludes a few.
	return true
}
