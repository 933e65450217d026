package testnet

import (
	"bytes"
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/liqo-go/liqo/apis"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
)

func virtualNode(name, provider string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{consts.TypeLabel: consts.TypeVirtualNode, consts.RemoteClusterIDLabel: provider}}}
}

// TestVirtualNodesAndInfo: the virtual nodes and the providers they stand
// for; --info's line for a provider with a remapped Configuration and a
// Connection, and for one without a Configuration.
func TestVirtualNodesAndInfo(t *testing.T) {
	ctx := context.Background()
	cfg := &netv1beta1.Configuration{ObjectMeta: metav1.ObjectMeta{Name: "milan", Namespace: consts.TenantNamespace("milan")},
		Spec:   netv1beta1.ConfigurationSpec{Remote: netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{Pod: []netv1beta1.CIDR{"10.244.0.0/16"}, External: []netv1beta1.CIDR{"10.70.0.0/16"}}}},
		Status: netv1beta1.ConfigurationStatus{Remote: &netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{Pod: []netv1beta1.CIDR{"10.71.0.0/16"}, External: []netv1beta1.CIDR{"10.72.0.0/16"}}}}}
	conn := &netv1beta1.Connection{ObjectMeta: metav1.ObjectMeta{Name: "milan", Namespace: consts.TenantNamespace("milan")},
		Status: netv1beta1.ConnectionStatus{Value: netv1beta1.Connected, Latency: netv1beta1.ConnectionLatency{Value: "2ms"}}}
	objs := []client.Object{virtualNode("liqo-naples", "naples"), virtualNode("liqo-milan", "milan"), virtualNode("liqo-milan-2", "milan"),
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker"}}, cfg, conn}
	var out bytes.Buffer
	o := &Options{out: &output.Printer{W: &out}}
	o.Local.Client = fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(objs...).WithStatusSubresource(cfg, conn).Build()
	names, providers, err := o.virtualNodes(ctx)
	if err != nil || strings.Join(names, ",") != "liqo-milan,liqo-milan-2,liqo-naples" || strings.Join(providers, ",") != "milan,naples" {
		t.Errorf("virtual nodes %v, providers %v, %v", names, providers, err)
	}
	o.printInfo(ctx, providers)
	for _, want := range []string{
		"INFO: Provider milan: pod CIDR [10.244.0.0/16], external CIDR [10.70.0.0/16], seen here as [10.71.0.0/16] and [10.72.0.0/16]; tunnel milan Connected (round trip 2ms)\n",
		"INFO: Provider naples: no network Configuration",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--info does not print %q:\n%s", want, out.String())
		}
	}
}
