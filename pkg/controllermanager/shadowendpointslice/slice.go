package shadowendpointslice

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/ipam"
)

// sliceKind is the ShadowEndpointSlice's side of kit.ShadowReconciler.
type sliceKind struct{ *Reconciler }

func (sliceKind) NewShadow() *offv1beta1.ShadowEndpointSlice {
	return &offv1beta1.ShadowEndpointSlice{}
}
func (sliceKind) NewReal() *discoveryv1.EndpointSlice { return &discoveryv1.EndpointSlice{} }

// Refusal checks the ShadowEndpointSlice's origin against its namespace
// (see originMismatch).
func (k sliceKind) Refusal(ctx context.Context, ses *offv1beta1.ShadowEndpointSlice) (string, error) {
	var ns corev1.Namespace
	if err := k.Client.Get(ctx, types.NamespacedName{Name: ses.Namespace}, &ns); err != nil {
		if apierrors.IsNotFound(err) {
			// The ShadowEndpointSlice's event can reach the cache before
			// its new namespace's, and namespace creations wake nothing
			// (originLabelsChanged): retry until it is there. A namespace
			// really gone has taken the ShadowEndpointSlice with it, whose
			// own NotFound then ends the retries.
			return "", fmt.Errorf("namespace %s is not in the cache yet: retrying", ses.Namespace)
		}
		return "", err
	}
	return originMismatch(ses, &ns), nil
}

func (k sliceKind) Refused(ses *offv1beta1.ShadowEndpointSlice, msg string) {
	k.report(ses, outcome{reason: ReasonOriginMismatch, message: msg})
}

// Forge forges the slice with the consumer's addresses translated as its
// Configuration maps them; the addresses outside its CIDRs, or all of them
// without a Configuration, are left out, with an Event.
func (k sliceKind) Forge(ctx context.Context, ses *offv1beta1.ShadowEndpointSlice) (*discoveryv1.EndpointSlice, error) {
	consumer := ses.Labels[consts.OriginClusterIDLabel]
	translate, err := ipam.PeerTranslate(ctx, k.Client, consumer)
	if err != nil {
		return nil, err
	}
	want, dropped := ForgeEndpointSlice(ses, translate)
	switch {
	case len(dropped) == 0:
	case translate == nil:
		k.Recorder.Eventf(ses, corev1.EventTypeWarning, ReasonAddressRefused,
			"%d address(es) left out (%s): this cluster has no network configuration of consumer %q, so none of its addresses is known to be its own; "+
				"connect the clusters' networks (liqoctl network connect, or peer without --networking-disabled), or, where the clusters already share a network, "+
				"declare the consumer's CIDRs with liqoctl network init", len(dropped), strings.Join(firstN(dropped, 5), ", "), consumer)
	default:
		k.Recorder.Eventf(ses, corev1.EventTypeWarning, ReasonAddressRefused,
			"%d address(es) outside the consumer's pod and external CIDRs left out: %s", len(dropped), strings.Join(firstN(dropped, 5), ", "))
	}
	return want, nil
}

func (k sliceKind) Created(ses *offv1beta1.ShadowEndpointSlice, s *discoveryv1.EndpointSlice) {
	k.report(ses, synced(len(s.Endpoints)))
}

func (k sliceKind) CreateFailed(ses *offv1beta1.ShadowEndpointSlice, err error) error {
	o, err := refused(err)
	k.report(ses, o)
	return err
}

// Conflict reports a slice of another controller, left untouched: it is
// looked at again every conflictRetry, and on the next event of the
// ShadowEndpointSlice, which the consumer updates whenever the Service's
// endpoints change.
func (k sliceKind) Conflict(ses *offv1beta1.ShadowEndpointSlice, msg string) {
	k.report(ses, outcome{reason: ReasonConflict, message: msg})
}

// Sync makes the ShadowEndpointSlice's own EndpointSlice match its template.
func (k sliceKind) Sync(ctx context.Context, ses *offv1beta1.ShadowEndpointSlice, have *discoveryv1.EndpointSlice) error {
	want, err := k.Forge(ctx, ses)
	if err != nil {
		return err
	}
	o, err := k.converge(ctx, want, have)
	k.report(ses, o)
	return err
}

// converge makes an existing EndpointSlice of ours match want, and tells
// how that went. An error is for a retry; the outcome is then either empty
// (the status stays as it is) or worth writing all the same.
func (k sliceKind) converge(ctx context.Context, want, have *discoveryv1.EndpointSlice) (outcome, error) {
	if !have.DeletionTimestamp.IsZero() {
		// Its delete event brings us back to create the new one.
		return outcome{reason: ReasonTerminating, message: "the EndpointSlice is being deleted; a new one is created once it is gone"}, nil
	}
	if have.AddressType != want.AddressType {
		// The address type of an EndpointSlice is immutable: the slice is
		// replaced, through its delete event, rather than updated.
		err := k.Client.Delete(ctx, have, client.Preconditions{UID: &have.UID})
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
	switch err := k.Client.Update(ctx, have); {
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
