package foreigncluster

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
)

func identity(ready metav1.ConditionStatus, reason string) *authv1beta1.Identity {
	ns := "liqo-tenant-rome"
	id := &authv1beta1.Identity{Spec: authv1beta1.IdentitySpec{Namespace: &ns,
		AuthParams: authv1beta1.AuthParams{APIServer: "https://milan:6443"}}}
	if reason != "" {
		id.Status.Conditions = []metav1.Condition{{Type: readyCondition, Status: ready, Reason: reason}}
	}
	return id
}

func tenant(ready metav1.ConditionStatus, reason string) *authv1beta1.Tenant {
	return &authv1beta1.Tenant{Status: authv1beta1.TenantStatus{
		Conditions: []metav1.Condition{{Type: readyCondition, Status: ready, Reason: reason}}}}
}

func virtualNode(running bool) offv1beta1.VirtualNode {
	vn := offv1beta1.VirtualNode{ObjectMeta: metav1.ObjectMeta{Name: "milan"}}
	if running {
		vn.Status.Conditions = []offv1beta1.VirtualNodeCondition{{Type: offv1beta1.VirtualKubeletCondition, Status: offv1beta1.RunningVirtualNodeStatus}}
	}
	return vn
}

func node(ready corev1.ConditionStatus) *corev1.Node {
	return &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}}}
}

func configuration(configured metav1.ConditionStatus) *netv1beta1.Configuration {
	return &netv1beta1.Configuration{Status: netv1beta1.ConfigurationStatus{Conditions: []metav1.Condition{
		{Type: netv1beta1.NetworkCIDRsConfiguredCondition, Status: configured, Reason: "X", Message: "y"}}}}
}

func connection(v netv1beta1.ConnectionStatusValue, latency string) netv1beta1.Connection {
	return netv1beta1.Connection{Status: netv1beta1.ConnectionStatus{Value: v, Latency: netv1beta1.ConnectionLatency{Value: latency}}}
}

func TestStatus(t *testing.T) {
	cases := []struct {
		name                       string
		p                          Peering
		role                       corev1beta1.RoleType
		auth, offloading, netSumm  string
		apiServer, remoteNamespace string
		netMessage                 string
	}{
		{name: "nothing yet", p: Peering{}, role: corev1beta1.UnknownRole, auth: Disabled, offloading: Disabled, netSumm: Disabled},
		{name: "provider fully peered",
			p: Peering{Identity: identity(metav1.ConditionTrue, "Authenticated"), VirtualNodes: []offv1beta1.VirtualNode{virtualNode(true)},
				Nodes: map[string]*corev1.Node{"milan": node(corev1.ConditionTrue)}},
			role: corev1beta1.ProviderRole, auth: Healthy, offloading: Healthy, netSumm: Disabled,
			apiServer: "https://milan:6443", remoteNamespace: "liqo-tenant-rome"},
		{name: "provider with its node down",
			p: Peering{Identity: identity(metav1.ConditionTrue, "Authenticated"), VirtualNodes: []offv1beta1.VirtualNode{virtualNode(true)},
				Nodes: map[string]*corev1.Node{"milan": node(corev1.ConditionFalse)}},
			role: corev1beta1.ProviderRole, auth: Healthy, offloading: Unhealthy, netSumm: Disabled,
			apiServer: "https://milan:6443", remoteNamespace: "liqo-tenant-rome"},
		{name: "virtual node still starting",
			p:    Peering{Identity: identity(metav1.ConditionTrue, "Authenticated"), VirtualNodes: []offv1beta1.VirtualNode{virtualNode(false)}},
			role: corev1beta1.ProviderRole, auth: Healthy, offloading: Pending, netSumm: Disabled,
			apiServer: "https://milan:6443", remoteNamespace: "liqo-tenant-rome"},
		{name: "identity rejected by the provider",
			p:    Peering{Identity: identity(metav1.ConditionFalse, "ProviderRejected")},
			role: corev1beta1.ProviderRole, auth: Unhealthy, offloading: Disabled, netSumm: Disabled,
			apiServer: "https://milan:6443", remoteNamespace: "liqo-tenant-rome"},
		{name: "consumer waiting for its certificate",
			p:    Peering{Tenant: tenant(metav1.ConditionFalse, "CertificatePending")},
			role: corev1beta1.ConsumerRole, auth: Pending, offloading: Disabled, netSumm: Disabled},
		{name: "consumer with a quota",
			p:    Peering{Tenant: tenant(metav1.ConditionTrue, "Authenticated"), Quotas: []offv1beta1.Quota{{}}},
			role: corev1beta1.ConsumerRole, auth: Healthy, offloading: Healthy, netSumm: Disabled},
		{name: "both ways",
			p: Peering{Tenant: tenant(metav1.ConditionTrue, "Authenticated"), Identity: identity(metav1.ConditionTrue, "Authenticated"),
				VirtualNodes: []offv1beta1.VirtualNode{virtualNode(true)}, Nodes: map[string]*corev1.Node{"milan": node(corev1.ConditionTrue)},
				Quotas: []offv1beta1.Quota{{}}},
			role: corev1beta1.ConsumerAndProviderRole, auth: Healthy, offloading: Healthy, netSumm: Disabled,
			apiServer: "https://milan:6443", remoteNamespace: "liqo-tenant-rome"},
		{name: "network connected", p: Peering{Configuration: configuration(metav1.ConditionTrue), GatewayClient: &netv1beta1.GatewayClient{},
			Connections: []netv1beta1.Connection{connection(netv1beta1.Connected, "1.2ms")}},
			role: corev1beta1.UnknownRole, auth: Disabled, offloading: Disabled, netSumm: Healthy,
			netMessage: "the tunnel is up, round trip 1.2ms"},
		{name: "network connecting", p: Peering{Configuration: configuration(metav1.ConditionTrue), GatewayServer: &netv1beta1.GatewayServer{},
			Connections: []netv1beta1.Connection{connection(netv1beta1.Connecting, "")}},
			role: corev1beta1.UnknownRole, auth: Disabled, offloading: Disabled, netSumm: Pending},
		{name: "network down", p: Peering{Configuration: configuration(metav1.ConditionTrue), GatewayServer: &netv1beta1.GatewayServer{},
			Connections: []netv1beta1.Connection{connection(netv1beta1.ConnectionError, "9ms")}},
			role: corev1beta1.UnknownRole, auth: Disabled, offloading: Disabled, netSumm: Unhealthy},
		{name: "no free prefix for the peer's CIDRs", p: Peering{Configuration: configuration(metav1.ConditionFalse)},
			role: corev1beta1.UnknownRole, auth: Disabled, offloading: Disabled, netSumm: Unhealthy},
		{name: "configuration not processed", p: Peering{Configuration: &netv1beta1.Configuration{}},
			role: corev1beta1.UnknownRole, auth: Disabled, offloading: Disabled, netSumm: Pending},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := Status(&c.p)
			if c.netMessage != "" && !slices.ContainsFunc(st.Modules.Networking.Conditions, func(x corev1beta1.Condition) bool { return x.Message == c.netMessage }) {
				t.Errorf("networking conditions %+v lack the message %q", st.Modules.Networking.Conditions, c.netMessage)
			}
			got := []string{string(st.Role), st.Modules.Authentication.Summary, st.Modules.Offloading.Summary,
				st.Modules.Networking.Summary, st.APIServerURL, st.TenantNamespace.Remote}
			want := []string{string(c.role), c.auth, c.offloading, c.netSumm, c.apiServer, c.remoteNamespace}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("got %q, want %q (role, auth, offloading, networking, api server, remote namespace)", got, want)
				}
			}
			if st.Modules.Authentication.Enabled != (c.auth != Disabled) || st.Modules.Offloading.Enabled != (c.offloading != Disabled) {
				t.Errorf("enabled flags do not match the summaries: %+v", st.Modules)
			}
		})
	}
}
