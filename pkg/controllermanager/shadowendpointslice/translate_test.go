package shadowendpointslice

import (
	"context"
	"slices"
	"strings"
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

// TestAddressesThroughTheFabric: the provider keeps only the addresses it
// knows to be the consumer's. Without a Configuration of the consumer
// (peered without the network fabric and without liqoctl network init) it
// knows none, and a hostile consumer could otherwise point the provider's
// Services at the provider's nodes, its API server or another tenant's
// pods: every address is left out, with a Warning Event saying how to
// declare the consumer's networks. Once the Configuration maps the
// consumer's CIDRs (remapped here, as the IPAM would), the consumer's pod
// addresses become the provider's view of them, and the others are left
// out.
func TestAddressesThroughTheFabric(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const florence = "florence" // a consumer of its own: the others are configured
	ns := newNamespace(ctx, t, map[string]string{
		consts.ManagedByLabel: consts.ManagedByValue, consts.TwinNamespaceLabel: "true", consts.RemoteClusterIDLabel: florence,
	})
	ses := newSES(ns, "web-fabric", "10.244.1.5", "10.70.0.1", "172.31.0.10", "10.96.0.1")
	ses.Labels[consts.OriginClusterIDLabel] = florence
	create(ctx, t, ses)
	waitSlice(ctx, t, ses, "with no address: florence's are unknown", func(s *discoveryv1.EndpointSlice) bool {
		return len(s.Endpoints) == 0
	})
	refusal := waitAddressEvent(ctx, t, ns, ses.Name, "liqoctl network init")
	t.Logf("without a Configuration: %s", refusal)

	tenant := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: consts.TenantNamespace(florence)}}
	if err := cl.Create(ctx, tenant); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	cfg := &netv1beta1.Configuration{ObjectMeta: metav1.ObjectMeta{Name: florence, Namespace: tenant.Name},
		Spec: netv1beta1.ConfigurationSpec{Remote: netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{
			Pod: []netv1beta1.CIDR{"10.244.0.0/16"}, External: []netv1beta1.CIDR{"10.70.0.0/16"}}}}}
	create(ctx, t, cfg)
	t.Cleanup(func() { _ = cl.Delete(context.Background(), cfg) })
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
	waitAddressEvent(ctx, t, ns, ses.Name, "outside the consumer's pod and external CIDRs")
}

// waitAddressEvent waits for an AddressRefused Warning about the
// ShadowEndpointSlice name whose message contains text, and returns it.
func waitAddressEvent(ctx context.Context, t *testing.T, ns, name, text string) string {
	t.Helper()
	var msg string
	harness.Eventually(ctx, t, "an AddressRefused Event saying "+text, func() (bool, error) {
		var events corev1.EventList
		if err := cl.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return false, err
		}
		i := slices.IndexFunc(events.Items, func(e corev1.Event) bool {
			return e.Reason == ReasonAddressRefused && e.Type == corev1.EventTypeWarning && e.InvolvedObject.Name == name &&
				strings.Contains(e.Message, text)
		})
		if i >= 0 {
			msg = events.Items[i].Message
		}
		return i >= 0, nil
	})
	return msg
}
