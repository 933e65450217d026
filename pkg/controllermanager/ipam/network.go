package ipam

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ipamv1alpha1 "github.com/liqo-go/liqo/apis/ipam/v1alpha1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/kit"
)

// Reasons of the Allocated condition and of the Events.
const (
	ReasonAllocated  = "Allocated"
	ReasonRemapped   = "Remapped"
	ReasonLocal      = "LocalNetwork"
	ReasonNotLocal   = "NotALocalNetwork"
	ReasonConflict   = "Conflict"
	ReasonExhausted  = "NoFreeNetwork"
	ReasonPending    = "NetworkPending"
	ReasonNoFreeIP   = "NoFreeAddress"
	ReasonBadRequest = "Invalid"
)

// NetworkReconciler allocates Networks.
type NetworkReconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	Book     *Book
	Options  Options
}

// Reconcile allocates the network of one Network, or releases it when the
// object is gone.
func (r *NetworkReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var n ipamv1alpha1.Network
	if err := r.Client.Get(ctx, req.NamespacedName, &n); err != nil {
		if apierrors.IsNotFound(err) {
			r.Book.ReleaseNetwork(req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !n.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	before := n.DeepCopy()
	cond := kit.Condition{Type: ipamv1alpha1.AllocatedCondition}
	var fresh bool
	var got netip.Prefix
	if isLocal(&n) {
		got, cond = r.local(&n)
	} else {
		var err error
		got, fresh, err = r.Book.Network(ctx, &n)
		if cond.Reason = failureReason(err); cond.Reason != "" {
			cond.Message = err.Error()
		} else if err != nil {
			return reconcile.Result{}, err // transient: retried
		} else {
			cond.OK, cond.Reason = true, ReasonAllocated
			cond.Message = fmt.Sprintf("%s is allocated as is", got)
			if got.String() != string(n.Spec.CIDR) {
				cond.Reason = ReasonRemapped
				cond.Message = fmt.Sprintf("%s overlaps a network in use: remapped to %s", n.Spec.CIDR, got)
			}
		}
	}
	if cond.OK {
		n.Status.CIDR = netv1beta1.CIDR(got.String())
	}
	changed := kit.SetCondition(&n.Status.Conditions, n.Generation, cond)
	if err := kit.PatchStatus(ctx, r.Client, &n, before); err != nil {
		if fresh {
			r.Book.ReleaseNetwork(req.NamespacedName) // not recorded: not allocated
		}
		return reconcile.Result{}, err
	}
	if changed {
		typ := corev1.EventTypeNormal
		if !cond.OK {
			typ = corev1.EventTypeWarning
		}
		r.Recorder.Event(&n, typ, cond.Reason, cond.Message)
	}
	return reconcile.Result{}, nil
}

// failureReason is the condition reason of an allocation error that
// retrying does not cure, or "" for none.
func failureReason(err error) string {
	switch {
	case errors.Is(err, errConflict):
		return ReasonConflict
	case errors.Is(err, errExhausted):
		return ReasonExhausted
	case errors.Is(err, errInvalid):
		return ReasonBadRequest
	}
	return ""
}

// local checks a Network of this cluster's own CIDRs: it is allocated as
// is, provided it is one of them (a user cannot claim a range by labelling
// a Network).
func (r *NetworkReconciler) local(n *ipamv1alpha1.Network) (netip.Prefix, kit.Condition) {
	cond := kit.Condition{Type: ipamv1alpha1.AllocatedCondition}
	p, err := netip.ParsePrefix(string(n.Spec.CIDR))
	if err != nil {
		cond.Reason, cond.Message = ReasonBadRequest, fmt.Sprintf("spec.cidr %q: %v", n.Spec.CIDR, err)
		return netip.Prefix{}, cond
	}
	for _, l := range r.Options.local() {
		if l == p {
			cond.OK, cond.Reason, cond.Message = true, ReasonLocal, fmt.Sprintf("%s is a network of this cluster", p)
			return p, cond
		}
	}
	cond.Reason = ReasonNotLocal
	cond.Message = fmt.Sprintf("%s is labelled %s but is none of this cluster's networks (pod, service, external CIDR, reserved subnets)", p, ipamv1alpha1.NetworkNotRemappedLabel)
	return netip.Prefix{}, cond
}

// SetupWithManager registers the reconciler.
func (r *NetworkReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("ipam-network").For(&ipamv1alpha1.Network{}).Complete(r)
}
