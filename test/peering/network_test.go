package peering

import (
	"bytes"
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/liqo-go/liqo/apis"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/test/harness"
)

// TestNetworkConnect runs liqoctl network connect between naples (gateway
// client) and milan (gateway server), both with the same pod CIDR, on
// simulated nodes: everything up to the tunnel itself (which needs real
// nodes, see test/networking). Each side gets the other's CIDRs remapped,
// a gateway with the other's public key; disconnect removes the gateways
// and keys but keeps the mapping; reset removes the mapping too. With
// --gw-server-service-location Local the gateways swap clusters.
func TestNetworkConnect(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	naples, milan := newClient(t, "naples"), newClient(t, "milan")
	// The tenant namespaces are this test's unless a peering made them.
	for _, x := range []struct {
		c  client.Client
		ns string
	}{{naples, consts.TenantNamespace("milan")}, {milan, consts.TenantNamespace("naples")}} {
		if err := x.c.Get(ctx, types.NamespacedName{Name: x.ns}, &corev1.Namespace{}); apierrors.IsNotFound(err) {
			t.Cleanup(func() {
				_ = x.c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: x.ns}})
			})
		}
	}
	args := []string{"--kubeconfig", kubeconfigs["naples"], "--remote-kubeconfig", kubeconfigs["milan"], "--timeout", "90s"}
	out, err := run(ctx, append([]string{"network", "connect", "--server-service-type", "NodePort", "--wait=false"}, args...)...)
	if err != nil {
		t.Fatalf("network connect: %v\n%s", err, out)
	}
	for _, step := range []string{"remapped", "Gateway server ready", "Gateway client ready", "Public keys exchanged"} {
		if !strings.Contains(out, step) {
			t.Errorf("the output does not say %q:\n%s", step, out)
		}
	}

	// Each side reaches the other's pods (10.244.0.0/16, like its own)
	// at a remapped CIDR outside its own.
	own := netip.MustParsePrefix("10.244.0.0/16")
	for _, x := range []struct {
		c      client.Client
		ns, id string
	}{{naples, consts.TenantNamespace("milan"), "milan"}, {milan, consts.TenantNamespace("naples"), "naples"}} {
		var cfg netv1beta1.Configuration
		if err := x.c.Get(ctx, types.NamespacedName{Namespace: x.ns, Name: x.id}, &cfg); err != nil {
			t.Fatal(err)
		}
		if cfg.Status.Remote == nil || len(cfg.Status.Remote.CIDR.Pod) != 1 {
			t.Fatalf("Configuration %s/%s: status %+v", x.ns, x.id, cfg.Status)
		}
		if p := netip.MustParsePrefix(string(cfg.Status.Remote.CIDR.Pod[0])); p.Overlaps(own) || p.Bits() != 16 {
			t.Errorf("Configuration %s/%s: the peer's pods at %s, want a /16 outside %s", x.ns, x.id, p, own)
		}
	}

	// Each gateway holds the other's public key.
	var gws netv1beta1.GatewayServer
	var gwc netv1beta1.GatewayClient
	if err := milan.Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace("naples"), Name: "naples"}, &gws); err != nil {
		t.Fatal(err)
	}
	if err := naples.Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace("milan"), Name: "milan"}, &gwc); err != nil {
		t.Fatal(err)
	}
	if gws.Status.Endpoint == nil || gwc.Spec.Endpoint.Port != gws.Status.Endpoint.Port || len(gwc.Spec.Endpoint.Addresses) == 0 || gwc.Spec.Endpoint.Addresses[0] != gws.Status.Endpoint.Addresses[0] {
		t.Errorf("the client dials %+v, the server publishes %+v", gwc.Spec.Endpoint, gws.Status.Endpoint)
	}
	keysExchanged(ctx, t, naples, milan, &gws, &gwc)

	// Running it again changes nothing and succeeds.
	if out, err := run(ctx, append([]string{"network", "connect", "--server-service-type", "NodePort", "--wait=false"}, args...)...); err != nil {
		t.Fatalf("network connect again: %v\n%s", err, out)
	}

	if out, err := run(ctx, append([]string{"network", "disconnect"}, args...)...); err != nil {
		t.Fatalf("network disconnect: %v\n%s", err, out)
	}
	gone := func(c client.Client, obj client.Object) {
		t.Helper()
		harness.Eventually(ctx, t, "deletion of "+obj.GetName(), func() (bool, error) {
			err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	}
	gone(milan, &netv1beta1.GatewayServer{ObjectMeta: metav1.ObjectMeta{Namespace: consts.TenantNamespace("naples"), Name: "naples"}})
	gone(naples, &netv1beta1.GatewayClient{ObjectMeta: metav1.ObjectMeta{Namespace: consts.TenantNamespace("milan"), Name: "milan"}})
	gone(naples, &netv1beta1.PublicKey{ObjectMeta: metav1.ObjectMeta{Namespace: consts.TenantNamespace("milan"), Name: "milan"}})
	if err := naples.Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace("milan"), Name: "milan"}, &netv1beta1.Configuration{}); err != nil {
		t.Errorf("disconnect removed the Configuration (the mapping must stay): %v", err)
	}

	if out, err := run(ctx, append([]string{"network", "reset"}, args...)...); err != nil {
		t.Fatalf("network reset: %v\n%s", err, out)
	}
	gone(naples, &netv1beta1.Configuration{ObjectMeta: metav1.ObjectMeta{Namespace: consts.TenantNamespace("milan"), Name: "milan"}})
	gone(milan, &netv1beta1.Configuration{ObjectMeta: metav1.ObjectMeta{Namespace: consts.TenantNamespace("naples"), Name: "naples"}})

	// Bad flags fail before anything is touched.
	if out, err := run(ctx, append([]string{"network", "connect", "--server-service-type", "ExternalName"}, args...)...); err == nil || !strings.Contains(err.Error(), "--server-service-type") {
		t.Errorf("a bad service type: %v\n%s", err, out)
	}

	// --gw-server-service-location Local: the local cluster (naples) runs
	// the gateway server, the remote one (milan) dials it.
	out, err = run(ctx, append([]string{"network", "connect", "--server-service-type", "NodePort", "--wait=false", "--gw-server-service-location", "Local"}, args...)...)
	if err != nil {
		t.Fatalf("network connect --gw-server-service-location Local: %v\n%s", err, out)
	}
	if err := naples.Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace("milan"), Name: "milan"}, &netv1beta1.GatewayServer{}); err != nil {
		t.Errorf("no gateway server on naples: %v", err)
	}
	if err := milan.Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace("naples"), Name: "naples"}, &netv1beta1.GatewayClient{}); err != nil {
		t.Errorf("no gateway client on milan: %v", err)
	}
	if err := milan.Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace("naples"), Name: "naples"}, &netv1beta1.GatewayServer{}); !apierrors.IsNotFound(err) {
		t.Errorf("a gateway server on milan: %v", err)
	}
	if out, err := run(ctx, append([]string{"network", "reset", "--wait"}, args...)...); err != nil {
		t.Fatalf("network reset --wait: %v\n%s", err, out)
	}
	if err := naples.Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace("milan"), Name: "milan"}, &netv1beta1.GatewayServer{}); !apierrors.IsNotFound(err) {
		t.Errorf("reset --wait returned with naples's gateway server there: %v", err)
	}
}

func newClient(t *testing.T, name string) client.Client {
	t.Helper()
	c, err := client.New(tb.Cluster(name).Config, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestManualNetworkFabric builds, between naples (gateway client) and milan
// (gateway server), the fabric network connect builds, with the commands
// each administrator runs on their own cluster only: create gatewayserver
// (which prints the create gatewayclient line for the other side),
// generate configuration applied on the other cluster and create
// configuration from its output, create gatewayclient, generate publickey
// applied on the other cluster; then delete publickey finds its object
// without --remote-cluster-id, and network reset --wait removes the rest.
// Two commands are written as Liqo's liqoctl takes them, with -n naming the
// peer's tenant namespace and --liqo-namespace where Liqo runs.
func TestManualNetworkFabric(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	naples, milan := newClient(t, "naples"), newClient(t, "milan")
	// The tenant namespaces are this test's unless a peering made them;
	// one an earlier test is deleting is waited for.
	for _, x := range []struct {
		c  client.Client
		ns string
	}{{naples, consts.TenantNamespace("milan")}, {milan, consts.TenantNamespace("naples")}} {
		var ns corev1.Namespace
		harness.Eventually(ctx, t, "namespace "+x.ns+" not being deleted", func() (bool, error) {
			err := x.c.Get(ctx, types.NamespacedName{Name: x.ns}, &ns)
			return apierrors.IsNotFound(err) || (err == nil && ns.DeletionTimestamp.IsZero()), client.IgnoreNotFound(err)
		})
		if err := x.c.Get(ctx, types.NamespacedName{Name: x.ns}, &ns); apierrors.IsNotFound(err) {
			t.Cleanup(func() {
				_ = x.c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: x.ns}})
			})
		}
	}
	on := func(cluster string, args ...string) string {
		t.Helper()
		out, err := run(ctx, append(args, "--kubeconfig", kubeconfigs[cluster])...)
		if err != nil {
			t.Fatalf("on %s, liqoctl %s: %v\n%s", cluster, strings.Join(args, " "), err, out)
		}
		return out
	}
	t.Cleanup(func() {
		_, _ = run(context.Background(), "network", "reset", "--kubeconfig", kubeconfigs["naples"], "--remote-kubeconfig", kubeconfigs["milan"], "--timeout", "60s")
	})

	out := on("milan", "create", "gatewayserver", "--remote-cluster-id", "naples", "--service-type", "NodePort", "--timeout", "90s")
	i := strings.Index(out, "liqoctl create gatewayclient ")
	if i < 0 {
		t.Fatalf("create gatewayserver does not print the client's command:\n%s", out)
	}
	clientLine := strings.Fields(strings.SplitN(out[i:], "\n", 2)[0])

	// naples's CIDRs, applied on milan as printed.
	kubectl(t, "milan", on("naples", "generate", "configuration"), "apply", "-f", "-")
	harness.Eventually(ctx, t, "milan to remap naples's CIDRs", func() (bool, error) {
		var cfg netv1beta1.Configuration
		err := milan.Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace("naples"), Name: "naples"}, &cfg)
		return err == nil && cfg.Status.Remote != nil && len(cfg.Status.Remote.CIDR.Pod) == 1, client.IgnoreNotFound(err)
	})
	// milan's CIDRs, given to naples through create configuration.
	var milanCfg netv1beta1.Configuration
	if err := yaml.Unmarshal([]byte(on("milan", "generate", "configuration")), &milanCfg); err != nil {
		t.Fatal(err)
	}
	if milanCfg.Namespace != consts.TenantNamespace("milan") || len(milanCfg.Spec.Remote.CIDR.Pod) != 1 || len(milanCfg.Spec.Remote.CIDR.External) != 1 {
		t.Fatalf("milan's generated Configuration: %+v", milanCfg)
	}
	out = on("naples", "create", "configuration", "--remote-cluster-id", "milan", "--pod-cidr", string(milanCfg.Spec.Remote.CIDR.Pod[0]),
		"--external-cidr", string(milanCfg.Spec.Remote.CIDR.External[0]), "-n", consts.TenantNamespace("milan"), "--liqo-namespace", consts.DefaultNamespace)
	if !strings.Contains(out, "This cluster reaches milan's pods at") {
		t.Errorf("create configuration:\n%s", out)
	}

	on("naples", append(clientLine[1:], "--timeout", "90s")...)
	kubectl(t, "naples", on("milan", "generate", "publickey", "--gateway-type", "server", "--remote-cluster-id", "naples"), "apply", "-f", "-")
	kubectl(t, "milan", on("naples", "generate", "publickey", "--gateway-type", "client", "--gateway-name", "milan", "-n", consts.TenantNamespace("milan")), "apply", "-f", "-")

	// The objects are those network connect makes: the client dials the
	// server's endpoint, each side holds the other gateway's key.
	var gws netv1beta1.GatewayServer
	var gwc netv1beta1.GatewayClient
	if err := milan.Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace("naples"), Name: "naples"}, &gws); err != nil {
		t.Fatal(err)
	}
	if err := naples.Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace("milan"), Name: "milan"}, &gwc); err != nil {
		t.Fatal(err)
	}
	if gws.Status.Endpoint == nil || gwc.Spec.Endpoint.Port != gws.Status.Endpoint.Port || len(gwc.Spec.Endpoint.Addresses) == 0 ||
		gwc.Spec.Endpoint.Addresses[0] != gws.Status.Endpoint.Addresses[0] || gwc.Labels[consts.RemoteClusterIDLabel] != "milan" {
		t.Errorf("the client %+v dials %+v, the server publishes %+v", gwc.Labels, gwc.Spec.Endpoint, gws.Status.Endpoint)
	}
	keysExchanged(ctx, t, naples, milan, &gws, &gwc)

	out = on("naples", "delete", "publickey", "milan")
	if !strings.Contains(out, "PublicKey liqo-tenant-milan/milan deleted") {
		t.Errorf("delete publickey:\n%s", out)
	}
	if err := naples.Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace("milan"), Name: "milan"}, &netv1beta1.PublicKey{}); !apierrors.IsNotFound(err) {
		t.Errorf("the PublicKey is still there: %v", err)
	}

	if out, err := run(ctx, "network", "reset", "--wait", "--kubeconfig", kubeconfigs["naples"], "--remote-kubeconfig", kubeconfigs["milan"], "--timeout", "90s"); err != nil {
		t.Fatalf("network reset --wait: %v\n%s", err, out)
	}
	for _, x := range []struct {
		c   client.Client
		obj client.Object
	}{
		{milan, &netv1beta1.GatewayServer{ObjectMeta: metav1.ObjectMeta{Namespace: consts.TenantNamespace("naples"), Name: "naples"}}},
		{naples, &netv1beta1.GatewayClient{ObjectMeta: metav1.ObjectMeta{Namespace: consts.TenantNamespace("milan"), Name: "milan"}}},
		{naples, &netv1beta1.Configuration{ObjectMeta: metav1.ObjectMeta{Namespace: consts.TenantNamespace("milan"), Name: "milan"}}},
		{milan, &netv1beta1.Configuration{ObjectMeta: metav1.ObjectMeta{Namespace: consts.TenantNamespace("naples"), Name: "naples"}}},
		{milan, &netv1beta1.PublicKey{ObjectMeta: metav1.ObjectMeta{Namespace: consts.TenantNamespace("naples"), Name: "naples"}}},
	} {
		// --wait returned once they were gone: no waiting here.
		if err := x.c.Get(ctx, client.ObjectKeyFromObject(x.obj), x.obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s/%s is still there after reset --wait: %v", x.obj, x.obj.GetNamespace(), x.obj.GetName(), err)
		}
	}
}

// keysExchanged checks that each of naples (the gateway client's cluster)
// and milan (the server's) holds a PublicKey with the other gateway's key.
func keysExchanged(ctx context.Context, t *testing.T, naples, milan client.Client, gws *netv1beta1.GatewayServer, gwc *netv1beta1.GatewayClient) {
	t.Helper()
	for _, x := range []struct {
		c, keyOwner client.Client
		ns, id      string
		ref         *corev1.ObjectReference
		ownerNS     string
	}{
		{naples, milan, consts.TenantNamespace("milan"), "milan", gws.Status.SecretRef, consts.TenantNamespace("naples")},
		{milan, naples, consts.TenantNamespace("naples"), "naples", gwc.Status.SecretRef, consts.TenantNamespace("milan")},
	} {
		var pk netv1beta1.PublicKey
		if err := x.c.Get(ctx, types.NamespacedName{Namespace: x.ns, Name: x.id}, &pk); err != nil {
			t.Fatal(err)
		}
		var sec corev1.Secret
		if err := x.keyOwner.Get(ctx, types.NamespacedName{Namespace: x.ownerNS, Name: x.ref.Name}, &sec); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(pk.Spec.PublicKey, sec.Data[consts.PublicKeyKey]) || pk.Labels[netv1beta1.GatewayResourceLabel] != "true" {
			t.Errorf("PublicKey %s/%s does not hold the peer gateway's key", x.ns, x.id)
		}
	}
}
