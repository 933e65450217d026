package crds_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
)

func newClient(t *testing.T) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, corev1beta1.AddToScheme, authv1beta1.AddToScheme, offv1beta1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(cluster.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTypesRoundTrip writes one object of every kind with the Go types and
// reads it back, so the generated schemas and the types agree.
func TestTypesRoundTrip(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := crds.Install(ctx, cluster.Config); err != nil {
		t.Fatal(err)
	}
	c := newClient(t)
	ns := "roundtrip"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	provider := corev1beta1.ClusterID("milan")
	objs := []client.Object{
		&corev1beta1.ForeignCluster{ObjectMeta: metav1.ObjectMeta{Name: "milan"}, Spec: corev1beta1.ForeignClusterSpec{ClusterID: provider}},
		&authv1beta1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "rome", Namespace: ns}, Spec: authv1beta1.TenantSpec{ClusterID: "rome", PublicKey: []byte("key")}},
		&authv1beta1.Identity{ObjectMeta: metav1.ObjectMeta{Name: "milan", Namespace: ns}, Spec: authv1beta1.IdentitySpec{ClusterID: provider, Type: authv1beta1.ControlPlaneIdentity}},
		&authv1beta1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "milan", Namespace: ns}, Spec: authv1beta1.ResourceSliceSpec{
			ProviderClusterID: &provider, Class: authv1beta1.DefaultResourceSliceClass,
			Resources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
		}},
		&offv1beta1.VirtualNode{ObjectMeta: metav1.ObjectMeta{Name: "milan", Namespace: ns}, Spec: offv1beta1.VirtualNodeSpec{ClusterID: provider}},
		&offv1beta1.NamespaceMap{ObjectMeta: metav1.ObjectMeta{Name: "milan", Namespace: ns}, Spec: offv1beta1.NamespaceMapSpec{DesiredMapping: map[string]string{"a": "a-rome"}}},
		&offv1beta1.ShadowPod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: offv1beta1.ShadowPodSpec{Pod: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}},
		&offv1beta1.ShadowEndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web-abcde", Namespace: ns}, Spec: offv1beta1.ShadowEndpointSliceSpec{
			Template: offv1beta1.EndpointSliceTemplate{AddressType: discoveryv1.AddressTypeIPv4,
				Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.7"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
				Ports:     []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](80), Protocol: ptr.To(corev1.ProtocolTCP)}}},
		}},
		&offv1beta1.Quota{ObjectMeta: metav1.ObjectMeta{Name: "rome", Namespace: ns}, Spec: offv1beta1.QuotaSpec{
			User: "liqo-rome", LimitsEnforcement: offv1beta1.HardLimitsEnforcement,
			Resources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
		}},
		&offv1beta1.NamespaceOffloading{ObjectMeta: metav1.ObjectMeta{Name: "offloading", Namespace: ns}},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Errorf("creating %T: %v", o, err)
			continue
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			t.Errorf("reading %T back: %v", o, err)
		}
	}

	// Status and printcolumns of a ForeignCluster.
	fc := objs[0].(*corev1beta1.ForeignCluster)
	fc.Status.Role = corev1beta1.ProviderRole
	fc.Status.Modules.Authentication = corev1beta1.Module{Enabled: true, Summary: "Healthy"}
	if err := c.Status().Update(ctx, fc); err != nil {
		t.Fatalf("updating the ForeignCluster status: %v", err)
	}
	out, err := kubectl(t, "", "get", "foreignclusters")
	if err != nil || !strings.Contains(out, "AUTHENTICATION") || !strings.Contains(out, "Provider") || !strings.Contains(out, "Healthy") {
		t.Errorf("kubectl get foreignclusters: %v\n%s", err, out)
	}

	// ClusterIDs are immutable and must be DNS labels.
	fc.Spec.ClusterID = "naples"
	if err := c.Update(ctx, fc); err == nil || !strings.Contains(err.Error(), "immutable") {
		t.Errorf("changing a ForeignCluster's clusterID: got %v, want an immutability error", err)
	}
	bad := &corev1beta1.ForeignCluster{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: corev1beta1.ForeignClusterSpec{ClusterID: "Not_A_Label"}}
	if err := c.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "spec.clusterID") {
		t.Errorf("creating a ForeignCluster with an invalid clusterID: got %v", err)
	}
}
