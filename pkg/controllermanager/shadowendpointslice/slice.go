package shadowendpointslice

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/ipam"
)

// ensureSlice brings the EndpointSlice of ses in line with its template and
// tells how that went. An error is for a retry; the outcome is then either
// empty (the status stays as it is) or worth writing all the same.
func (r *Reconciler) ensureSlice(ctx context.Context, ses *offv1beta1.ShadowEndpointSlice) (outcome, error) {
	translate, err := ipam.PeerTranslate(ctx, r.Client, ses.Labels[consts.OriginClusterIDLabel])
	if err != nil {
		return outcome{}, err
	}
	want, dropped := ForgeTranslatedEndpointSlice(ses, translate)
	if len(dropped) > 0 {
		r.Recorder.Eventf(ses, corev1.EventTypeWarning, ReasonAddressRefused,
			"%d address(es) outside the consumer's pod and external CIDRs left out: %s", len(dropped), strings.Join(firstN(dropped, 5), ", "))
	}
	var have discoveryv1.EndpointSlice
	switch err := r.Client.Get(ctx, client.ObjectKeyFromObject(ses), &have); {
	case apierrors.IsNotFound(err):
		return r.create(ctx, ses, want)
	case err != nil:
		return outcome{}, err
	}
	return r.converge(ctx, ses, want, &have)
}

// create creates the EndpointSlice. A collision means the cache did not
// hold the existing slice: it lags behind our own earlier create, or the
// slice lacks the label the cache selects on (someone else's, or ours with
// its labels edited). Only this rare path reads the API server directly.
func (r *Reconciler) create(ctx context.Context, ses *offv1beta1.ShadowEndpointSlice, want *discoveryv1.EndpointSlice) (outcome, error) {
	err := r.Client.Create(ctx, want)
	switch {
	case err == nil:
		return synced(len(want.Endpoints)), nil
	case apierrors.IsAlreadyExists(err):
		var have discoveryv1.EndpointSlice
		if err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(want), &have); err != nil {
			if apierrors.IsNotFound(err) {
				return outcome{}, fmt.Errorf("EndpointSlice %s/%s existed at create time and is gone now: retrying", want.Namespace, want.Name)
			}
			return outcome{}, err
		}
		return r.converge(ctx, ses, want, &have)
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		// The namespace goes, the ShadowEndpointSlice with it: retrying
		// would only spin until the namespace controller deletes it.
		log.FromContext(ctx).V(1).Info("not creating the EndpointSlice: its namespace is terminating")
		return outcome{}, nil
	}
	return refused(err)
}

// converge makes an existing EndpointSlice match want, if it is ours. A
// slice of another controller is left untouched: it is looked at again on
// the next event of the ShadowEndpointSlice, which the consumer updates
// whenever the Service's endpoints change; the controller does not poll
// for someone else's slice to go.
func (r *Reconciler) converge(ctx context.Context, ses *offv1beta1.ShadowEndpointSlice, want, have *discoveryv1.EndpointSlice) (outcome, error) {
	if !controlled(have, ses) {
		owner := "no controller"
		if ref := metav1.GetControllerOf(have); ref != nil {
			owner = fmt.Sprintf("controlled by %s %s (uid %s)", ref.Kind, ref.Name, ref.UID)
		}
		return outcome{reason: ReasonConflict, message: fmt.Sprintf(
			"EndpointSlice %s exists with %s, not this ShadowEndpointSlice (uid %s); it is left untouched",
			have.Name, owner, ses.UID)}, nil
	}
	if !have.DeletionTimestamp.IsZero() {
		// Its delete event brings us back to create the new one.
		return outcome{reason: ReasonTerminating, message: "the EndpointSlice is being deleted; a new one is created once it is gone"}, nil
	}
	if have.AddressType != want.AddressType {
		// The address type of an EndpointSlice is immutable: the slice is
		// replaced, through its delete event, rather than updated.
		err := r.Client.Delete(ctx, have, client.Preconditions{UID: &have.UID})
		if err != nil && !apierrors.IsNotFound(err) {
			return outcome{}, err
		}
		return outcome{reason: ReasonTerminating, message: fmt.Sprintf(
			"the address type changed from %s to %s, which an EndpointSlice cannot: replacing it", have.AddressType, want.AddressType)}, nil
	}
	if matches(have, want) {
		return synced(len(want.Endpoints)), nil
	}
	// Everything we set is set again, so any drift (an edited endpoint, a
	// removed label) is reverted along with a changed template.
	have.Labels, have.Annotations, have.OwnerReferences = want.Labels, want.Annotations, want.OwnerReferences
	have.Endpoints, have.Ports = want.Endpoints, want.Ports
	switch err := r.Client.Update(ctx, have); {
	case err == nil:
		return synced(len(want.Endpoints)), nil
	case apierrors.IsNotFound(err):
		// Deleted meanwhile: its delete event brings us back.
		return outcome{}, nil
	case apierrors.IsConflict(err):
		// The cache was behind the slice; the retry reads it afresh.
		return outcome{}, err
	default:
		return refused(err)
	}
}

// refused turns a write the API server refused into an outcome. An invalid
// slice only changes with the template, whose update triggers a reconcile
// anyway, so it is not retried; other refusals (admission webhooks, quota)
// may pass later and are.
func refused(err error) (outcome, error) {
	o := outcome{reason: ReasonRejected, message: "the API server refused the EndpointSlice: " + err.Error()}
	if apierrors.IsInvalid(err) {
		return o, nil
	}
	if apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) {
		return o, err
	}
	// Anything else (a timeout, a lost connection) says nothing of the
	// slice: the status stays as it is.
	return outcome{}, err
}

// deleteSlice deletes the EndpointSlice of a ShadowEndpointSlice that is
// gone or going (uid "" when it is gone and its UID unknown), or that must
// have none. The garbage collector would delete it too, through the owner
// reference, but only once it watches ShadowEndpointSlices, which it starts
// doing up to a discovery period (30 s) after the CRD appears; until then
// the provider's Service would keep sending traffic to endpoints the
// consumer already withdrew.
func (r *Reconciler) deleteSlice(ctx context.Context, key types.NamespacedName, uid types.UID) error {
	var have discoveryv1.EndpointSlice
	if err := r.Client.Get(ctx, key, &have); err != nil {
		return client.IgnoreNotFound(err)
	}
	ref := metav1.GetControllerOf(&have)
	if ref == nil || ref.Kind != kind || ref.APIVersion != offv1beta1.GroupVersion.String() ||
		uid != "" && ref.UID != uid || !have.DeletionTimestamp.IsZero() {
		return nil
	}
	err := r.Client.Delete(ctx, &have, client.Preconditions{UID: &have.UID})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

func controlled(s *discoveryv1.EndpointSlice, ses *offv1beta1.ShadowEndpointSlice) bool {
	ref := metav1.GetControllerOf(s)
	return ref != nil && ref.UID == ses.UID
}

// matches tells whether have already carries everything of want; the
// semantic comparison takes nil and empty maps and lists as equal, as the
// API server's round trip does.
func matches(have, want *discoveryv1.EndpointSlice) bool {
	return equality.Semantic.DeepEqual(have.Labels, want.Labels) &&
		equality.Semantic.DeepEqual(have.Annotations, want.Annotations) &&
		equality.Semantic.DeepEqual(have.OwnerReferences, want.OwnerReferences) &&
		have.AddressType == want.AddressType &&
		equality.Semantic.DeepEqual(have.Endpoints, want.Endpoints) &&
		equality.Semantic.DeepEqual(have.Ports, want.Ports)
}

// firstN is at most the first n of s, for messages.
func firstN(s []string, n int) []string {
	return s[:min(n, len(s))]
}
