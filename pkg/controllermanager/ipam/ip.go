package ipam

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ipamv1alpha1 "github.com/liqo-go/liqo/apis/ipam/v1alpha1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/kit"
)

// IPReconciler gives IPs their remapped address.
type IPReconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	Book     *Book
	Options  Options
}

// Reconcile allocates the address of one IP, or releases it when the object
// is gone.
func (r *IPReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var ip ipamv1alpha1.IP
	if err := r.Client.Get(ctx, req.NamespacedName, &ip); err != nil {
		if apierrors.IsNotFound(err) {
			r.Book.ReleaseIP(req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !ip.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	before := ip.DeepCopy()
	cond := kit.Condition{Type: ipamv1alpha1.AllocatedCondition}
	network, pre, waiting := r.network(ctx, &ip)
	var fresh bool
	if waiting != "" {
		cond.Reason, cond.Message = ReasonPending, waiting
	} else {
		addr, isFresh, err := r.Book.IP(ctx, &ip, network, pre)
		fresh = isFresh
		if cond.Reason = failureReason(err); cond.Reason != "" {
			if cond.Reason == ReasonExhausted {
				cond.Reason = ReasonNoFreeIP
			}
			cond.Message = err.Error()
		} else if err != nil {
			return reconcile.Result{}, err
		} else {
			cond.OK, cond.Reason = true, ReasonAllocated
			cond.Message = fmt.Sprintf("%s is reachable from peers as %s, translated into their view of %s", ip.Spec.IP, addr, network)
			ip.Status.IP, ip.Status.CIDR = netv1beta1.IP(addr.String()), netv1beta1.CIDR(network.String())
		}
	}
	changed := kit.SetCondition(&ip.Status.Conditions, ip.Generation, cond)
	if err := kit.PatchStatus(ctx, r.Client, &ip, before); err != nil {
		if fresh {
			r.Book.ReleaseIP(req.NamespacedName)
		}
		return reconcile.Result{}, err
	}
	if changed {
		typ := corev1.EventTypeNormal
		if !cond.OK {
			typ = corev1.EventTypeWarning
		}
		r.Recorder.Event(&ip, typ, cond.Reason, cond.Message)
	}
	if waiting != "" {
		// The Network watch brings it back sooner; this covers a
		// reference to a Network in a namespace not watched yet.
		return reconcile.Result{RequeueAfter: 30 * time.Second}, nil
	}
	return reconcile.Result{}, nil
}

// networkKey is the Network an IP takes its address from.
func (r *IPReconciler) networkKey(ip *ipamv1alpha1.IP) types.NamespacedName {
	if ref := ip.Spec.NetworkRef; ref != nil && ref.Name != "" {
		ns := ref.Namespace
		if ns == "" {
			ns = ip.Namespace
		}
		return types.NamespacedName{Namespace: ns, Name: ref.Name}
	}
	return types.NamespacedName{Namespace: r.Options.Namespace, Name: ipamv1alpha1.ExternalNetworkName}
}

// network returns the allocated network of ip's Network and how many
// addresses it keeps, or why it cannot yet.
func (r *IPReconciler) network(ctx context.Context, ip *ipamv1alpha1.IP) (netip.Prefix, int, string) {
	key := r.networkKey(ip)
	var n ipamv1alpha1.Network
	if err := r.Client.Get(ctx, key, &n); err != nil {
		return netip.Prefix{}, 0, fmt.Sprintf("waiting for Network %s: %v", key, err)
	}
	p, err := netip.ParsePrefix(string(n.Status.CIDR))
	if err != nil || !kit.IsTrue(n.Status.Conditions, ipamv1alpha1.AllocatedCondition) {
		return netip.Prefix{}, 0, fmt.Sprintf("waiting for Network %s to be allocated", key)
	}
	return p, int(n.Spec.PreAllocated), ""
}

// SetupWithManager registers the reconciler; an IP waiting for its Network
// is woken when that Network changes.
func (r *IPReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("ipam-ip").For(&ipamv1alpha1.IP{}).
		Watches(&ipamv1alpha1.Network{}, handler.EnqueueRequestsFromMapFunc(r.ipsOf)).
		Complete(r)
}

// ipsOf lists the IPs that take their address from Network n.
func (r *IPReconciler) ipsOf(ctx context.Context, n client.Object) []reconcile.Request {
	var ips ipamv1alpha1.IPList
	if err := r.Client.List(ctx, &ips); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range ips.Items {
		if r.networkKey(&ips.Items[i]) == client.ObjectKeyFromObject(n) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&ips.Items[i])})
		}
	}
	return out
}
