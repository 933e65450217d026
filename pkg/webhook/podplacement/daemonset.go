package podplacement

import (
	"context"
	"encoding/json"
	"net/http"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/liqo-go/liqo/pkg/consts"
)

// DaemonSetOnVirtualNodes says whether a DaemonSet's pods may go to
// virtual nodes: only when it says so with
// consts.DaemonSetOnVirtualNodesAnnotation, on itself or its pod template.
func DaemonSetOnVirtualNodes(ds *appsv1.DaemonSet) bool {
	return ds.Annotations[consts.DaemonSetOnVirtualNodesAnnotation] == "true" ||
		ds.Spec.Template.Annotations[consts.DaemonSetOnVirtualNodesAnnotation] == "true"
}

// KeepOffVirtualNodes makes spec's pods require a node that is not a
// virtual node: it adds liqo.io/type NotIn (virtual-node) to each term of
// its required node affinity (ANDed with the term's other requirements),
// or makes the one term if there is none. The DaemonSet controller then
// counts no virtual node among the nodes the DaemonSet should run on, so
// its rollout neither waits on them nor reports pods there unavailable,
// however wide its tolerations. It reports whether spec changed; it is
// idempotent.
func KeepOffVirtualNodes(spec *corev1.PodSpec) bool {
	before := spec.Affinity.DeepCopy()
	terms := requiredTermsOf(spec)
	if len(terms) == 0 {
		terms = []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{notVirtualNode}}}
	}
	for i := range terms {
		// An empty term matches no node, and must go on matching none.
		if !isEmpty(terms[i]) {
			terms[i].MatchExpressions = appendRequirement(terms[i].MatchExpressions, notVirtualNode)
		}
	}
	setRequiredTermsOf(spec, terms)
	return !equality.Semantic.DeepEqual(before, spec.Affinity)
}

// daemonSetMutator keeps the pods of DaemonSets off virtual nodes, unless
// a DaemonSet opts in (KeepOffVirtualNodes).
type daemonSetMutator struct {
	decoder admission.Decoder
}

var _ admission.Handler = (*daemonSetMutator)(nil)

// NewDaemonSetMutator is the handler keeping DaemonSets' pods off virtual
// nodes.
func NewDaemonSetMutator(decoder admission.Decoder) admission.Handler {
	return &daemonSetMutator{decoder: decoder}
}

// Handle mutates one DaemonSet creation or update.
func (m *daemonSetMutator) Handle(_ context.Context, req admission.Request) admission.Response {
	ds := &appsv1.DaemonSet{}
	if err := m.decoder.Decode(req, ds); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if DaemonSetOnVirtualNodes(ds) {
		// Its pods carry the choice, for the virtual nodes to read.
		if ds.Spec.Template.Annotations[consts.DaemonSetOnVirtualNodesAnnotation] == "true" {
			return admission.Allowed("the DaemonSet may run on virtual nodes (" + consts.DaemonSetOnVirtualNodesAnnotation + ")")
		}
		metav1.SetMetaDataAnnotation(&ds.Spec.Template.ObjectMeta, consts.DaemonSetOnVirtualNodesAnnotation, "true")
	} else if !KeepOffVirtualNodes(&ds.Spec.Template.Spec) {
		return admission.Allowed("already kept off virtual nodes")
	}
	raw, err := json.Marshal(ds)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}
