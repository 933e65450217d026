package shadowendpointslice

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

func TestForgeEndpointSlice(t *testing.T) {
	ses := &offv1beta1.ShadowEndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "web-abcde", Namespace: "liqo-demo-rome", UID: "uid-1",
			Labels: map[string]string{
				discoveryv1.LabelServiceName: "web",
				discoveryv1.LabelManagedBy:   "endpointslice-controller.k8s.io",
				consts.ManagedByLabel:        "someone",
			},
			Annotations: map[string]string{"note": "kept"},
		},
		Spec: offv1beta1.ShadowEndpointSliceSpec{Template: offv1beta1.EndpointSliceTemplate{
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.5"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
				// The provider's names, which a consumer must not use.
				NodeName: ptr.To("provider-worker-0"), Zone: ptr.To("zone-a"),
				Hints:     &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "zone-a"}}},
				TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "someone-else"}}},
			Ports: []discoveryv1.EndpointPort{
				{Port: ptr.To[int32](80)},
				{Name: ptr.To("dns"), Port: ptr.To[int32](53), Protocol: ptr.To(corev1.ProtocolUDP)},
			},
		}},
	}
	s, _ := ForgeEndpointSlice(ses, same)
	ref := metav1.GetControllerOf(s)
	checks := []struct {
		name string
		ok   bool
	}{
		{"name and namespace", s.Name == "web-abcde" && s.Namespace == "liqo-demo-rome"},
		{"service name", s.Labels[discoveryv1.LabelServiceName] == "web"},
		{"endpointslice managed-by overridden", s.Labels[discoveryv1.LabelManagedBy] == ManagedBy},
		{"liqo managed-by overridden", s.Labels[consts.ManagedByLabel] == consts.ManagedByValue},
		{"annotations", s.Annotations["note"] == "kept"},
		{"controller", ref != nil && ref.UID == "uid-1" && ref.Kind == "ShadowEndpointSlice" &&
			ref.APIVersion == "offloading.liqo.io/v1beta1" && ptr.Deref(ref.BlockOwnerDeletion, false)},
		{"address type", s.AddressType == discoveryv1.AddressTypeIPv4},
		{"endpoints", len(s.Endpoints) == 1 && s.Endpoints[0].Addresses[0] == "10.244.0.5" && *s.Endpoints[0].Conditions.Ready},
		{"no provider names", s.Endpoints[0].NodeName == nil && s.Endpoints[0].Zone == nil && s.Endpoints[0].Hints == nil &&
			s.Endpoints[0].TargetRef == nil},
		{"defaulted port", ptr.Deref(s.Ports[0].Name, "x") == "" && ptr.Deref(s.Ports[0].Protocol, "") == corev1.ProtocolTCP},
		{"explicit port", *s.Ports[1].Name == "dns" && *s.Ports[1].Protocol == corev1.ProtocolUDP},
		{"in the cache's selection", EndpointSliceCache().Label.Matches(labels.Set(s.Labels))},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: got %+v", c.name, s)
		}
	}

	// The ShadowEndpointSlice is the cache's: nothing of it may change.
	s.Labels["x"] = "y"
	s.Endpoints[0].Addresses[0] = "changed"
	if ses.Labels["x"] != "" || ses.Spec.Template.Endpoints[0].Addresses[0] != "10.244.0.5" ||
		ses.Spec.Template.Ports[0].Name != nil || ses.Labels[discoveryv1.LabelManagedBy] != "endpointslice-controller.k8s.io" {
		t.Errorf("the ShadowEndpointSlice was modified: %+v", ses)
	}

	// No annotations give none, not an empty map.
	ses.Annotations = nil
	if s, _ := ForgeEndpointSlice(ses, same); s.Annotations != nil {
		t.Errorf("annotations %v, want nil", s.Annotations)
	}

	// Without a translation (no Configuration of the consumer) no address
	// is known to be the consumer's: all are left out, and reported.
	s, dropped := ForgeEndpointSlice(ses, nil)
	if len(s.Endpoints) != 0 || !slices.Equal(dropped, []string{"10.244.0.5"}) {
		t.Errorf("without a translation: endpoints %+v, dropped %v; want none kept and 10.244.0.5 dropped", s.Endpoints, dropped)
	}
}

// same is the translation of a consumer whose CIDRs the provider keeps as
// they are.
func same(a string) (string, bool) { return a, true }
