package podplacement

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// ConflictLabel (value "true") marks a pod admitted although its own node
// constraints contradict its namespace's pod offloading strategy;
// ConflictAnnotation says why. The label is what the controller reporting
// the conflict as an Event watches, and it removes the label once done; the
// annotation stays, for whoever reads the pod.
const (
	ConflictLabel      = "liqo.io/offloading-conflict"
	ConflictAnnotation = "liqo.io/offloading-conflict"
)

// podMutator places the pods created in offloaded namespaces as their
// NamespaceOffloading's pod offloading strategy says (see MutatePod).
type podMutator struct {
	// cache reads the NamespaceOffloading; api confirms a miss, as a pod
	// may follow its NamespaceOffloading faster than the cache does.
	cache, api client.Reader
	decoder    admission.Decoder
}

var _ admission.Handler = (*podMutator)(nil)

// NewPodMutator is the handler placing pods, reading NamespaceOffloadings
// from cache and confirming a miss through api.
func NewPodMutator(cache, api client.Reader, decoder admission.Decoder) admission.Handler {
	return &podMutator{cache: cache, api: api, decoder: decoder}
}

// Handle mutates one pod creation.
func (m *podMutator) Handle(ctx context.Context, req admission.Request) admission.Response {
	pod := &corev1.Pod{}
	if err := m.decoder.Decode(req, pod); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	nsof, err := m.namespaceOffloading(ctx, req.Namespace)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError,
			fmt.Errorf("reading the NamespaceOffloading of namespace %s: %w", req.Namespace, err))
	}
	if nsof == nil {
		// As documented: labelling a namespace ahead of its
		// NamespaceOffloading holds its pods back until the strategy is
		// known, rather than letting early ones escape it.
		return admission.Denied(fmt.Sprintf("namespace %s is labelled %s=true but has no NamespaceOffloading named %q yet: "+
			"pods are refused until it exists, so that none escapes its pod offloading strategy "+
			"(create it, e.g. with liqoctl offload namespace %s, or remove the label)",
			req.Namespace, consts.SchedulingEnabledLabel, offv1beta1.NamespaceOffloadingName, req.Namespace))
	}
	if !nsof.DeletionTimestamp.IsZero() {
		return admission.Allowed("the namespace is being unoffloaded: its pods are no longer placed by its strategy")
	}
	if terms := nsof.Spec.ClusterSelector.NodeSelectorTerms; len(terms) > 0 {
		if _, err := nodeaffinity.NewNodeSelector(&nsof.Spec.ClusterSelector); err != nil {
			return admission.Denied(fmt.Sprintf("the cluster selector of the NamespaceOffloading of namespace %s is not valid, "+
				"so no pod can be placed by it: %v", req.Namespace, err))
		}
	}

	mutated, conflict := MutatePod(pod, &nsof.Spec)
	if conflict != "" {
		if mutated.Labels == nil {
			mutated.Labels = map[string]string{}
		}
		if mutated.Annotations == nil {
			mutated.Annotations = map[string]string{}
		}
		mutated.Labels[ConflictLabel] = "true"
		mutated.Annotations[ConflictAnnotation] = conflict
	}
	raw, err := json.Marshal(mutated)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	resp := admission.PatchResponseFromRaw(req.Object.Raw, raw)
	if conflict != "" {
		resp = resp.WithWarnings(conflict)
	}
	return resp
}

// namespaceOffloading returns the namespace's NamespaceOffloading, nil if
// there is none.
func (m *podMutator) namespaceOffloading(ctx context.Context, namespace string) (*offv1beta1.NamespaceOffloading, error) {
	key := types.NamespacedName{Namespace: namespace, Name: offv1beta1.NamespaceOffloadingName}
	nsof := &offv1beta1.NamespaceOffloading{}
	err := m.cache.Get(ctx, key, nsof)
	if apierrors.IsNotFound(err) {
		err = m.api.Get(ctx, key, nsof)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return nsof, err
}
