package offloading

import (
	"maps"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// Names of the guards the provider keeps in each twin namespace.
const (
	TwinQuotaName         = "liqo-twin-quota"
	TwinNetworkPolicyName = "liqo-tenant-isolation"
)

// guardLabels mark the guards as ours and name the consumer, which is how
// a change to one finds the consumer's maps.
func guardLabels(consumer string) map[string]string {
	return map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: consumer}
}

// twinQuotaSpec bounds the objects of one twin: what the tenant's Quota
// does not count (objects rather than CPU and memory) and what it cannot
// (node ports, load balancers).
func twinQuotaSpec(hard corev1.ResourceList) corev1.ResourceQuotaSpec {
	return corev1.ResourceQuotaSpec{Hard: hard.DeepCopy()}
}

// twinNetworkPolicySpec admits ingress to every pod of a twin from the
// same consumer only: its other twins and its tenant namespace (where its
// gateway runs) here, and, through the network fabric, its own pods and
// hosts, which arrive with their addresses in the consumer's networks as
// this cluster sees them (the fabric does not masquerade them). Pods of the
// provider's other tenants, of the provider's own namespaces and of other
// consumers' clusters are denied.
func twinNetworkPolicySpec(consumer string, networks []string) networkingv1.NetworkPolicySpec {
	from := func(kind string) networkingv1.NetworkPolicyPeer {
		return networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{kind: "true", consts.RemoteClusterIDLabel: consumer}}}
	}
	peers := []networkingv1.NetworkPolicyPeer{from(consts.TwinNamespaceLabel), from(consts.TenantNamespaceLabel)}
	for _, n := range networks {
		peers = append(peers, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: n}})
	}
	return networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: peers}},
	}
}

// consumerNetworks are the consumer's pod and external networks as this
// cluster sees them (remapped), from the Configurations of its tenant
// namespace, sorted; none before the network fabric is set up.
func consumerNetworks(configs []netv1beta1.Configuration) []string {
	seen := map[string]bool{}
	for i := range configs {
		remote := configs[i].Status.Remote
		if remote == nil {
			continue
		}
		for _, c := range slices.Concat(remote.CIDR.Pod, remote.CIDR.External) {
			// A value the API server would refuse in an ipBlock would
			// block every update of the policy.
			if p, err := netip.ParsePrefix(string(c)); err == nil {
				seen[p.Masked().String()] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// quotaEnforced tells whether the quota controller has computed the usage
// of every count in the quota's spec: until then the API server does not
// enforce it.
func quotaEnforced(rq *corev1.ResourceQuota) bool {
	for name := range rq.Spec.Hard {
		if _, ok := rq.Status.Hard[name]; !ok {
			return false
		}
		if _, ok := rq.Status.Used[name]; !ok {
			return false
		}
	}
	return true
}
