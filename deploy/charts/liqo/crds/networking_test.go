package crds_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	ipamv1alpha1 "github.com/liqo-go/liqo/apis/ipam/v1alpha1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
)

// fabricGroups are the API groups of the network fabric; the tests here
// install only their CRDs, so that they fail for the fabric's reasons only.
var fabricGroups = []string{netv1beta1.GroupVersion.Group, ipamv1alpha1.GroupVersion.Group}

// fabricClient installs the fabric's CRDs and returns a client whose scheme
// is the project's (apis.NewScheme), with a fresh namespace for the test.
func fabricClient(ctx context.Context, t *testing.T, namespace string) client.Client {
	t.Helper()
	if err := crds.Install(ctx, cluster.Config, fabricGroups...); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		t.Fatal(err)
	}
	return c
}

// field returns the named field (Spec or Status) of a pointer to a kind.
func field(obj runtime.Object, name string) any {
	return reflect.ValueOf(obj).Elem().FieldByName(name).Interface()
}

// wantRefusal fails unless err is the API server refusing a write with a
// message containing every one of texts.
func wantRefusal(t *testing.T, what string, err error, texts ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted, want a refusal containing %q", what, texts)
		return
	}
	for _, text := range texts {
		if !strings.Contains(err.Error(), text) {
			t.Errorf("%s: err = %v, want a refusal containing %q", what, err, text)
		}
	}
}

func dump(v any) string {
	out, _ := json.Marshal(v)
	return string(out)
}

func publicKey(n int) []byte {
	k := make([]byte, n)
	for i := range k {
		k[i] = byte(i + 1)
	}
	return k
}

// TestFabricTypesRoundTrip writes one object of every fabric kind with the Go
// types, status included, and reads it back unchanged but for the documented
// defaults; then checks that `kubectl get` tells the story of each.
func TestFabricTypesRoundTrip(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := "fabric-roundtrip"
	c := fabricClient(ctx, t, ns)

	when := metav1.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	condition := func(kind string) []metav1.Condition {
		return []metav1.Condition{{Type: kind, Status: metav1.ConditionTrue, Reason: "Done", Message: "done", LastTransitionTime: when, ObservedGeneration: 1}}
	}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"liqo.io/remote-cluster-id": "milan"}}
	}
	udp := corev1.ProtocolUDP

	cases := []struct {
		obj client.Object
		// defaults sets, on the spec sent, what the API server fills in.
		defaults func(client.Object)
		// status sets a status on the object read back.
		status func(client.Object)
	}{
		{
			obj: &netv1beta1.Configuration{ObjectMeta: meta("milan"), Spec: netv1beta1.ConfigurationSpec{
				Local: &netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{Pod: []netv1beta1.CIDR{"10.244.0.0/16"}, External: []netv1beta1.CIDR{"10.70.0.0/16"}}},
				Remote: netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{
					Pod: []netv1beta1.CIDR{"10.244.0.0/16", "fd00:10:244::/56"}, External: []netv1beta1.CIDR{"10.70.0.0/16"},
				}},
			}},
			status: func(o client.Object) {
				o.(*netv1beta1.Configuration).Status = netv1beta1.ConfigurationStatus{
					Remote: &netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{
						Pod: []netv1beta1.CIDR{"10.71.0.0/16", "fd00:10:245::/56"}, External: []netv1beta1.CIDR{"10.72.0.0/16"},
					}},
					Conditions: condition(netv1beta1.NetworkCIDRsConfiguredCondition),
				}
			},
		},
		{
			obj: &netv1beta1.GatewayServer{ObjectMeta: meta("milan"), Spec: netv1beta1.GatewayServerSpec{
				ServerTemplateRef: corev1.ObjectReference{APIVersion: "networking.liqo.io/v1beta1", Kind: "WgGatewayServerTemplate", Name: "wireguard-server", Namespace: "liqo"},
				Endpoint:          netv1beta1.Endpoint{ServiceType: corev1.ServiceTypeNodePort, NodePort: ptr.To[int32](30871)},
			}},
			defaults: func(o client.Object) {
				gws := o.(*netv1beta1.GatewayServer)
				gws.Spec.MTU = netv1beta1.DefaultMTU
				gws.Spec.Endpoint.Port = netv1beta1.DefaultGatewayPort
			},
			status: func(o client.Object) {
				o.(*netv1beta1.GatewayServer).Status = netv1beta1.GatewayServerStatus{
					ServerRef:        &corev1.ObjectReference{Kind: "WgGatewayServer", Name: "milan", Namespace: ns},
					Endpoint:         &netv1beta1.EndpointStatus{Addresses: []netv1beta1.Address{"172.18.0.3", "gw.rome.example"}, Port: 30871, Protocol: &udp},
					SecretRef:        &corev1.ObjectReference{Kind: "Secret", Name: "gw-milan", Namespace: ns},
					InternalEndpoint: &netv1beta1.InternalGatewayEndpoint{IP: ptr.To[netv1beta1.IP]("10.80.0.4"), Node: ptr.To("worker-0")},
					Conditions:       condition(netv1beta1.ReadyCondition),
				}
			},
		},
		{
			obj: &netv1beta1.GatewayClient{ObjectMeta: meta("rome"), Spec: netv1beta1.GatewayClientSpec{
				MTU:      1420,
				Endpoint: netv1beta1.EndpointStatus{Addresses: []netv1beta1.Address{"172.18.0.3"}, Port: 30871, Protocol: &udp},
			}},
			status: func(o client.Object) {
				o.(*netv1beta1.GatewayClient).Status = netv1beta1.GatewayClientStatus{
					ClientRef:        &corev1.ObjectReference{Kind: "WgGatewayClient", Name: "rome", Namespace: ns},
					SecretRef:        &corev1.ObjectReference{Kind: "Secret", Name: "gw-rome", Namespace: ns},
					InternalEndpoint: &netv1beta1.InternalGatewayEndpoint{IP: ptr.To[netv1beta1.IP]("10.80.0.5"), Node: ptr.To("worker-1")},
					Conditions:       condition(netv1beta1.ReadyCondition),
				}
			},
		},
		{
			obj: &netv1beta1.PublicKey{ObjectMeta: meta("milan"), Spec: netv1beta1.PublicKeySpec{PublicKey: publicKey(netv1beta1.PublicKeyLength)}},
			status: func(o client.Object) {
				o.(*netv1beta1.PublicKey).Status.Conditions = condition(netv1beta1.PublicKeyAppliedCondition)
			},
		},
		{
			obj: &netv1beta1.Connection{ObjectMeta: meta("milan"), Spec: netv1beta1.ConnectionSpec{
				Type: netv1beta1.ServerConnection, GatewayRef: corev1.ObjectReference{APIVersion: "networking.liqo.io/v1beta1", Kind: "GatewayServer", Name: "milan", Namespace: ns},
			}},
			status: func(o client.Object) {
				o.(*netv1beta1.Connection).Status = netv1beta1.ConnectionStatus{
					Value: netv1beta1.Connected, Latency: netv1beta1.ConnectionLatency{Value: "1.234ms", Timestamp: when},
					Conditions: condition(netv1beta1.ConnectedCondition),
				}
			},
		},
		{
			obj: &ipamv1alpha1.Network{ObjectMeta: meta("milan-pod-10-244-0-0-16"), Spec: ipamv1alpha1.NetworkSpec{CIDR: "10.244.0.0/16"}},
			status: func(o client.Object) {
				o.(*ipamv1alpha1.Network).Status = ipamv1alpha1.NetworkStatus{CIDR: "10.71.0.0/16", Conditions: condition(ipamv1alpha1.AllocatedCondition)}
			},
		},
		{
			obj: &ipamv1alpha1.IP{ObjectMeta: meta("api-server"), Spec: ipamv1alpha1.IPSpec{
				IP: "10.96.0.1", NetworkRef: &corev1.ObjectReference{Kind: "Network", Name: "external-cidr", Namespace: ns}, Masquerade: ptr.To(true),
				ServiceTemplate: &ipamv1alpha1.ServiceTemplate{
					Metadata: ipamv1alpha1.ServiceTemplateMetadata{Labels: map[string]string{"app": "api"}, Annotations: map[string]string{"note": "kept"}},
					Spec:     corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP}}},
				},
			}},
			defaults: func(o client.Object) {
				// The Service spec of the template is a core ServiceSpec,
				// with that type's own defaults.
				port := &o.(*ipamv1alpha1.IP).Spec.ServiceTemplate.Spec.Ports[0]
				port.Protocol = corev1.ProtocolTCP
			},
			status: func(o client.Object) {
				o.(*ipamv1alpha1.IP).Status = ipamv1alpha1.IPStatus{IP: "10.70.0.5", CIDR: "10.70.0.0/16", Conditions: condition(ipamv1alpha1.AllocatedCondition)}
			},
		},
	}
	for _, tc := range cases {
		kind := reflect.TypeOf(tc.obj).Elem().Name()
		t.Run(kind, func(t *testing.T) {
			want := tc.obj.DeepCopyObject().(client.Object)
			if tc.defaults != nil {
				tc.defaults(want)
			}
			if err := c.Create(ctx, tc.obj); err != nil {
				t.Fatalf("creating: %v", err)
			}
			got := reflect.New(reflect.TypeOf(tc.obj).Elem()).Interface().(client.Object)
			if err := c.Get(ctx, client.ObjectKeyFromObject(tc.obj), got); err != nil {
				t.Fatalf("reading back: %v", err)
			}
			if !equality.Semantic.DeepEqual(field(got, "Spec"), field(want, "Spec")) {
				t.Errorf("spec read back:\n got %s\nwant %s", dump(field(got, "Spec")), dump(field(want, "Spec")))
			}

			tc.status(got)
			wantStatus := field(got.DeepCopyObject(), "Status")
			if err := c.Status().Update(ctx, got); err != nil {
				t.Fatalf("updating the status: %v", err)
			}
			again := reflect.New(reflect.TypeOf(tc.obj).Elem()).Interface().(client.Object)
			if err := c.Get(ctx, client.ObjectKeyFromObject(tc.obj), again); err != nil {
				t.Fatalf("reading back: %v", err)
			}
			if !equality.Semantic.DeepEqual(field(again, "Status"), wantStatus) {
				t.Errorf("status read back:\n got %s\nwant %s", dump(field(again, "Status")), dump(wantStatus))
			}
		})
	}

	// What `kubectl get` shows, as users type it (short names included).
	columns := []struct {
		resource string
		want     []string
	}{
		{"conf", []string{"REMOTE POD CIDR", "REMAPPED POD CIDR", "CONFIGURED", "REMOTE EXTERNAL CIDR", "REMAPPED EXTERNAL CIDR", "CLUSTERID",
			"10.244.0.0/16", "10.71.0.0/16", "10.72.0.0/16", "True", "milan"}},
		{"gws", []string{"SERVICE TYPE", "ADDRESS", "PORT", "READY", "MTU", "NodePort", "172.18.0.3", "gw.rome.example", "30871", "1340", "wireguard-server", "worker-0"}},
		{"gwc", []string{"ADDRESS", "PORT", "READY", "PROTOCOL", "172.18.0.3", "30871", "UDP", "1420", "worker-1"}},
		{"publickeies", []string{"CLUSTERID", "APPLIED", "KEY", "milan", "True", "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="}},
		{"connections", []string{"TYPE", "STATUS", "LATENCY", "Server", "Connected", "1.234ms"}},
		{"networks.ipam.liqo.io", []string{"CIDR", "REMAPPED CIDR", "ALLOCATED", "PREALLOCATED", "10.244.0.0/16", "10.71.0.0/16"}},
		{"ips.ipam.liqo.io", []string{"IP", "REMAPPED IP", "ALLOCATED", "REMAPPED CIDR", "10.96.0.1", "10.70.0.5", "10.70.0.0/16"}},
	}
	for _, col := range columns {
		out, err := kubectl(t, "", "get", col.resource, "-n", ns, "-o", "wide")
		if err != nil {
			t.Errorf("kubectl get %s: %v\n%s", col.resource, err, out)
			continue
		}
		for _, w := range col.want {
			if !strings.Contains(out, w) {
				t.Errorf("kubectl get %s -o wide lacks %q:\n%s", col.resource, w, out)
			}
		}
	}
	// The condition users wait for.
	if out, err := kubectl(t, "", "wait", "-n", ns, "--for=condition=NetworkCIDRsConfigured", "--timeout=10s", "configuration/milan"); err != nil {
		t.Errorf("kubectl wait for NetworkCIDRsConfigured: %v\n%s", err, out)
	}
}

// fabricManifests are the fabric objects as liqoctl and the Helm chart write
// them, in YAML.
const fabricManifests = `apiVersion: ipam.liqo.io/v1alpha1
kind: Network
metadata:
  name: external-cidr
  namespace: fabric-manifests
spec:
  cidr: 10.70.0.0/16
  preAllocated: 1
---
apiVersion: ipam.liqo.io/v1alpha1
kind: IP
metadata:
  name: api-server
  namespace: fabric-manifests
spec:
  ip: 10.96.0.1
  masquerade: true
---
apiVersion: networking.liqo.io/v1beta1
kind: Configuration
metadata:
  name: milan
  namespace: fabric-manifests
  labels:
    liqo.io/remote-cluster-id: milan
spec:
  remote:
    cidr:
      pod: [10.243.0.0/16]
      external: [10.70.0.0/16]
---
apiVersion: networking.liqo.io/v1beta1
kind: GatewayServer
metadata:
  name: milan
  namespace: fabric-manifests
  labels:
    liqo.io/remote-cluster-id: milan
spec:
  mtu: 1340
  endpoint:
    port: 51840
    serviceType: LoadBalancer
    nodePort: 30871
    loadBalancerIP: 172.18.255.200
  serverTemplateRef:
    apiVersion: networking.liqo.io/v1beta1
    kind: WgGatewayServerTemplate
    name: wireguard-server
    namespace: liqo
---
apiVersion: networking.liqo.io/v1beta1
kind: GatewayClient
metadata:
  name: rome
  namespace: fabric-manifests
  labels:
    liqo.io/remote-cluster-id: rome
spec:
  mtu: 1340
  endpoint:
    addresses: [172.18.255.200]
    port: 51840
    protocol: UDP
  clientTemplateRef:
    apiVersion: networking.liqo.io/v1beta1
    kind: WgGatewayClientTemplate
    name: wireguard-client
    namespace: liqo
---
apiVersion: networking.liqo.io/v1beta1
kind: PublicKey
metadata:
  name: milan
  namespace: fabric-manifests
  labels:
    liqo.io/remote-cluster-id: milan
    networking.liqo.io/gateway-resource: "true"
spec:
  publicKey: AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=
---
apiVersion: networking.liqo.io/v1beta1
kind: Connection
metadata:
  name: milan
  namespace: fabric-manifests
spec:
  type: Client
  gatewayRef:
    apiVersion: networking.liqo.io/v1beta1
    kind: GatewayClient
    name: rome
    namespace: fabric-manifests
`

// TestFabricManifests applies the fabric's objects as YAML, as users and
// liqoctl do, twice (the second time changes nothing), and finds them all in
// the liqo category.
func TestFabricManifests(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fabricClient(ctx, t, "fabric-manifests")
	for i := range 2 {
		out, err := kubectl(t, fabricManifests, "apply", "--server-side", "-f", "-")
		if err != nil {
			t.Fatalf("applying the manifests (round %d): %v\n%s", i+1, err, out)
		}
	}
	out, err := kubectl(t, "", "get", "liqo", "-n", "fabric-manifests", "-o", "name")
	if err != nil {
		t.Fatalf("kubectl get liqo: %v\n%s", err, out)
	}
	for _, want := range []string{
		"network.ipam.liqo.io/external-cidr", "ip.ipam.liqo.io/api-server", "configuration.networking.liqo.io/milan",
		"gatewayserver.networking.liqo.io/milan", "gatewayclient.networking.liqo.io/rome", "publickey.networking.liqo.io/milan",
		"connection.networking.liqo.io/milan",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl get liqo lacks %s:\n%s", want, out)
		}
	}
	// Short names, including the plural Liqo spells "publickeies".
	for _, short := range []string{"conf", "gws", "gwserver", "gwc", "gwclient", "pk", "publickeies", "conn", "net"} {
		if out, err := kubectl(t, "", "get", short, "-n", "fabric-manifests"); err != nil || strings.Contains(out, "No resources") {
			t.Errorf("kubectl get %s: %v\n%s", short, err, out)
		}
	}
}
