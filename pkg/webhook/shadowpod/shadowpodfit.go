package shadowpod

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/placement/fit"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
)

// fitRefusal checks a consumer's new pod against the fit summary this
// provider publishes to that consumer (its accepted ResourceSlices'
// status.fit, refreshed within a second of any node or pod change): a
// consumer that places pods by it never sends one that fits no node, but
// one that does not (an older version, or a burst the summary had not
// caught up with) would leave the pod Pending here with no word to the
// consumer. Refused, the consumer's pod says RemoteUnschedulable (the
// refusal's status cause) and fails there past its time limit. No
// summary: nothing to check against.
func fitRefusal(ctx context.Context, reader client.Reader, consumer string, pod *corev1.PodSpec) (*admission.Response, error) {
	var list authv1beta1.ResourceSliceList
	if err := reader.List(ctx, &list, client.InNamespace(consts.TenantNamespace(consumer)),
		client.MatchingLabels{consts.ReplicationLabel: "true"}); err != nil {
		return nil, fmt.Errorf("listing the ResourceSlices of consumer %s: %w", consumer, err)
	}
	var summary *authv1beta1.FitSummary
	for i := range list.Items {
		if s := list.Items[i].Status.Fit; s != nil && (summary == nil || summary.UpdateTime.Before(&s.UpdateTime)) {
			summary = s
		}
	}
	if summary == nil {
		return nil, nil
	}
	requests := resourcehelper.PodRequests(&corev1.Pod{Spec: *pod}, resourcehelper.PodResourcesOptions{})
	if fit.Fits(summary, requests, pod.Tolerations) {
		return nil, nil
	}
	msg := fmt.Sprintf("no node of this cluster has room for the pod (it requests %s; the largest free piece is %s)",
		fit.Describe(requests), fit.Describe(fit.Only(summary.Largest(), requests)))
	resp := admission.Denied(msg)
	resp.Result.Details = &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: forge.ReasonRemoteUnschedulable, Message: msg}}}
	return &resp, nil
}
