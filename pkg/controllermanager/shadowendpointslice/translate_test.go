package shadowendpointslice

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/test/harness"
)

// TestAddressesThroughTheFabric: once the network fabric maps the
// consumer's CIDRs (its Configuration here, remapped as the IPAM would),
// the consumer's pod addresses become the provider's view of them, and an
// address outside the consumer's pod and external CIDRs (a provider node,
// the provider's API server Service, anything of its own) is left out,
// with a Warning Event: a consumer cannot point the provider's Services at
// the provider's own hosts.
func TestAddressesThroughTheFabric(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tenant := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: consts.TenantNamespace(consumer)}}
	if err := cl.Create(ctx, tenant); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	cfg := &netv1beta1.Configuration{ObjectMeta: metav1.ObjectMeta{Name: consumer, Namespace: tenant.Name},
		Spec: netv1beta1.ConfigurationSpec{Remote: netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{
			Pod: []netv1beta1.CIDR{"10.244.0.0/16"}, External: []netv1beta1.CIDR{"10.70.0.0/16"}}}}}
	create(ctx, t, cfg)
	t.Cleanup(func() { _ = cl.Delete(context.Background(), cfg) })

	ns := twinNamespace(ctx, t)
	ses := newSES(ns, "web-fabric", "10.244.1.5", "10.70.0.1", "172.31.0.10", "10.96.0.1")
	create(ctx, t, ses)
	// No mapping yet (not configured): the addresses pass as they are,
	// as when peering without the fabric.
	waitSlice(ctx, t, ses, "with the addresses as sent", func(s *discoveryv1.EndpointSlice) bool {
		return len(addresses(s)) == 4
	})

	cfg.Status = netv1beta1.ConfigurationStatus{
		Remote: &netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{
			Pod: []netv1beta1.CIDR{"10.71.0.0/16"}, External: []netv1beta1.CIDR{"10.72.0.0/16"}}},
		Conditions: []metav1.Condition{{Type: netv1beta1.NetworkCIDRsConfiguredCondition, Status: metav1.ConditionTrue,
			Reason: "CIDRsConfigured", LastTransitionTime: metav1.Now()}},
	}
	if err := cl.Status().Update(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	s := waitSlice(ctx, t, ses, "translated, the provider's own addresses left out", func(s *discoveryv1.EndpointSlice) bool {
		return slices.Equal(addresses(s), []string{"10.71.1.5", "10.72.0.1"}) // in the order sent
	})
	if len(s.Endpoints) != 2 {
		t.Errorf("endpoints %+v, want the two translated ones", s.Endpoints)
	}
	harness.Eventually(ctx, t, "the AddressRefused Event", func() (bool, error) {
		var events corev1.EventList
		if err := cl.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return false, err
		}
		return slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
			return e.Reason == ReasonAddressRefused && e.Type == corev1.EventTypeWarning && e.InvolvedObject.Name == ses.Name
		}), nil
	})
}
