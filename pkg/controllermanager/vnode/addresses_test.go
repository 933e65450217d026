package vnode

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/liqo-go/liqo/apis"
	ipamv1alpha1 "github.com/liqo-go/liqo/apis/ipam/v1alpha1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
)

// TestAddresses: an offloaded pod's address is shown remapped once the
// fabric's Configuration of its provider is configured, and as reported
// before (or for an address outside the provider's CIDRs).
func TestAddresses(t *testing.T) {
	ctx := context.Background()
	addresses := func(c client.Reader, provider, namespace string) forge.Addresses {
		t.Helper()
		a, err := fabric{reader: c, provider: provider, namespace: namespace}.Addresses(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	cfg := &netv1beta1.Configuration{ObjectMeta: metav1.ObjectMeta{Name: "milan", Namespace: consts.TenantNamespace("milan")},
		Spec: netv1beta1.ConfigurationSpec{Remote: netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{
			Pod: []netv1beta1.CIDR{"10.244.0.0/16"}, External: []netv1beta1.CIDR{"10.70.0.0/16"}}}}}
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(cfg).Build()
	a := addresses(c, "milan", "liqo")
	if got := a.Local("10.244.1.2"); got != "10.244.1.2" {
		t.Errorf("not configured yet: %s, want the address as reported", got)
	}
	apiServer := &ipamv1alpha1.IP{ObjectMeta: metav1.ObjectMeta{Name: ipamv1alpha1.APIServerIPName, Namespace: "liqo"},
		Spec: ipamv1alpha1.IPSpec{IP: "10.96.0.1"}, Status: ipamv1alpha1.IPStatus{IP: "10.70.0.1"}}
	c = fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(cfg, apiServer).Build()
	if got := addresses(c, "milan", "liqo").HomeAPIServer; got.IsValid() {
		t.Errorf("the API server given to pods before the fabric is configured: %s", got)
	}
	cfg.Status = netv1beta1.ConfigurationStatus{
		Remote: &netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{
			Pod: []netv1beta1.CIDR{"10.71.0.0/16"}, External: []netv1beta1.CIDR{"10.72.0.0/16"}}},
		Conditions: []metav1.Condition{{Type: netv1beta1.NetworkCIDRsConfiguredCondition, Status: metav1.ConditionTrue, Reason: "CIDRsConfigured"}},
	}
	c = fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(cfg, apiServer).Build()
	a = addresses(c, "milan", "liqo")
	if got := a.HomeAPIServer; got != netip.MustParseAddr("10.70.0.1") {
		t.Errorf("the API server given to pods: %s, want its IP's 10.70.0.1", got)
	}
	for ip, want := range map[string]string{"10.244.1.2": "10.71.1.2", "192.168.1.1": "192.168.1.1"} {
		if got := a.Local(ip); got != want {
			t.Errorf("Local(%s) = %s, want %s", ip, got, want)
		}
	}
	if got := addresses(c, "paris", "liqo").Local("10.244.1.2"); got != "10.244.1.2" {
		t.Errorf("another provider's address: %s", got)
	}
}

// TestAddressesReadError: a failed read is the caller's error to retry,
// not an untranslated address shown as if the fabric were not there.
func TestAddressesReadError(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("the cache is not synced")
		}}).Build()
	if _, err := (fabric{reader: c, provider: "milan", namespace: "liqo"}).Addresses(context.Background()); err == nil {
		t.Error("no error when the Configuration cannot be read")
	}
}
