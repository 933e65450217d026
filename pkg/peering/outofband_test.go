package peering

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

func validRequest() OutOfBandRequest {
	return OutOfBandRequest{ID: "r1", AuthURL: "https://milan.example:6443", ClusterID: "milan", Token: "Q0E.tok",
		CreateResourceSlice: true, CreateVirtualNode: true,
		Resources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), "nvidia.com/gpu": resource.MustParse("1")}}
}

func TestOutOfBandRequestRoundTrip(t *testing.T) {
	want := validRequest()
	want.ProxyURL = "socks5://proxy.rome:1080"
	want.Network = &FabricOptions{ServerServiceType: "NodePort", ServiceTypeChosen: true, ServerNodePort: 30001, MTU: 1340}
	s, err := want.Secret()
	if err != nil {
		t.Fatal(err)
	}
	if s.Namespace != consts.TenantNamespace("milan") || s.Name != OutOfBandRequestSecret ||
		s.Labels[OutOfBandRequestLabel] != "true" || s.Labels[consts.ManagedByLabel] != consts.ManagedByValue {
		t.Errorf("the Secret is not where or how the manager looks for it: %s/%s %v", s.Namespace, s.Name, s.Labels)
	}
	got, err := ParseOutOfBandRequest(s)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != want.ID || got.AuthURL != want.AuthURL || got.ClusterID != want.ClusterID || got.Token != want.Token ||
		got.ProxyURL != want.ProxyURL || !got.CreateResourceSlice || !got.CreateVirtualNode || FormatResources(got.Resources) != FormatResources(want.Resources) ||
		got.Network == nil || *got.Network != *want.Network {
		t.Errorf("round trip: got %+v, want %+v", got, want)
	}
}

func TestParseOutOfBandRequestRefuses(t *testing.T) {
	for _, c := range []struct {
		name, want string
		edit       func(*corev1.Secret)
	}{
		{"no ID", "request ID", func(s *corev1.Secret) { delete(s.Annotations, OutOfBandRequestIDKey) }},
		{"http URL", "https://", func(s *corev1.Secret) { s.Data["auth-url"] = []byte("http://milan:6443") }},
		{"bad cluster ID", "cluster ID", func(s *corev1.Secret) { s.Data["cluster-id"] = []byte("Milan_1") }},
		{"no token", "token", func(s *corev1.Secret) { delete(s.Data, "auth-token") }},
		{"bad proxy", "proxy", func(s *corev1.Secret) { s.Data["proxy-url"] = []byte("ftp://p:21") }},
		{"bad boolean", "create-virtual-node", func(s *corev1.Secret) { s.Data["create-virtual-node"] = []byte("maybe") }},
		{"negative resource", "negative", func(s *corev1.Secret) { s.Data["resources"] = []byte(`{"cpu":"-1"}`) }},
		{"garbled resources", "resources", func(s *corev1.Secret) { s.Data["resources"] = []byte(`{`) }},
		{"another tenant namespace", "tenant namespace", func(s *corev1.Secret) { s.Namespace = consts.TenantNamespace("naples") }},
		{"garbled network", "network", func(s *corev1.Secret) { s.Data["network"] = []byte(`{`) }},
		{"bad Service type", "Service type", func(s *corev1.Secret) { s.Data["network"] = []byte(`{"serverServiceType":"ExternalName"}`) }},
		{"bad port", "not a port", func(s *corev1.Secret) {
			s.Data["network"] = []byte(`{"serverServiceType":"NodePort","serverNodePort":70000}`)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := validRequest().Secret()
			if err != nil {
				t.Fatal(err)
			}
			c.edit(s)
			if _, err := ParseOutOfBandRequest(s); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error naming %q", err, c.want)
			}
		})
	}
}

func TestOutOfBandStateIsAboutTheRequest(t *testing.T) {
	cond := corev1beta1.Condition{Type: OutOfBandCondition, Status: corev1beta1.ErrorStatus, Reason: ReasonUntrustedServer}
	fc := &corev1beta1.ForeignCluster{ObjectMeta: metav1.ObjectMeta{Name: "milan", Annotations: map[string]string{OutOfBandRequestIDKey: "old"}},
		Status: corev1beta1.ForeignClusterStatus{Conditions: []corev1beta1.Condition{cond}}}
	if c := OutOfBandState(fc, "new"); c != nil {
		t.Errorf("a condition about an earlier request was taken for this one: %+v", c)
	}
	if c := OutOfBandState(fc, "old"); c == nil || c.Reason != ReasonUntrustedServer {
		t.Errorf("the condition about the request was not found: %+v", c)
	}
	fc.Status.Conditions = nil
	if c := OutOfBandState(fc, "old"); c != nil {
		t.Errorf("no condition, yet found %+v", c)
	}
}
