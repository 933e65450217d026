package forge

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestService(t *testing.T) {
	local := func(annotations map[string]string) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Annotations: annotations, Labels: map[string]string{"app": "web"}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
				IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}, IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicySingleStack),
				LoadBalancerIP: "1.2.3.4", HealthCheckNodePort: 30001, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal,
				Selector: map[string]string{"app": "web"},
				Ports:    []corev1.ServicePort{{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}}},
		}
	}
	cases := []struct {
		name          string
		in            *corev1.Service
		wantNil       bool
		wantNodePort  int32
		wantHealthChk int32
		wantClusterIP string
	}{
		{name: "cluster-assigned fields cleared", in: local(nil)},
		{name: "node ports kept on request", in: local(map[string]string{ForceRemoteNodePortAnnotation: "true"}),
			wantNodePort: 30080, wantHealthChk: 30001},
		{name: "headless stays headless", in: func() *corev1.Service {
			s := local(nil)
			s.Spec.Type, s.Spec.ClusterIP, s.Spec.ClusterIPs = corev1.ServiceTypeClusterIP, corev1.ClusterIPNone, []string{corev1.ClusterIPNone}
			return s
		}(), wantClusterIP: corev1.ClusterIPNone},
		{name: "the API server's own Service is not reflected", in: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default"}},
			wantNil: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := c.in.DeepCopy()
			got := Service(c.in, "shop-rome", "rome")
			if !equality.Semantic.DeepEqual(before, c.in) {
				t.Fatal("the local Service was modified")
			}
			if c.wantNil {
				if got != nil {
					t.Fatalf("got %+v, want no copy", got)
				}
				return
			}
			if got.Namespace != "shop-rome" || got.Labels["app"] != "web" || !Ours(got, "rome") {
				t.Errorf("meta = %+v", got.ObjectMeta)
			}
			if got.Spec.ClusterIP != c.wantClusterIP || got.Spec.LoadBalancerIP != "" || got.Spec.IPFamilies != nil || got.Spec.IPFamilyPolicy != nil {
				t.Errorf("cluster-specific fields left: %+v", got.Spec)
			}
			if got.Spec.Ports[0].NodePort != c.wantNodePort || got.Spec.HealthCheckNodePort != c.wantHealthChk {
				t.Errorf("node ports %d/%d, want %d/%d", got.Spec.Ports[0].NodePort, got.Spec.HealthCheckNodePort, c.wantNodePort, c.wantHealthChk)
			}
			if got.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal || got.Spec.Selector["app"] != "web" {
				t.Errorf("verbatim fields lost: %+v", got.Spec)
			}
			// What the remote cluster assigns does not count as drift.
			remote := got.DeepCopy()
			remote.Spec.ClusterIP, remote.Spec.ClusterIPs = "10.100.0.7", []string{"10.100.0.7"}
			if c.wantClusterIP == corev1.ClusterIPNone {
				remote.Spec.ClusterIP, remote.Spec.ClusterIPs = corev1.ClusterIPNone, []string{corev1.ClusterIPNone}
			}
			remote.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
			if c.wantNodePort == 0 {
				remote.Spec.Ports[0].NodePort, remote.Spec.HealthCheckNodePort = 31999, 31998
			}
			if !equality.Semantic.DeepEqual(ServiceContent(got), ServiceContent(remote)) {
				t.Errorf("remote assignments seen as drift")
			}
			remote.Spec.Selector = map[string]string{"app": "other"}
			if equality.Semantic.DeepEqual(ServiceContent(got), ServiceContent(remote)) {
				t.Errorf("a changed selector not seen as drift")
			}
		})
	}
}

func TestIngress(t *testing.T) {
	in := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "front", Namespace: "shop"},
		Spec: networkingv1.IngressSpec{IngressClassName: ptr.To("nginx"), Rules: []networkingv1.IngressRule{{Host: "shop.example.com"}}}}
	got := Ingress(in, "shop-rome", "rome")
	if got.Spec.IngressClassName != nil || got.Spec.Rules[0].Host != "shop.example.com" || *in.Spec.IngressClassName != "nginx" {
		t.Errorf("copy = %+v (local class %v)", got.Spec, in.Spec.IngressClassName)
	}
	defaulted := got.DeepCopy()
	defaulted.Spec.IngressClassName = ptr.To("remote-default")
	if !equality.Semantic.DeepEqual(IngressContent(got), IngressContent(defaulted)) {
		t.Error("the remote default class seen as drift")
	}
}

func TestConfigData(t *testing.T) {
	cases := []struct {
		name, local, wantRemote string
	}{
		{"verbatim", "settings", "settings"},
		{"root CA renamed", RootCAConfigMap, RemoteRootCAConfigMap},
		{"a local object named like the renamed root CA", RemoteRootCAConfigMap, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: c.local, Namespace: "shop",
				Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: "{}"}}, Data: map[string]string{"k": "v"}}
			got := ConfigMap(cm, "shop-rome", "rome")
			if c.wantRemote == "" {
				if got != nil {
					t.Fatalf("got %s, want no copy", got.Name)
				}
				return
			}
			if got.Name != c.wantRemote || got.Data["k"] != "v" || got.Annotations != nil || LocalConfigMapName(got.Name) != c.local {
				t.Errorf("copy %s %v %v", got.Name, got.Data, got.Annotations)
			}
		})
	}
	if Secret(&corev1.Secret{Type: corev1.SecretTypeServiceAccountToken}, "shop-rome", "rome") != nil {
		t.Error("a legacy token Secret was reflected")
	}
	s := Secret(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte("c")}}, "shop-rome", "rome")
	if s.Type != corev1.SecretTypeTLS || string(s.Data["tls.crt"]) != "c" {
		t.Errorf("secret copy = %+v", s)
	}
}

func TestPolicy(t *testing.T) {
	skip := map[string]string{SkipReflectionAnnotation: ""}
	allow := map[string]string{AllowReflectionAnnotation: "true"}
	for _, c := range []struct {
		policy      Policy
		annotations map[string]string
		want        bool
	}{
		{DenyList, nil, true}, {DenyList, skip, false}, {DenyList, allow, true},
		{AllowList, nil, false}, {AllowList, allow, true}, {AllowList, skip, false},
		{"", nil, true},
	} {
		if got := c.policy.Selected(c.annotations); got != c.want {
			t.Errorf("%q.Selected(%v) = %v, want %v", c.policy, c.annotations, got, c.want)
		}
	}
}
