package forge

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/consts"
)

// localSlice is an EndpointSlice as the consumer's EndpointSlice controller
// writes it for Service web: one replica on a local node, one on the
// virtual node milan, one on the virtual node naples.
func localSlice() *discoveryv1.EndpointSlice {
	endpoint := func(ip, node, zone string) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{
			Addresses:  []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)},
			Hostname:   ptr.To("web-" + node),
			NodeName:   ptr.To(node),
			Zone:       ptr.To(zone),
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: "liqo-demo", Name: "web-" + node, UID: types.UID("uid-" + node)},
			Hints:      &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: zone}}},
		}
	}
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "web-abcde", Namespace: "liqo-demo",
			Labels: map[string]string{
				discoveryv1.LabelServiceName: "web",
				discoveryv1.LabelManagedBy:   "endpointslice-controller.k8s.io",
				"app":                        "web",
			},
			Annotations: map[string]string{corev1.EndpointsLastChangeTriggerTime: "2026-01-01T00:00:00Z"},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{
			endpoint("10.244.0.5", "worker-0", "south"),
			endpoint("10.244.0.9", "milan", "virtual"),
			endpoint("10.244.1.4", "naples", "virtual"),
		},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
}

func TestShadowEndpointSlice(t *testing.T) {
	// want is what every reflected endpoint of localSlice becomes.
	want := func(ip, host string) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{
			Addresses:  []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)},
			Hostname:   ptr.To(host),
		}
	}
	cases := []struct {
		name          string
		edit          func(*discoveryv1.EndpointSlice)
		providerNodes []string
		// wantNil: the slice is not reflected. Otherwise the endpoints.
		wantNil   bool
		endpoints []discoveryv1.Endpoint
	}{
		{
			name: "the provider's own replica is dropped", providerNodes: []string{"milan"},
			endpoints: []discoveryv1.Endpoint{want("10.244.0.5", "web-worker-0"), want("10.244.1.4", "web-naples")},
		},
		{
			// Two virtual nodes of one provider: the copy is the same
			// whichever forges it (it once listed the replicas on the other).
			name: "the replicas on every node of the provider are dropped", providerNodes: []string{"milan", "naples"},
			endpoints: []discoveryv1.Endpoint{want("10.244.0.5", "web-worker-0")},
		},
		{
			name: "no provider node keeps every endpoint",
			endpoints: []discoveryv1.Endpoint{
				want("10.244.0.5", "web-worker-0"), want("10.244.0.9", "web-milan"), want("10.244.1.4", "web-naples"),
			},
		},
		{
			name: "endpoints without a node name are kept", providerNodes: []string{"milan"},
			edit: func(s *discoveryv1.EndpointSlice) {
				s.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.5"}}}
			},
			endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.5"}}},
		},
		{
			name: "FQDN addresses are kept",
			edit: func(s *discoveryv1.EndpointSlice) {
				s.AddressType = discoveryv1.AddressTypeFQDN
				s.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.5.example.com"}}}
			},
			endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.5.example.com"}}},
		},
		{
			name: "only replicas on the provider: nothing to reflect", providerNodes: []string{"milan"},
			edit:    func(s *discoveryv1.EndpointSlice) { s.Endpoints = s.Endpoints[1:2] },
			wantNil: true,
		},
		{
			name:    "no endpoints at all",
			edit:    func(s *discoveryv1.EndpointSlice) { s.Endpoints = nil },
			wantNil: true,
		},
		{
			name:    "a slice of no Service",
			edit:    func(s *discoveryv1.EndpointSlice) { delete(s.Labels, discoveryv1.LabelServiceName) },
			wantNil: true,
		},
		{
			name: "the API server's kubernetes Service",
			edit: func(s *discoveryv1.EndpointSlice) {
				s.Namespace = metav1.NamespaceDefault
				s.Labels[discoveryv1.LabelServiceName] = "kubernetes"
			},
			wantNil: true,
		},
		{
			// Its Service is reflected like any other (see Service).
			name: "a user's Service named kubernetes elsewhere",
			edit: func(s *discoveryv1.EndpointSlice) { s.Labels[discoveryv1.LabelServiceName] = "kubernetes" },
			endpoints: []discoveryv1.Endpoint{
				want("10.244.0.5", "web-worker-0"), want("10.244.0.9", "web-milan"), want("10.244.1.4", "web-naples"),
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			local := localSlice()
			if tc.edit != nil {
				tc.edit(local)
			}
			before := local.DeepCopy()
			got := ShadowEndpointSlice(local, "liqo-demo-rome", "rome", tc.providerNodes)
			if !equality.Semantic.DeepEqual(local, before) {
				t.Errorf("the local slice was modified:\n got %+v\nwant %+v", local, before)
			}
			if tc.wantNil {
				if got != nil {
					t.Errorf("got %+v, want nil", got)
				}
				return
			}
			if got == nil {
				t.Fatal("got nil, want a ShadowEndpointSlice")
			}
			if !equality.Semantic.DeepEqual(got.Spec.Template.Endpoints, tc.endpoints) {
				t.Errorf("endpoints:\n got %+v\nwant %+v", got.Spec.Template.Endpoints, tc.endpoints)
			}
			if got.Spec.Template.AddressType != local.AddressType {
				t.Errorf("address type %s, want %s", got.Spec.Template.AddressType, local.AddressType)
			}
		})
	}
}

// TestShadowEndpointSliceMeta checks what does not depend on the
// endpoints: metadata, ports, and that the result shares nothing with the
// local slice.
func TestShadowEndpointSliceMeta(t *testing.T) {
	local := localSlice()
	local.Annotations["note"] = "kept"
	got := ShadowEndpointSlice(local, "liqo-demo-rome", "rome", []string{"milan"})
	checks := []struct {
		name string
		ok   bool
	}{
		{"name and namespace", got.Name == "web-abcde" && got.Namespace == "liqo-demo-rome"},
		{"service name kept", got.Labels[discoveryv1.LabelServiceName] == "web"},
		{"user label kept", got.Labels["app"] == "web"},
		{"local managed-by dropped", got.Labels[discoveryv1.LabelManagedBy] == ""},
		{"origin label", got.Labels[consts.OriginClusterIDLabel] == "rome"},
		{"liqo managed-by label", got.Labels[consts.ManagedByLabel] == consts.ManagedByValue},
		{"trigger time dropped", got.Annotations[corev1.EndpointsLastChangeTriggerTime] == ""},
		{"user annotation kept", got.Annotations["note"] == "kept"},
		{"ports kept", equality.Semantic.DeepEqual(got.Spec.Template.Ports, local.Ports)},
		{"content is the template", equality.Semantic.DeepEqual(ShadowEndpointSliceContent(got), got.Spec.Template)},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: got %+v", c.name, got)
		}
	}

	// Without other annotations, none are left: an empty map would differ
	// from what the provider returns and cost an update per comparison.
	delete(local.Annotations, "note")
	if got := ShadowEndpointSlice(local, "liqo-demo-rome", "rome", nil); got.Annotations != nil {
		t.Errorf("annotations %v, want none", got.Annotations)
	}

	// The result must not alias the local slice, which lives in a cache.
	got.Spec.Template.Endpoints[0].Addresses[0] = "changed"
	*got.Spec.Template.Endpoints[0].Conditions.Ready = false
	*got.Spec.Template.Endpoints[0].Hostname = "changed"
	*got.Spec.Template.Ports[0].Port = 1
	if fresh := localSlice(); !equality.Semantic.DeepEqual(local.Endpoints, fresh.Endpoints) || !equality.Semantic.DeepEqual(local.Ports, fresh.Ports) {
		t.Errorf("the ShadowEndpointSlice shares memory with the local slice")
	}
}
