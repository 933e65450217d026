package gateway

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/test/harness"
)

func tenant(t *testing.T, ctx context.Context, remote string) string {
	t.Helper()
	ns := consts.TenantNamespace(remote)
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cl.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
	return ns
}

func readyCondition(conds []metav1.Condition) *metav1.Condition {
	return meta.FindStatusCondition(conds, netv1beta1.ReadyCondition)
}

func boundToNodes(ctx context.Context, ns, name string) (bool, error) {
	var b rbacv1.ClusterRoleBinding
	if err := cl.Get(ctx, types.NamespacedName{Name: NodesBinding}, &b); err != nil {
		return false, err
	}
	return slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
		return s.Namespace == ns && s.Name == consts.GatewayResourceName(name)
	}), nil
}

// TestServer: a GatewayServer gets a fresh key pair in a Secret of its
// own, a ServiceAccount bound to the gateway rights, a UDP NodePort
// Service and a one-pod Deployment; its status names the node address and
// node port to dial and the pod's address, and turns Ready with the pod;
// the gateway's account may read Nodes until the gateway is deleted.
func TestServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ns := tenant(t, ctx, "milan")
	gws := &netv1beta1.GatewayServer{ObjectMeta: metav1.ObjectMeta{Name: "milan", Namespace: ns,
		Labels: map[string]string{consts.RemoteClusterIDLabel: "milan"}},
		Spec: netv1beta1.GatewayServerSpec{MTU: 1340, Endpoint: netv1beta1.Endpoint{Port: 51840, ServiceType: corev1.ServiceTypeNodePort}}}
	if err := cl.Create(ctx, gws); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(gws)
	harness.Eventually(ctx, t, "the server Ready", func() (bool, error) {
		if err := cl.Get(ctx, key, gws); err != nil {
			return false, err
		}
		c := readyCondition(gws.Status.Conditions)
		return c != nil && c.Status == metav1.ConditionTrue, nil
	})

	var s corev1.Secret
	if err := cl.Get(ctx, types.NamespacedName{Namespace: ns, Name: "gw-milan"}, &s); err != nil {
		t.Fatal(err)
	}
	if err := CheckKeyPair(s.Data[consts.PrivateKeyKey], s.Data[consts.PublicKeyKey]); err != nil {
		t.Fatalf("key Secret: %v", err)
	}
	if gws.Status.SecretRef == nil || gws.Status.SecretRef.Name != "gw-milan" {
		t.Fatalf("status.secretRef = %v", gws.Status.SecretRef)
	}
	var svc corev1.Service
	if err := cl.Get(ctx, types.NamespacedName{Namespace: ns, Name: "gw-milan"}, &svc); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Type != corev1.ServiceTypeNodePort || svc.Spec.Ports[0].Protocol != corev1.ProtocolUDP || svc.Spec.Ports[0].Port != 51840 {
		t.Fatalf("service: type %s ports %+v", svc.Spec.Type, svc.Spec.Ports)
	}
	var pods corev1.PodList
	if err := cl.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{NameLabel: "milan"}); err != nil || len(pods.Items) != 1 {
		t.Fatalf("gateway pods: %d, %v", len(pods.Items), err)
	}
	pod := pods.Items[0]
	var node corev1.Node
	if err := cl.Get(ctx, types.NamespacedName{Name: pod.Spec.NodeName}, &node); err != nil {
		t.Fatal(err)
	}
	addr, _ := nodeAddress(&node)
	ep := gws.Status.Endpoint
	if ep == nil || len(ep.Addresses) != 1 || string(ep.Addresses[0]) != addr || ep.Port != svc.Spec.Ports[0].NodePort {
		t.Fatalf("endpoint %+v, want %s:%d", ep, addr, svc.Spec.Ports[0].NodePort)
	}
	ie := gws.Status.InternalEndpoint
	if ie == nil || string(*ie.IP) != pod.Status.PodIP || *ie.Node != pod.Spec.NodeName {
		t.Fatalf("internal endpoint %+v, pod %s on %s", ie, pod.Status.PodIP, pod.Spec.NodeName)
	}
	args := strings.Join(pod.Spec.Containers[0].Args, " ")
	for _, want := range []string{"--mode=server", "--remote-cluster-id=milan", "--mtu=1340", "--listen-port=51840"} {
		if !strings.Contains(args, want) {
			t.Errorf("gateway args %q lack %s", args, want)
		}
	}
	if sa := pod.Spec.ServiceAccountName; sa != "gw-milan" {
		t.Errorf("service account %q", sa)
	}
	harness.Eventually(ctx, t, "the gateway may read nodes", func() (bool, error) { return boundToNodes(ctx, ns, "milan") })

	// The key pair is kept across reconciles: a change would cut the tunnel.
	gws.Spec.MTU = 1300
	if err := cl.Update(ctx, gws); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the new MTU in the Deployment", func() (bool, error) {
		var d appsv1.Deployment
		if err := cl.Get(ctx, types.NamespacedName{Namespace: ns, Name: "gw-milan"}, &d); err != nil {
			return false, err
		}
		return slices.Contains(d.Spec.Template.Spec.Containers[0].Args, "--mtu=1300"), nil
	})
	var again corev1.Secret
	if err := cl.Get(ctx, types.NamespacedName{Namespace: ns, Name: "gw-milan"}, &again); err != nil {
		t.Fatal(err)
	}
	if string(again.Data[consts.PrivateKeyKey]) != string(s.Data[consts.PrivateKeyKey]) {
		t.Fatal("the key pair changed on an update")
	}

	if err := cl.Delete(ctx, gws); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the binding to drop the deleted gateway", func() (bool, error) {
		bound, err := boundToNodes(ctx, ns, "milan")
		return !bound, err
	})
}

// TestClient: a GatewayClient's pod dials the endpoint of its spec; a
// client naming a key Secret that does not exist, or one holding keys that
// do not pair, is reported and its Secret left as it is.
func TestClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ns := tenant(t, ctx, "rome")
	udp := corev1.ProtocolUDP
	gwc := &netv1beta1.GatewayClient{ObjectMeta: metav1.ObjectMeta{Name: "rome", Namespace: ns},
		Spec: netv1beta1.GatewayClientSpec{Endpoint: netv1beta1.EndpointStatus{
			Addresses: []netv1beta1.Address{"172.31.2.10"}, Port: 31234, Protocol: &udp}}}
	if err := cl.Create(ctx, gwc); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the client Ready", func() (bool, error) {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(gwc), gwc); err != nil {
			return false, err
		}
		c := readyCondition(gwc.Status.Conditions)
		return c != nil && c.Status == metav1.ConditionTrue && gwc.Status.InternalEndpoint != nil, nil
	})
	var d appsv1.Deployment
	if err := cl.Get(ctx, types.NamespacedName{Namespace: ns, Name: "gw-rome"}, &d); err != nil {
		t.Fatal(err)
	}
	args := strings.Join(d.Spec.Template.Spec.Containers[0].Args, " ")
	for _, want := range []string{"--mode=client", "--remote-cluster-id=rome", "--endpoint-addresses=172.31.2.10", "--endpoint-port=31234", "--mtu=1340"} {
		if !strings.Contains(args, want) {
			t.Errorf("gateway args %q lack %s", args, want)
		}
	}
	var svcs corev1.ServiceList
	if err := cl.List(ctx, &svcs, client.InNamespace(ns)); err != nil || len(svcs.Items) != 0 {
		t.Errorf("a client has %d Services (%v), want none", len(svcs.Items), err)
	}

	missing := &netv1beta1.GatewayClient{ObjectMeta: metav1.ObjectMeta{Name: "missing", Namespace: ns},
		Spec: netv1beta1.GatewayClientSpec{SecretRef: corev1.LocalObjectReference{Name: "nope"},
			Endpoint: netv1beta1.EndpointStatus{Addresses: []netv1beta1.Address{"172.31.2.10"}, Port: 1}}}
	bad := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bad-keys", Namespace: ns},
		Data: map[string][]byte{consts.PrivateKeyKey: []byte("short"), consts.PublicKeyKey: []byte("also short")}}
	badRef := &netv1beta1.GatewayClient{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: ns},
		Spec: netv1beta1.GatewayClientSpec{SecretRef: corev1.LocalObjectReference{Name: "bad-keys"},
			Endpoint: netv1beta1.EndpointStatus{Addresses: []netv1beta1.Address{"172.31.2.10"}, Port: 1}}}
	for _, o := range []client.Object{missing, bad, badRef} {
		if err := cl.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for g, reason := range map[*netv1beta1.GatewayClient]string{missing: netv1beta1.GatewayReasonSecretNotFound, badRef: netv1beta1.GatewayReasonKeysInvalid} {
		harness.Eventually(ctx, t, g.Name+" reported "+reason, func() (bool, error) {
			if err := cl.Get(ctx, client.ObjectKeyFromObject(g), g); err != nil {
				return false, err
			}
			c := readyCondition(g.Status.Conditions)
			return c != nil && c.Status == metav1.ConditionFalse && c.Reason == reason, nil
		})
		var d appsv1.Deployment
		if err := cl.Get(ctx, types.NamespacedName{Namespace: ns, Name: consts.GatewayResourceName(g.Name)}, &d); err == nil {
			t.Errorf("gateway %s without usable keys got a Deployment", g.Name)
		}
	}
	var kept corev1.Secret
	if err := cl.Get(ctx, client.ObjectKeyFromObject(bad), &kept); err != nil || string(kept.Data[consts.PrivateKeyKey]) != "short" {
		t.Fatalf("the user's Secret was changed: %v %q", err, kept.Data[consts.PrivateKeyKey])
	}
}
