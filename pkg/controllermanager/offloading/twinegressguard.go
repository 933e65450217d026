package offloading

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
)

// ensureEgressPolicy puts the egress NetworkPolicy in a twin, or, with the
// policy off, removes one made before.
func (r *TwinReconciler) ensureEgressPolicy(ctx context.Context, consumer, twin string, configs []netv1beta1.Configuration) error {
	np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: TwinEgressPolicyName, Namespace: twin}}
	if r.Options.Egress.Mode == EgressPolicyOff {
		return client.IgnoreNotFound(r.Client.Delete(ctx, np))
	}
	nodes, err := r.nodeAddresses(ctx)
	if err != nil {
		return err
	}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, np, func() error {
		maps.Copy(initLabels(&np.ObjectMeta), guardLabels(consumer))
		np.Spec = twinEgressPolicySpec(consumer, consumerNetworks(configs), nodes, r.Options.Egress)
		return nil
	}); err != nil {
		return fmt.Errorf("the egress NetworkPolicy of twin %s: %w", twin, err)
	}
	return nil
}

// nodeAddresses are the IPv4 internal and external addresses of the
// cluster's Nodes, from the cache.
func (r *TwinReconciler) nodeAddresses(ctx context.Context) ([]netip.Addr, error) {
	var nodes corev1.NodeList
	if err := r.Client.List(ctx, &nodes, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing the Nodes for their addresses: %w", err)
	}
	var out []netip.Addr
	for i := range nodes.Items {
		out = append(out, addressesOf(&nodes.Items[i])...)
	}
	return out, nil
}

// addressesOf are a Node's IPv4 internal and external addresses.
func addressesOf(n *corev1.Node) []netip.Addr {
	var out []netip.Addr
	for _, a := range n.Status.Addresses {
		if a.Type != corev1.NodeInternalIP && a.Type != corev1.NodeExternalIP {
			continue
		}
		if ip, err := netip.ParseAddr(a.Address); err == nil && ip.Unmap().Is4() {
			out = append(out, ip.Unmap())
		}
	}
	return out
}

// nodeAddressesChanged passes Node events that change the addresses the
// egress policies keep out: not the status heartbeats.
var nodeAddressesChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*corev1.Node)
		n, ok2 := e.ObjectNew.(*corev1.Node)
		return !ok1 || !ok2 || !slices.Equal(addressesOf(o), addressesOf(n))
	},
	GenericFunc: func(event.GenericEvent) bool { return false },
}
