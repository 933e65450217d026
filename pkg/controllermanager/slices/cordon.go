package slices

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/kit"
)

// Reasons of the Resources condition and Events of a cordoned slice.
const (
	// ReasonSliceCordoned: the slice keeps its grant for the pods running
	// on it, but new ShadowPods may not use it and a new request waits.
	ReasonSliceCordoned = "Cordoned"
	// ReasonSliceUncordoned: the grant is open again.
	ReasonSliceUncordoned = "Uncordoned"
)

// cordoned tells whether the provider's administrator cordoned slice s
// (liqoctl cordon resourceslice). The mark is its Quota's spec.cordoned,
// not anything on the slice: the consumer writes its slices here, and
// would lift the cordon itself; it only reads its Quotas.
func (r *ProviderReconciler) cordoned(ctx context.Context, s *authv1beta1.ResourceSlice) (bool, error) {
	var q offv1beta1.Quota
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: s.Name}, &q); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return q.Spec.Cordoned != nil && *q.Spec.Cordoned, nil
}

// showCordon sets the Resources condition of an accepted slice to say
// whether it is cordoned (the consumer sees it, the status going back),
// with an Event when that changes.
func (r *ProviderReconciler) showCordon(s *authv1beta1.ResourceSlice, cordoned, withheld bool) {
	c := resourcesConditionOf(s)
	if c == nil || c.Status != authv1beta1.ResourceSliceAccepted {
		return
	}
	was := c.Reason == ReasonSliceCordoned
	if cordoned {
		msg := fmt.Sprintf("cordoned on the provider (Quota %s/%s spec.cordoned): the pods running on the grant keep it, "+
			"new ShadowPods may not use it and no new request is decided until it is uncordoned", s.Namespace, s.Name)
		if withheld {
			msg += "; the changed request waits"
		}
		kit.SetConditionOf(&s.Status.Conditions, sliceCondition,
			authv1beta1.ResourceSliceResources, authv1beta1.ResourceSliceAccepted, ReasonSliceCordoned, msg, metav1.Now())
		if !was {
			r.Recorder.Event(s, corev1.EventTypeWarning, ReasonSliceCordoned, msg)
		}
		return
	}
	if was {
		msg := "uncordoned on the provider: new ShadowPods may use the grant again"
		kit.SetConditionOf(&s.Status.Conditions, sliceCondition,
			authv1beta1.ResourceSliceResources, authv1beta1.ResourceSliceAccepted, ReasonSliceUncordoned, msg, metav1.Now())
		r.Recorder.Event(s, corev1.EventTypeNormal, ReasonSliceUncordoned, msg)
	}
}

// resourcesConditionOf is the slice's Resources condition, or nil.
func resourcesConditionOf(s *authv1beta1.ResourceSlice) *authv1beta1.ResourceSliceCondition {
	for i := range s.Status.Conditions {
		if s.Status.Conditions[i].Type == authv1beta1.ResourceSliceResources {
			return &s.Status.Conditions[i]
		}
	}
	return nil
}
