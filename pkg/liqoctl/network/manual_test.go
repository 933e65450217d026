package network

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/peering"
	"github.com/liqo-go/liqo/pkg/peering/netsetup"
)

// TestParseCIDR: a CIDR flag is taken in canonical form; host bits set or
// no CIDR at all are refused naming the flag.
func TestParseCIDR(t *testing.T) {
	if c, err := parseCIDR("pod-cidr", "10.244.0.0/16"); err != nil || c != "10.244.0.0/16" {
		t.Errorf("10.244.0.0/16: %q, %v", c, err)
	}
	for in, want := range map[string]string{"10.244.1.0/16": "give 10.244.0.0/16", "ten": "--pod-cidr \"ten\" is not a CIDR"} {
		if _, err := parseCIDR("pod-cidr", in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", in, err)
		}
	}
}

// TestForge: the manual commands make the objects network connect makes,
// labelled with the peer's ID (which the gateways and the IPAM select by).
func TestForge(t *testing.T) {
	o := &Options{Settings: netsetup.Settings{FabricOptions: peering.FabricOptions{MTU: 1400, ServerPort: 51840, ServerNodePort: 31840, ServerLoadBalancer: "203.0.113.7"}}}
	gws := &netv1beta1.GatewayServer{}
	o.settings().ForgeServer(gws, "rome", corev1.ServiceTypeNodePort)
	if gws.Labels[consts.RemoteClusterIDLabel] != "rome" || gws.Spec.MTU != 1400 || gws.Spec.Endpoint.Port != 51840 ||
		*gws.Spec.Endpoint.NodePort != 31840 || gws.Spec.Endpoint.LoadBalancerIP != nil {
		t.Errorf("server %+v", gws)
	}
	pk := &netv1beta1.PublicKey{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"keep": "me"}}}
	netsetup.ForgePublicKey(pk, "rome", []byte("k"))
	if pk.Labels[netv1beta1.GatewayResourceLabel] != "true" || pk.Labels["keep"] != "me" || string(pk.Spec.PublicKey) != "k" {
		t.Errorf("public key %+v", pk)
	}
}

// TestServerLocation: --gw-server-service-location takes Remote or Local.
func TestServerLocation(t *testing.T) {
	o := &Options{Settings: netsetup.Settings{FabricOptions: peering.FabricOptions{ServerServiceType: "NodePort", ServerPort: 51840, MTU: 1340}}}
	for loc, ok := range map[string]bool{"": true, ServerRemote: true, ServerLocal: true, "Elsewhere": false} {
		o.ServerLocation = loc
		if err := o.validate(); (err == nil) != ok {
			t.Errorf("%q: %v", loc, err)
		}
	}
	o.ServerLocation, o.ServerPort = "", 0
	if err := o.validate(); err == nil || !strings.Contains(err.Error(), "--server-port must be a port number, not 0") {
		t.Errorf("port 0: %v", err)
	}
}
